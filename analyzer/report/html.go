package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"iopred/analyzer/insights"
	"iopred/analyzer/pathfilter"
	"iopred/analyzer/plotkit"
	"iopred/analyzer/summary"
)

//go:embed page.html
var pageHTML string

//go:embed page.css
var pageCSS string

//go:embed page.js
var pageJS string

var page = template.Must(template.New("report").Funcs(template.FuncMap{
	"count": insights.Count,
	"size":  insights.Size,
	"dur":   insights.Dur,
	"lower": strings.ToLower,
}).Parse(pageHTML))

// Cell is a table cell: the text shown and the value it sorts by.
type Cell struct {
	Text  string
	Sort  string // a number for numeric columns, "" to sort by Text
	Title string // a tooltip (the whole path of a shortened one)
	Class string
}

// Table is a sortable table.
type Table struct {
	ID      string
	Caption string
	Head    []Column
	Rows    [][]Cell
}

// Column is a table column; Num columns sort numerically, largest first.
type Column struct {
	Name  string
	Num   bool
	Title string
}

// Fact is one line of the job's facts.
type Fact struct{ Name, Value string }

// view is what the page template shows.
type view struct {
	Title       string
	Subtitle    string
	CSS         template.CSS
	JS          template.JS
	Facts       []Fact
	Excluded    string
	Problems    []string
	JobWarnings []string
	SourceNotes []string // what the traces' sources did not record, where the figures come from
	Findings    []insights.Finding
	Counts      map[string]int // findings by severity
	TimeFig     template.HTML
	TimeTable   Table
	Timeline    template.HTML
	Period      []Fact
	PeriodFig   template.HTML
	PeriodNote  string
	SizesFig    template.HTML
	Sizes       Table
	Access      Table
	Patterns    Table
	Accuracy    []Fact
	AccTable    Table
	Files       Table
	Layers      Table // the application's bytes, each once, beside each layer's view
	LayerFiles  Table // per file: the application's bytes and each layer's
	Lustre      Table // per file: its Lustre layout, when the source kept it
	Regions     Table // the application's own work (DFTracer's functions, epochs, steps)
	Contexts    Table
	Thresholds  []Fact
	Rules       []Fact
	Footer      string
}

func num(v float64, text string) Cell {
	return Cell{Text: text, Sort: strconv.FormatFloat(v, 'f', -1, 64), Class: "num"}
}

func nsCell(ns int64) Cell { return num(float64(ns), insights.Dur(ns)) }

func sizeCell(n int64) Cell { return num(float64(n), insights.Size(n)) }

func countCell(n uint64) Cell { return num(float64(n), insights.Count(n)) }

func pctCell(a, b float64) Cell {
	if b == 0 {
		return Cell{Text: "-", Sort: "-1", Class: "num"}
	}
	return num(a/b, insights.Pct(a, b))
}

// secCell is a time since the job's start.
func secCell(ns int64) Cell { return num(float64(ns), secs(ns)) }

func svg(f *plotkit.Figure, err error) (template.HTML, error) {
	if err != nil || f == nil {
		return "", err
	}
	b, err := f.SVG()
	if err != nil {
		return "", err
	}
	// Trusted: the SVG is generated from numbers and escaped text.
	return template.HTML(b), nil
}

// WriteHTML writes the report as one HTML page that needs nothing else:
// no network, no file beside it.
func (r *Report) WriteHTML(w io.Writer) error {
	v, err := r.view()
	if err != nil {
		return err
	}
	return page.Execute(w, v)
}

func (r *Report) view() (*view, error) {
	v := &view{CSS: template.CSS(pageCSS), JS: template.JS(pageJS), Problems: r.Problems, JobWarnings: r.JobWarnings,
		SourceNotes: r.Summary.Notes, Findings: r.Findings, Counts: map[string]int{}}
	for _, f := range r.Findings {
		v.Counts[string(f.Severity)]++
	}
	procs := r.procs()
	prog := "?"
	if len(procs) > 0 {
		prog = filepath.Base(procs[0].Program)
	}
	v.Title = "I/O report: " + prog
	ranks := 0
	for _, p := range procs {
		if p.Rank != nil {
			ranks++
		}
	}
	if ranks > 0 {
		v.Subtitle = fmt.Sprintf("an MPI job of %d ranks", ranks)
		if ranks < len(procs) {
			v.Subtitle += fmt.Sprintf(" and %d other processes", len(procs)-ranks)
		}
	} else {
		v.Subtitle = fmt.Sprintf("%d process", len(procs))
		if len(procs) != 1 {
			v.Subtitle += "es"
		}
	}
	v.Subtitle += ", started " + summary.FormatDate(r.start())
	r.facts(v, procs)
	v.Excluded = summary.ExcludedLine(r.Summary)
	var err error
	if v.TimeFig, err = svg(r.timeShare()); err != nil {
		return nil, err
	}
	if v.Timeline, err = svg(r.timeline()); err != nil {
		return nil, err
	}
	if v.PeriodFig, err = svg(r.periodFigure()); err != nil {
		return nil, err
	}
	if v.SizesFig, err = svg(r.sizes()); err != nil {
		return nil, err
	}
	v.TimeTable = r.procTable(procs)
	r.periodFacts(v)
	r.sizeTables(v)
	r.patternTable(v)
	r.accuracy(v, procs)
	v.Files = r.fileTable()
	v.Layers, v.LayerFiles = r.layerTables()
	v.Lustre = r.lustreTable()
	v.Regions = r.regionTable()
	v.Contexts = r.contextTable()
	r.about(v)
	return v, nil
}

func (r *Report) facts(v *view, procs []*insights.Proc) {
	hosts := map[string]bool{}
	var args string
	var lib string
	for _, p := range procs {
		hosts[p.Host] = true
		if args == "" && len(p.Args) > 0 {
			args = strings.Join(p.Args, " ")
		}
		if lib == "" {
			lib = p.Library
		}
	}
	hl := make([]string, 0, len(hosts))
	for h := range hosts {
		hl = append(hl, h)
	}
	sort.Strings(hl)
	if len(hl) > 8 {
		hl = append(hl[:8], fmt.Sprintf("and %d more", len(hosts)-8))
	}
	var read, written, io int64
	for _, p := range procs {
		read += p.BytesRead
		written += p.BytesWritten
		io += p.IONs()
	}
	add := func(n, val string) { v.Facts = append(v.Facts, Fact{n, val}) }
	if j := r.Summary.Source; j != nil {
		r.sourceFacts(add, j)
		read, written = r.Summary.Application.BytesRead, r.Summary.Application.BytesWritten
		add("traces read", fmt.Sprintf("%d (one per rank with records of its own, one for the files all ranks shared)", len(procs)))
	} else {
		if len(procs) > 0 {
			add("program", procs[0].Program)
		}
		if args != "" {
			add("arguments", args)
		}
		add("processes", fmt.Sprintf("%d on %d host(s): %s", len(procs), len(hosts), strings.Join(hl, ", ")))
	}
	add("started", summary.FormatDate(r.start())+" (every other time in this report counts seconds from it)")
	add("ran for", insights.Dur(r.end())+" (until the last process ended)")
	add("data", fmt.Sprintf("%s read, %s written by the application", insights.Size(read), insights.Size(written)))
	add("time in I/O", fmt.Sprintf("%s summed over the processes (reads, writes and metadata calls; MPI start-up and shut-down apart)", insights.Dur(io)))
	add("traces", fmt.Sprintf("%d, in %s", len(r.Traces), commonDir(r.Traces)))
	if lib != "" {
		add("recorded by", "libiopred "+lib)
	}
}

// sourceFacts states the job as its source recorded it (a Darshan log's
// job record).
func (r *Report) sourceFacts(add func(n, val string), j *summary.SourceJob) {
	add("job id", j.JobID)
	add("processes (log)", strconv.Itoa(j.Procs))
	add("uid", strconv.FormatInt(j.UID, 10))
	add("executable", j.Program)
	if len(j.Args) > 0 {
		add("arguments", strings.Join(j.Args, " "))
	}
	add("start (log)", fmt.Sprintf("%s (%d)", summary.FormatDate(j.StartUnixNs), j.StartUnixNs/1e9))
	add("end (log)", fmt.Sprintf("%s (%d)", summary.FormatDate(j.EndUnixNs), j.EndUnixNs/1e9))
	add("run time (log)", fmt.Sprintf("%.4f s", float64(j.RunNs)/1e9))
	add("log", j.Source)
	add("modules", strings.Join(j.Modules, ", "))
	partial := "no"
	if j.Partial != "" {
		partial = "yes: " + j.Partial
	}
	add("partial", partial)
}

// layerTables are the application's bytes (each byte once: a file's
// highest layer) beside each layer's own view, for the job and per file.
func (r *Report) layerTables() (job, files Table) {
	s := r.Summary
	if len(s.Layers) == 0 {
		return job, files
	}
	job = Table{ID: "layers", Caption: "Layers: the application's bytes count each byte once (MPI-IO for a file accessed through it, else POSIX, plus stdio); each layer's own view beside",
		Head: []Column{{Name: "layer"}, {Name: "calls", Num: true}, {Name: "read", Num: true}, {Name: "written", Num: true}}}
	a := s.Application
	job.Rows = append(job.Rows, []Cell{{Text: "application (each byte once)"}, countCell(a.Calls), sizeCell(a.BytesRead), sizeCell(a.BytesWritten)})
	var names []string
	for _, l := range s.Layers {
		names = append(names, l.Layer)
		job.Rows = append(job.Rows, []Cell{{Text: l.Layer}, countCell(l.Calls), sizeCell(l.BytesRead), sizeCell(l.BytesWritten)})
	}
	files = Table{ID: "layerfiles", Caption: "Files by layer: read / written by the application and in each layer's view",
		Head: []Column{{Name: "file"}, {Name: "application", Num: true}}}
	for _, n := range names {
		files.Head = append(files.Head, Column{Name: n, Num: true})
	}
	rw := func(read, written int64) Cell {
		return num(float64(read+written), insights.Size(read)+" / "+insights.Size(written))
	}
	for _, f := range s.Files {
		if len(f.Layers) == 0 {
			continue
		}
		row := []Cell{{Text: f.Path}, rw(f.BytesRead, f.BytesWritten)}
		for _, n := range names {
			if l := f.Layers[n]; l != nil {
				row = append(row, rw(l.BytesRead, l.BytesWritten))
			} else {
				row = append(row, Cell{Text: "-", Sort: "-1", Class: "num"})
			}
		}
		files.Rows = append(files.Rows, row)
	}
	return job, files
}

// lustreTable lists the files' Lustre layouts (a Darshan log's LUSTRE
// records) and, as its caption, the OSTs the job used.
func (r *Report) lustreTable() Table {
	s := r.Summary
	if len(s.OSTs) == 0 {
		return Table{}
	}
	osts := make([]string, len(s.OSTs))
	for i, o := range s.OSTs {
		osts[i] = strconv.FormatInt(o, 10)
	}
	t := Table{ID: "lustre", Caption: fmt.Sprintf("Lustre layouts: the job's files lie on %d OSTs (%s)", len(osts), strings.Join(osts, ", ")),
		Head: []Column{{Name: "file"}, {Name: "stripe size", Num: true}, {Name: "stripe count", Num: true}, {Name: "OSTs"}}}
	for _, f := range s.Files {
		l := f.Lustre
		if l == nil {
			continue
		}
		list := make([]string, len(l.OSTs))
		for i, o := range l.OSTs {
			list[i] = strconv.FormatInt(o, 10)
		}
		t.Rows = append(t.Rows, []Cell{{Text: f.Path}, sizeCell(l.StripeSize), countCell(uint64(max(l.StripeCount, 0))), {Text: strings.Join(list, ", ")}})
	}
	for _, f := range s.LustreOnly {
		list := make([]string, len(f.OSTs))
		for i, o := range f.OSTs {
			list[i] = strconv.FormatInt(o, 10)
		}
		t.Rows = append(t.Rows, []Cell{{Text: f.Path + " (no I/O record)", Title: f.Path}, sizeCell(f.StripeSize),
			countCell(uint64(max(f.StripeCount, 0))), {Text: strings.Join(list, ", ")}})
	}
	return t
}

// regionTable lists the spans of the application's own work the traces
// record, longest in total first.
func (r *Report) regionTable() Table {
	rs := r.Summary.Regions
	if len(rs) == 0 {
		return Table{}
	}
	t := Table{ID: "regions", Caption: "The application's own work, as its traces mark it (functions, epochs, steps), beside its I/O",
		Head: []Column{{Name: "region"}, {Name: "category"}, {Name: "processes", Num: true}, {Name: "count", Num: true},
			{Name: "total time", Num: true}, {Name: "longest", Num: true}, {Name: "first start (s)", Num: true}, {Name: "last end (s)", Num: true}}}
	for _, g := range rs {
		t.Rows = append(t.Rows, []Cell{{Text: g.Name}, {Text: g.Category}, countCell(uint64(g.Processes)), countCell(g.Count),
			nsCell(g.TotalNs), nsCell(g.MaxNs), secCell(g.FirstNs), secCell(g.LastEndNs)})
	}
	return t
}

// commonDir is the directory the traces share.
func commonDir(paths []string) string {
	if len(paths) == 0 {
		return ""
	}
	abs := func(p string) string {
		p = strings.SplitN(p, "#", 2)[0]
		if a, err := filepath.Abs(p); err == nil {
			return a
		}
		return p
	}
	d := filepath.Dir(abs(paths[0]))
	for _, p := range paths[1:] {
		p = abs(p)
		for !strings.HasPrefix(filepath.Dir(p)+"/", d+"/") && d != "/" && d != "." {
			d = filepath.Dir(d)
		}
	}
	return d
}

func (r *Report) procTable(procs []*insights.Proc) Table {
	t := Table{ID: "ranks", Caption: "Processes: start and end in seconds since the job's start; times in their calls",
		Head: []Column{{Name: "process"}, {Name: "host"}, {Name: "pid", Num: true}, {Name: "start (s)", Num: true}, {Name: "end (s)", Num: true},
			{Name: "I/O time", Num: true}, {Name: "share of run", Num: true, Title: "I/O time over the process's run time"},
			{Name: "reads", Num: true, Title: "time in reads"}, {Name: "writes", Num: true, Title: "time in writes and syncs"},
			{Name: "metadata", Num: true, Title: "time in opens, closes, stats, seeks, views, ..."},
			{Name: "MPI start-up", Num: true}, {Name: "MPI shut-down", Num: true},
			{Name: "read", Num: true}, {Name: "written", Num: true}, {Name: "opens", Num: true}, {Name: "failed", Num: true}}}
	status := map[int]string{}
	for i, p := range r.Summary.Processes {
		status[i] = p.Problem
	}
	for _, p := range procs {
		start := p.StartUnixNs - r.start()
		label := Cell{Text: p.Label(), Sort: strconv.Itoa(p.Index), Title: p.Trace}
		if p.Rank != nil {
			label.Sort = strconv.Itoa(*p.Rank)
		}
		if status[p.Index] != "" {
			label.Text += " (incomplete)"
			label.Title = status[p.Index]
			label.Class = "warn"
		}
		t.Rows = append(t.Rows, []Cell{label, {Text: p.Host}, num(float64(p.PID), strconv.Itoa(p.PID)),
			secCell(start), secCell(start + p.DurationNs), nsCell(p.IONs()), pctCell(float64(p.IONs()), float64(p.DurationNs)),
			nsCell(p.ReadNs), nsCell(p.WriteNs), nsCell(p.MetaNs), nsCell(p.MPIStartNs), nsCell(p.MPIEndNs),
			sizeCell(p.BytesRead), sizeCell(p.BytesWritten), countCell(p.Opens), countCell(p.Failed)})
	}
	return t
}

func (r *Report) periodFacts(v *view) {
	p, what, fromHeatmap := r.period()
	if p == nil {
		v.PeriodNote = "The job moved too little data over time for a period analysis."
		return
	}
	add := func(n, val string) { v.Period = append(v.Period, Fact{n, val}) }
	if p.PeriodS == nil {
		add("period of the "+what, fmt.Sprintf("none found (%s)", p.Verdict))
	} else {
		add("period of the "+what, fmt.Sprintf("%s s (%s Hz)", plotkit.Num(*p.PeriodS), plotkit.Num(*p.FreqHz)))
		add("confidence", fmt.Sprintf("FTIO's %.2f; verdict %s; %d of %d sampling resolutions agree", p.Confidence, p.Verdict, p.Agreeing, len(p.Resolutions)))
		if sig := p.Significance; sig != nil {
			if b := sig.BurstTest; sig.Method == "bursts" {
				add("significance", fmt.Sprintf("p = %.3g against %d surrogates of the job's own %d bursts at random times (burst starts: phase coherence %.2f, interval spread %.2f)", sig.PValue, sig.Surrogates, b.Bursts, b.Coherence, b.Spread))
			} else {
				add("significance", fmt.Sprintf("p = %.3g against %d surrogates of the job's own %d bursts at random times", sig.PValue, sig.Surrogates, sig.Bursts))
			}
		}
		if p.Multiple > 1 {
			add("fundamental", fmt.Sprintf("%d times the strongest spectral peak: the signal repeats at that lag (autocorrelation), the peak is a harmonic", p.Multiple))
		}
		if p.VolumePerPeriod != nil {
			add("per period", fmt.Sprintf("%s moved; I/O during %s of the time", insights.Size(int64(*p.VolumePerPeriod)), pctOf(p.RIO)))
		}
	}
	for i, ph := range p.Phases {
		how := fmt.Sprintf("p = %.3g", ph.PValue)
		if ph.Tempo {
			how = fmt.Sprintf("the local tempo of %d bursts", ph.Bursts)
		}
		add(fmt.Sprintf("phase %d", i+1), fmt.Sprintf("every %s s from %s s to %s s (%s)", plotkit.Num(ph.PeriodS),
			secs(int64(ph.StartS*1e9)-r.start()), secs(int64(ph.EndS*1e9)-r.start()), how))
	}
	from := "the bytes all processes moved"
	if fromHeatmap {
		from = "the bytes all ranks moved by Darshan's HEATMAP records (MPI-IO's, else POSIX's, plus STDIO's: each byte once)"
	}
	add("signal", fmt.Sprintf("%s, in %d bins of %s, from %s s to %s s", from, p.NSamples, insights.Dur(int64(1e9/p.Fs)),
		secs(int64(p.TStart*1e9)-r.start()), secs(int64(p.TEnd*1e9)-r.start())))
	if fromHeatmap {
		w := r.Stats.Heatmap.WidthNs
		add("time resolution", fmt.Sprintf("the heatmap's bins of %s (the log has no DXT): a period shorter than two bins (%s) cannot be seen, and one is known to about a bin's width",
			insights.Dur(w), insights.Dur(2*w)))
	} else if r.HeatmapPeriod != nil && r.Stats.HeatmapWithDXT {
		// The log's heatmap too: a check of DXT's period at the coarser
		// resolution most logs a center keeps have.
		hp, hwhat := pickPeriod(*r.HeatmapPeriod)
		w := r.Stats.Heatmap.WidthNs
		switch {
		case hp == nil:
			add("from the heatmap", fmt.Sprintf("too little data in Darshan's HEATMAP (bins of %s)", insights.Dur(w)))
		case hp.PeriodS == nil:
			add("from the heatmap", fmt.Sprintf("%s: none found (%s) in Darshan's HEATMAP, bins of %s", hwhat, hp.Verdict, insights.Dur(w)))
		default:
			add("from the heatmap", fmt.Sprintf("%s: %s s, verdict %s, from Darshan's HEATMAP in bins of %s (the period above is from DXT)",
				hwhat, plotkit.Num(*hp.PeriodS), hp.Verdict, insights.Dur(w)))
		}
	}
	if n := r.Stats.HeatmapSkipped; n > 0 && (fromHeatmap || r.HeatmapPeriod != nil) {
		add("left out", fmt.Sprintf("%d ranks' heatmaps, whose bin width did not fit the others'", n))
	}
	v.PeriodNote = "FTIO's method (Tarraf et al.) on the job's bandwidth at several sampling resolutions; the candidates are the spectral bins whose z-score passes the threshold. A periodic job can have its bursts absorbed by a burst buffer or staged asynchronously; `iopred period --job` prints every figure."
	if fromHeatmap {
		v.PeriodNote = "FTIO's method (Tarraf et al.) on the job's bandwidth from Darshan's HEATMAP records, at their bins and coarser ones; the log has no DXT, so the bins' width bounds the periods that can be seen. `iopred period` on the log prints every figure."
	}
}

func pctOf(x *float64) string {
	if x == nil {
		return "-"
	}
	return insights.Pct(*x, 1)
}

func (r *Report) sizeTables(v *view) {
	read, write := r.Stats.Total()
	v.Sizes = Table{ID: "sizes", Caption: "Most common request sizes (file-system requests)",
		Head: []Column{{Name: "direction"}, {Name: "size", Num: true}, {Name: "requests", Num: true}, {Name: "share", Num: true}}}
	for _, d := range []struct {
		name  string
		write bool
		total uint64
	}{{"read", false, read.Requests}, {"write", true, write.Requests}} {
		for _, s := range r.Stats.CommonSizes(d.write, 4) {
			v.Sizes.Rows = append(v.Sizes.Rows, []Cell{{Text: d.name}, sizeCell(s.Size), countCell(s.Count), pctCell(float64(s.Count), float64(d.total))})
		}
	}
	v.Access = Table{ID: "access", Caption: "How each file was accessed: file-system requests after each process's previous one on the file",
		Head: []Column{{Name: "file"}, {Name: "direction"}, {Name: "requests", Num: true}, {Name: "consecutive", Num: true, Title: "starting where the previous one ended"},
			{Name: "forward", Num: true, Title: "skipping ahead (strided)"}, {Name: "backward", Num: true, Title: "going back (random)"},
			{Name: "small", Num: true, Title: "under " + insights.Size(r.Options.Thresholds.SmallBytes)},
			{Name: "misaligned", Num: true, Title: "not starting at a multiple of " + insights.Size(r.Options.Thresholds.Align)},
			{Name: "mean size", Num: true}}}
	for _, f := range r.Stats.SortedFiles() {
		for _, d := range []struct {
			name string
			a    *insights.Access
		}{{"read", &f.Read}, {"write", &f.Write}} {
			a := d.a
			if a.Requests == 0 {
				continue
			}
			n := float64(a.Requests)
			v.Access.Rows = append(v.Access.Rows, []Cell{pathCell(f.Path), {Text: d.name}, countCell(a.Requests),
				pctCell(float64(a.Consecutive), n), pctCell(float64(a.Forward), n), pctCell(float64(a.Backward), n),
				pctCell(float64(a.Small), n), pctCell(float64(a.Misaligned), n), sizeCell(a.Bytes / int64(a.Requests))})
		}
	}
}

func pathCell(p string) Cell {
	if p == "" {
		return Cell{Text: "(no file)"}
	}
	return Cell{Text: p, Title: p, Class: "path"}
}

func (r *Report) patternTable(v *view) {
	v.Patterns = Table{ID: "patterns", Caption: "Access patterns across processes (PLFS notation: the ranks in order, logical offsets, lengths; a pattern stands for many requests)",
		Head: []Column{{Name: "file"}, {Name: "direction"}, {Name: "requests", Num: true}, {Name: "in patterns", Num: true}, {Name: "local runs", Num: true}, {Name: "global pattern"}}}
	if r.Job == nil {
		return
	}
	for _, f := range r.Job.Patterns {
		pat := "-"
		if len(f.Strings) > 0 {
			pat = f.Strings[0]
			if len(f.Strings) > 1 {
				pat += fmt.Sprintf(" (and %d more)", len(f.Strings)-1)
			}
		}
		v.Patterns.Rows = append(v.Patterns.Rows, []Cell{pathCell(f.Path), {Text: f.Kind}, num(float64(f.Requests), insights.Count(uint64(f.Requests))),
			pctCell(float64(f.InGlobals), float64(f.Requests)), num(float64(f.LocalRuns), strconv.Itoa(f.LocalRuns)), {Text: pat, Class: "mono"}})
	}
}

func (r *Report) accuracy(v *view, procs []*insights.Proc) {
	j := r.Job
	if j == nil || j.Accuracy.Mean == nil {
		v.Accuracy = []Fact{{"prediction", "no model ran (the traces were recorded with IOPRED_PREDICT=0, or hold no call)"}}
		return
	}
	a := &j.Accuracy
	v.Accuracy = []Fact{{"context score", fmt.Sprintf("%.3f over %s calls", *a.Mean, insights.Count(a.Steps))},
		{"meaning", "the share of calls whose call site (context) the process's model had predicted before the call came, weighted by the probability it gave: 1 means every call was foreseen"}}
	if len(a.PerRank) > 1 {
		v.Accuracy = append(v.Accuracy, Fact{"range", fmt.Sprintf("lowest %.3f (rank %d), highest %.3f (rank %d)", *a.Min, a.MinRank, *a.Max, a.MaxRank)})
	}
	v.AccTable = Table{ID: "accuracy", Caption: "Prediction score of each process's model",
		Head: []Column{{Name: "process"}, {Name: "context score", Num: true}}}
	for i, s := range a.PerRank {
		label := "rank " + strconv.Itoa(i)
		if r.Summary.Job == nil && i < len(r.Summary.Processes) {
			label = fmt.Sprintf("pid %d", r.Summary.Processes[i].PID)
		}
		c := Cell{Text: "-", Sort: "-1", Class: "num"}
		if s != nil {
			c = num(*s, fmt.Sprintf("%.3f", *s))
		}
		v.AccTable.Rows = append(v.AccTable.Rows, []Cell{{Text: label, Sort: strconv.Itoa(i)}, c})
	}
}

func (r *Report) fileTable() Table {
	t := Table{ID: "files", Caption: "Files: first and last call in seconds since the job's start",
		Head: []Column{{Name: "file"}, {Name: "processes", Num: true}, {Name: "opens", Num: true}, {Name: "I/O time", Num: true},
			{Name: "read", Num: true}, {Name: "written", Num: true}, {Name: "requests", Num: true, Title: "file-system requests"},
			{Name: "small", Num: true}, {Name: "backward", Num: true}, {Name: "MPI-IO collective", Num: true}, {Name: "MPI-IO independent", Num: true},
			{Name: "first (s)", Num: true}, {Name: "last (s)", Num: true}}}
	for _, f := range r.Stats.SortedFiles() {
		rd, wr := f.Bytes()
		req := f.Read.Requests + f.Write.Requests
		t.Rows = append(t.Rows, []Cell{pathCell(f.Path), num(float64(len(f.Procs)), strconv.Itoa(len(f.Procs))), countCell(f.Opens()),
			nsCell(f.IONs()), sizeCell(rd), sizeCell(wr), countCell(req),
			pctCell(float64(f.Read.Small+f.Write.Small), float64(req)), pctCell(float64(f.Read.Backward+f.Write.Backward), float64(req)),
			countCell(f.MPIRead.Collective + f.MPIWrite.Collective), countCell(f.MPIRead.Independent + f.MPIWrite.Independent),
			secCell(f.FirstUnixNs - r.start()), secCell(f.LastUnixNs - r.start())})
	}
	return t
}

func (r *Report) contextTable() Table {
	t := Table{ID: "contexts", Caption: "Call sites (contexts) with the most time in I/O: the innermost frame of the application",
		Head: []Column{{Name: "where"}, {Name: "processes", Num: true}, {Name: "calls", Num: true}, {Name: "I/O time", Num: true}, {Name: "bytes", Num: true}, {Name: "calls by operation"}, {Name: "context id"}}}
	for _, c := range r.Summary.Contexts {
		var ops []string
		for op, n := range c.Calls {
			ops = append(ops, fmt.Sprintf("%s %s", op, insights.Count(n)))
		}
		sort.Strings(ops)
		t.Rows = append(t.Rows, []Cell{{Text: c.Where, Class: "mono"}, num(float64(c.Processes), strconv.Itoa(c.Processes)), countCell(c.Events),
			nsCell(c.IONs), sizeCell(c.Bytes), {Text: strings.Join(ops, ", ")}, {Text: strconv.FormatUint(c.ID, 10), Class: "mono"}})
	}
	return t
}

func (r *Report) about(v *view) {
	th := r.Options.Thresholds
	add := func(n, val string) { v.Thresholds = append(v.Thresholds, Fact{n, val}) }
	add("small request", "under "+insights.Size(th.SmallBytes))
	add("alignment", insights.Size(th.Align))
	add("small and random requests", fmt.Sprintf("share over %s / %s, count over %s / %s", insights.Pct(th.SmallShare, 1), insights.Pct(th.RandomShare, 1), insights.Count(th.SmallCount), insights.Count(th.RandomCount)))
	add("misaligned requests", fmt.Sprintf("share over %s, at least %s", insights.Pct(th.MisalignedShare, 1), insights.Count(th.MisalignedCount)))
	add("metadata-heavy process", fmt.Sprintf("over %.3g s, or over %s of its I/O time in at least %s calls", th.MetaSeconds, insights.Pct(th.MetaShare, 1), insights.Count(th.MetaCalls)))
	add("imbalance", fmt.Sprintf("I/O time: over %s and %.3g s; shared file data: over %s on files of %s or more", insights.Pct(th.Imbalance, 1), th.ImbalanceSeconds, insights.Pct(th.DataImbalance, 1), insights.Size(th.DataImbalanceBytes)))
	add("repeated opens", fmt.Sprintf("over %s per process and file", insights.Count(th.RepeatedOpens)))
	add("collective MPI-IO", fmt.Sprintf("over %s independent calls on a shared file", insights.Count(th.CollectiveCount)))
	add("stdio", fmt.Sprintf("over %s of the bytes", insights.Pct(th.StdioShare, 1)))
	if !r.Options.AllPaths {
		for _, rule := range pathfilter.Default().Rules() {
			v.Rules = append(v.Rules, Fact{rule.Pattern, rule.Kind.String() + ": " + rule.Owner})
		}
	}
	v.Footer = "Made by iopred"
	if r.Options.Version != "" {
		v.Footer += " " + r.Options.Version
	}
	if r.Options.Command != "" {
		v.Footer += " with: " + r.Options.Command
	}
}
