package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"iopred/analyzer/centersim"
	"iopred/analyzer/iosi"
	"iopred/analyzer/iosi/iosiplot"
	"iopred/analyzer/serverlog"
	"iopred/internal/mpi"
	"iopred/internal/msgcheck"
	"iopred/internal/safefile"
)

func init() {
	register(&command{
		name: "signature",
		usage: "--lmt SRC|--store DIR|... --jobs FILE (--app USER/NAME/NODES | --list-apps | --all DIR [--truth FILE] [--mpi]) " +
			"[--from T] [--to T] [--method iosi|dtw] [--paper] [--json] [--plot FILE.svg|.png|.html]",
		summary: "I/O signature of an application from server-side throughput and job logs (IOSI)",
		run:     runSignature,
	})
}

type signatureFlags struct {
	log      serverlog.Flags
	app      string
	from, to string
	method   string
	paper    bool
	asJSON   bool
	plot     string
	list     bool
	all      string
	truth    string
	minRuns  int
	maxRuns  int
	workers  int
	mpi      *mpiRun // --all over the ranks of an MPI job; nil alone
}

// recent keeps the last --max-runs runs (runs are by start time).
func (f *signatureFlags) recent(runs []serverlog.Job) []serverlog.Job {
	if f.maxRuns > 0 && len(runs) > f.maxRuns {
		return runs[len(runs)-f.maxRuns:]
	}
	return runs
}

func runSignature(args []string, stdout, stderr io.Writer) error {
	c := commands["signature"]
	fs := newFlagSet(c, stderr)
	var f signatureFlags
	f.log.Register(fs, true)
	fs.StringVar(&f.app, "app", "", "the application, `USER/NAME/NODES` as the job log names it")
	fs.StringVar(&f.from, "from", "", "use runs that started from this time on (RFC 3339, YYYY-MM-DD [HH:MM:SS] in --tz, or Unix seconds)")
	fs.StringVar(&f.to, "to", "", "use runs that started before this time")
	fs.StringVar(&f.method, "method", "iosi", "iosi, or dtw (the paper's baseline: progressive dynamic time warping)")
	fs.BoolVar(&f.paper, "paper", false, "run the IOSI paper's method exactly, without this implementation's improvements")
	fs.BoolVar(&f.asJSON, "json", false, "print the signature as one JSON object")
	fs.StringVar(&f.plot, "plot", "", "draw the runs and the signature to `FILE` (.svg, .png or .html)")
	fs.BoolVar(&f.list, "list-apps", false, "list the applications of the job log with their completed runs, most runs first")
	fs.StringVar(&f.all, "all", "", "write the signature of every application with at least --min-runs runs into `DIR`")
	fs.StringVar(&f.truth, "truth", "", "with --all: score the signatures against the simulator's truth.json `FILE`")
	fs.IntVar(&f.minRuns, "min-runs", 5, "with --all: the fewest completed runs an application needs")
	fs.IntVar(&f.maxRuns, "max-runs", 32, "use the most recent `N` runs of an application at most (0: all); the paper finds 5 to 10 enough")
	fs.IntVar(&f.workers, "workers", runtime.GOMAXPROCS(0), "with --all: applications processed at once")
	useMPI := fs.Bool("mpi", false, "with --all: run as one rank of an MPI job (mpirun -n R iopred signature ... --mpi): the applications are split among the ranks, rank 0 prints what one process prints")
	rest, err := parseFlagsAnywhere(fs, args)
	if err != nil {
		return err
	}
	if *useMPI {
		if f.all == "" {
			return errors.New("--mpi goes with --all")
		}
		m, err := startMPI()
		if err != nil {
			return err
		}
		defer m.finish()
		f.mpi = m
		if !m.root() {
			stdout, stderr = io.Discard, io.Discard // rank 0 reports
		}
	}
	if len(rest) > 0 {
		return fmt.Errorf("unexpected argument %q", rest[0])
	}
	modes := 0
	for _, on := range []bool{f.app != "", f.list, f.all != ""} {
		if on {
			modes++
		}
	}
	if modes != 1 {
		return errUsage
	}
	if f.method != "iosi" && f.method != "dtw" {
		return fmt.Errorf("--method %q: want iosi or dtw", f.method)
	}
	if f.truth != "" && f.all == "" {
		return errors.New("--truth goes with --all")
	}
	opts, err := f.log.Options()
	if err != nil {
		return err
	}
	from, err := optTime(f.from, opts.TZ)
	if err != nil {
		return fmt.Errorf("--from: %v", err)
	}
	to, err := optTime(f.to, opts.TZ)
	if err != nil {
		return fmt.Errorf("--to: %v", err)
	}
	jobs, err := f.log.ReadJobs()
	if err != nil {
		return err
	}
	defer f.log.Report(stderr)
	if f.list {
		return listApps(stdout, jobs, from, to)
	}
	if f.all != "" {
		return signatureAll(&f, jobs, from, to, stdout, stderr)
	}
	app, err := serverlog.ParseApp(f.app)
	if err != nil {
		return fmt.Errorf("--app: %v", err)
	}
	runs := iosi.Runs(jobs, app, from, to)
	if len(runs) == 0 {
		return fmt.Errorf("no completed run of %s in %s (see --list-apps)", app, f.log.Jobs)
	}
	src, err := f.log.Open()
	if err != nil {
		return err
	}
	defer src.Close()
	if err := f.overlap(src, runs, fmt.Sprintf("%s (the runs of %s)", f.log.Jobs, app)); err != nil {
		return err
	}
	var samples []iosi.Sample
	for _, j := range f.recent(runs) {
		s, err := iosi.SampleFrom(src, j)
		if err != nil {
			return err
		}
		if len(s.Write) > 0 {
			samples = append(samples, s)
		}
	}
	o := f.options()
	o.KeepSamples = f.plot != ""
	sig, err := f.extract(samples, o)
	if err != nil {
		return fmt.Errorf("%s: %v", app, err)
	}
	sig.RunsFound = len(runs)
	if f.plot != "" {
		if err := iosiplot.Write(f.plot, sig, iosiplot.Options{Title: app.String()}); err != nil {
			return err
		}
	}
	if f.asJSON {
		enc := json.NewEncoder(stdout)
		return enc.Encode(sig.Output(app))
	}
	printSignature(stdout, app, sig)
	return nil
}

// overlap refuses runs none of which the throughput log covers.
func (f *signatureFlags) overlap(src serverlog.Source, runs []serverlog.Job, jobsName string) error {
	spec, err := f.log.Spec()
	if err != nil {
		return err
	}
	return serverlog.CheckOverlap(src, spec.String(), runs, jobsName)
}

func (f *signatureFlags) options() iosi.Options {
	if f.paper {
		return iosi.Paper()
	}
	return iosi.Default()
}

func (f *signatureFlags) extract(samples []iosi.Sample, o iosi.Options) (*iosi.Signature, error) {
	if f.method == "dtw" {
		return iosi.ExtractDTW(samples, o)
	}
	return iosi.Extract(samples, o)
}

func listApps(w io.Writer, jobs []serverlog.Job, from, to time.Time) error {
	apps := iosi.Apps(jobs, from, to)
	if len(apps) == 0 {
		return errors.New("no completed job in the job log")
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "RUNS\t APPLICATION\t")
	for _, a := range apps {
		fmt.Fprintf(tw, "%d\t %s\t\n", a.Runs, a.App)
	}
	return tw.Flush()
}

// printSignature writes a person's view: what was used, the bursts, and
// a chart of the signature in the terminal.
func printSignature(w io.Writer, app serverlog.App, sig *iosi.Signature) {
	vw, vr := sig.Volume()
	fmt.Fprintf(w, "I/O signature of %s (%s)\n", app, sig.Method)
	fmt.Fprintf(w, "runs: %d found, %d used; duration %.0f s at %s s steps; %s written, %s read\n",
		sig.RunsFound, sig.RunsUsed, sig.DurationS(), trimFloat(sig.StepS), humanBytes(vw), humanBytes(vr))
	for id, why := range sig.Dropped {
		fmt.Fprintf(w, "  left out job %s: %s\n", id, why)
	}
	fmt.Fprintln(w)
	if len(sig.Bursts) == 0 {
		fmt.Fprintln(w, "no burst common to the runs")
	} else {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "#\tSTART s\tEND s\tWRITE\tREAD\tPEAK\t")
		for i, b := range sig.Bursts {
			fmt.Fprintf(tw, "%d\t%.0f\t%.0f\t%s\t%s\t%s/s\t\n", i+1, b.StartS, b.EndS, humanBytes(b.WriteBytes), humanBytes(b.ReadBytes), humanBytes(b.PeakBytesPerS))
		}
		tw.Flush()
	}
	fmt.Fprintln(w)
	total := make([]float64, len(sig.Write))
	for i := range total {
		total[i] = sig.Write[i] + sig.Read[i]
	}
	termChart(w, total, sig.StepS, 72, 8)
}

// termChart draws y as columns of block characters, width columns by
// height rows, each column the highest value of its share of the series.
func termChart(w io.Writer, y []float64, step float64, width, height int) {
	if len(y) == 0 {
		return
	}
	width = min(width, len(y))
	col := make([]float64, width)
	peak := 0.0
	for c := range col {
		lo, hi := c*len(y)/width, (c+1)*len(y)/width
		for _, v := range y[lo:max(hi, lo+1)] {
			col[c] = math.Max(col[c], v)
		}
		peak = math.Max(peak, col[c])
	}
	if peak <= 0 {
		fmt.Fprintln(w, "(the signature is zero throughout)")
		return
	}
	blocks := []rune(" ▁▂▃▄▅▆▇█")
	label := humanBytes(peak) + "/s"
	pad := len(label)
	for r := height - 1; r >= 0; r-- {
		var b strings.Builder
		for _, v := range col {
			eighths := int(math.Round(v / peak * float64(height*8)))
			cell := min(max(eighths-r*8, 0), 8)
			b.WriteRune(blocks[cell])
		}
		lab := strings.Repeat(" ", pad)
		if r == height-1 {
			lab = label
		} else if r == 0 {
			lab = fmt.Sprintf("%*s", pad, "0")
		}
		fmt.Fprintf(w, "%s |%s\n", lab, b.String())
	}
	end := fmt.Sprintf("%.0f s", float64(len(y))*step)
	fmt.Fprintf(w, "%s  0 s%*s\n", strings.Repeat(" ", pad), width-3, end)
}

func humanBytes(v float64) string {
	units := []string{"B", "kB", "MB", "GB", "TB", "PB"}
	i := 0
	for math.Abs(v) >= 1000 && i < len(units)-1 {
		v /= 1000
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%.0f %s", v, units[i])
	}
	return fmt.Sprintf("%.1f %s", v, units[i])
}

func trimFloat(v float64) string {
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.3f", v), "0"), ".")
}

// signatureAll writes the signature of every application with enough runs
// and, with --truth, scores those the truth knows.
func signatureAll(f *signatureFlags, jobs []serverlog.Job, from, to time.Time, stdout, stderr io.Writer) error {
	start := time.Now()
	var truth *centersim.Truth
	if f.truth != "" {
		tf, err := os.Open(f.truth)
		if err != nil {
			return err
		}
		truth, err = centersim.ReadTruth(tf)
		tf.Close()
		if err != nil {
			return fmt.Errorf("%s: %v", f.truth, err)
		}
	}
	if err := os.MkdirAll(f.all, 0o755); err != nil {
		return err
	}
	var apps []iosi.AppRuns
	for _, a := range iosi.Apps(jobs, from, to) {
		if a.Runs >= f.minRuns {
			apps = append(apps, a)
		}
	}
	if len(apps) == 0 {
		return fmt.Errorf("no application with %d completed runs or more in %s", f.minRuns, f.log.Jobs)
	}
	src, err := f.log.Open()
	if err != nil {
		return err
	}
	if err := f.overlap(src, jobs, f.log.Jobs); err != nil {
		src.Close()
		return err
	}
	// The log is read once, over the span of the runs used.
	lo, hi := time.Time{}, time.Time{}
	byApp := map[serverlog.App][]serverlog.Job{}
	for _, a := range apps {
		byApp[a.App] = nil
	}
	for _, j := range jobs {
		if _, ok := byApp[j.App()]; !ok {
			continue
		}
		if rs := iosi.Runs([]serverlog.Job{j}, j.App(), from, to); len(rs) == 1 {
			byApp[j.App()] = append(byApp[j.App()], j)
			if lo.IsZero() || j.Start.Before(lo) {
				lo = j.Start
			}
			if j.End.After(hi) {
				hi = j.End
			}
		}
	}
	l, err := iosi.ReadLog(src, lo, hi.Add(time.Second))
	src.Close()
	if err != nil {
		return err
	}
	readS := time.Since(start).Seconds()
	results := make([]appSignature, len(apps))
	for i, a := range apps {
		results[i].app = a.App
	}
	first, last := 0, len(apps)
	if f.mpi != nil {
		first, last = f.mpi.share(len(apps))
	}
	var wg sync.WaitGroup
	next := make(chan int)
	for range max(1, f.workers) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				a := apps[i].App
				var samples []iosi.Sample
				for _, j := range f.recent(byApp[a]) {
					if s, ok := l.Sample(j); ok {
						samples = append(samples, s)
					}
				}
				sig, err := f.extract(samples, f.options())
				if err == nil {
					sig.RunsFound = len(byApp[a])
					err = writeSignatureFile(f.all, a, sig)
				}
				results[i] = appSignature{app: a, sig: sig, err: err}
			}
		}()
	}
	for i := first; i < last; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	if f.mpi != nil {
		var err error
		if results, err = gatherSignatures(f.mpi, results, first, last); err != nil || !f.mpi.root() {
			return err
		}
	}
	done, failed := 0, 0
	sigs := map[serverlog.App]*iosi.Signature{}
	for _, r := range results {
		if r.err != nil {
			failed++
			fmt.Fprintf(stderr, "%s: %v\n", r.app, r.err)
			continue
		}
		sigs[r.app] = r.sig
		done++
	}
	fmt.Fprintf(stdout, "%d applications with %d runs or more: %d signatures written to %s, %d without (log read in %.1f s, all done in %.1f s)\n",
		len(apps), f.minRuns, done, f.all, failed, readS, time.Since(start).Seconds())
	if truth == nil {
		return nil
	}
	return scoreAgainstTruth(stdout, truth, sigs)
}

// gatherSignatures sends this rank's outcomes (results[first:last]) to
// rank 0, which gets every rank's in the order of the applications.
func gatherSignatures(m *mpiRun, results []appSignature, first, last int) ([]appSignature, error) {
	type wire struct {
		Sig *iosi.Signature `msgpack:"s"`
		Err string          `msgpack:"e"`
	}
	mine := make([]wire, 0, last-first)
	for _, r := range results[first:last] {
		w := wire{Sig: r.sig}
		if r.err != nil {
			w.Sig, w.Err = nil, r.err.Error()
		}
		mine = append(mine, w)
	}
	b, err := msgpack.Marshal(mine)
	all, err := m.gather([][]byte{b}, err)
	if err != nil || !m.root() {
		return nil, err
	}
	for r, ps := range all {
		lo, hi := mpi.Block(len(results), r, len(all))
		var got []wire
		if len(ps) != 1 {
			return nil, fmt.Errorf("MPI rank %d sent %d parts, not 1", r, len(ps))
		}
		if err := msgcheck.Check(ps[0]); err != nil {
			return nil, fmt.Errorf("MPI rank %d: %w", r, err)
		}
		if err := msgpack.Unmarshal(ps[0], &got); err != nil {
			return nil, fmt.Errorf("MPI rank %d: %w", r, err)
		}
		if len(got) != hi-lo {
			return nil, fmt.Errorf("MPI rank %d sent %d signatures for %d applications", r, len(got), hi-lo)
		}
		for i, w := range got {
			x := &results[lo+i]
			x.sig, x.err = w.Sig, nil
			if w.Err != "" || w.Sig == nil {
				x.sig, x.err = nil, errors.New(w.Err)
			}
		}
	}
	return results, nil
}

// appSignature is one application's outcome under --all.
type appSignature struct {
	app serverlog.App
	sig *iosi.Signature
	err error
}

func scoreAgainstTruth(w io.Writer, truth *centersim.Truth, sigs map[serverlog.App]*iosi.Signature) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "APPLICATION\tRUNS\tXCORR\tCORR\tVOLUME ERR\tMISSED\tINVENTED\t")
	var xs, cs, vs []float64
	clean, n := 0, 0
	for _, a := range truth.Apps {
		if a.Signature == nil {
			continue
		}
		app := serverlog.App{User: a.App.User, Name: a.App.Name, Nodes: a.App.Nodes}
		sig, ok := sigs[app]
		if !ok {
			fmt.Fprintf(tw, "%s\t-\t-\t-\t-\t-\t-\t\n", app)
			continue
		}
		g := &iosi.Truth{StepS: a.Signature.StepS, Write: a.Signature.Write, Read: a.Signature.Read}
		for _, b := range a.Signature.Bursts {
			g.Bursts = append(g.Bursts, iosi.Burst(b))
		}
		s := iosi.Compare(sig, g)
		fmt.Fprintf(tw, "%s\t%d/%d\t%.3f\t%.3f\t%.1f%%\t%d\t%d\t\n", app, sig.RunsUsed, sig.RunsFound, s.XCorr, s.Corr, 100*s.VolumeErr, s.Missed, s.Invented)
		xs, cs, vs = append(xs, s.XCorr), append(cs, s.Corr), append(vs, s.VolumeErr)
		n++
		if s.Clean() {
			clean++
		}
	}
	tw.Flush()
	if n == 0 {
		return errors.New("no application of the truth has a signature")
	}
	fmt.Fprintf(w, "median over %d targets: cross-correlation %.3f, correlation %.3f, volume error %.1f%%; no burst missed or invented on %d of %d\n",
		n, medianOf(xs), medianOf(cs), 100*medianOf(vs), clean, n)
	return nil
}

func medianOf(x []float64) float64 {
	s := slices.Clone(x)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// writeSignatureFile writes one application's signature as DIR/USER_NAME_NODES.json.
func writeSignatureFile(dir string, app serverlog.App, sig *iosi.Signature) error {
	name := strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == 0 || r == ':' {
			return '_'
		}
		return r
	}, fmt.Sprintf("%s_%s_%d.json", app.User, app.Name, app.Nodes))
	b, err := json.Marshal(sig.Output(app))
	if err != nil {
		return err
	}
	return safefile.WriteFile(filepath.Join(dir, name), append(b, '\n'), 0o666)
}
