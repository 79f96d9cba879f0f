package aid

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"time"

	"iopred/analyzer/centersim"
	"iopred/analyzer/serverlog"
)

// SimAdvisor makes an Advisor the center simulator's: it answers the
// batch queue's questions from the simulated per-OST log.
type SimAdvisor struct {
	A *Advisor
	// Asked counts the questions, Run the "run" answers.
	Asked, Run int
	// Scores holds the last score and threshold given for each
	// application at each time asked ("USER/NAME/NODES@RFC3339Nano").
	Scores map[string][2]float64
}

// Advise implements centersim.Advisor.
func (s *SimAdvisor) Advise(req centersim.AdviceRequest) (centersim.Advice, error) {
	r := Request{App: req.App, At: req.At, Log: req.Log, Held: req.Held, MaxHold: req.MaxHold}
	for _, j := range req.Running {
		r.Running = append(r.Running, Running{App: j.App, Start: j.Start, Limit: j.Limit, OSTs: j.OSTs})
	}
	adv, err := s.A.Advise(r)
	if err != nil {
		return centersim.Advice{}, err
	}
	s.Asked++
	if s.Scores == nil {
		s.Scores = map[string][2]float64{}
	}
	s.Scores[req.App.String()+"@"+req.At.UTC().Format(time.RFC3339Nano)] = [2]float64{adv.Score, adv.Threshold}
	if adv.Advice == "run" {
		s.Run++
	}
	return centersim.Advice{Run: adv.Advice == "run", Reason: adv.Reason, Score: adv.Score, Threshold: adv.Threshold, OSTs: adv.OSTs}, nil
}

// CheckRow compares one application of the ground truth with what AID
// learnt of it.
type CheckRow struct {
	App, TrueClass, Class string
	Runs                  int
	// Relative errors against the simulated runs' pattern (with
	// contention) and against the nominal one (alone); NaN when not
	// learnt.
	Volume, Interval, Throughput, Footprint             float64
	NomVolume, NomInterval, NomThroughput, NomFootprint float64
}

// CheckResult sums up a comparison with the truth.
type CheckResult struct {
	Rows           []CheckRow
	Found, Targets int
	// FalsePositives are applications found I/O-intensive that are not.
	FalsePositives []string
	// MaxError and MaxNominal are the largest relative errors of volume,
	// interval, throughput and footprint over the found targets.
	MaxError, MaxNominal float64
}

func relErr(got, want float64) float64 {
	if want == 0 {
		return math.NaN()
	}
	return math.Abs(got-want) / want
}

// Check compares the knowledge with the simulator's ground truth. An
// application that is not listed in the truth (a foreign one) and is
// found I/O-intensive is a false positive too.
func Check(k *Knowledge, t *centersim.Truth) *CheckResult {
	res := &CheckResult{}
	listed := map[string]bool{}
	for _, at := range t.Apps {
		id := fmt.Sprintf("%s/%s/%d", at.App.User, at.App.Name, at.App.Nodes)
		listed[id] = true
		row := CheckRow{App: id, TrueClass: at.Class, Class: "absent"}
		nan := math.NaN()
		row.Volume, row.Interval, row.Throughput, row.Footprint = nan, nan, nan, nan
		row.NomVolume, row.NomInterval, row.NomThroughput, row.NomFootprint = nan, nan, nan, nan
		a := k.Find(at.App.User, at.App.Name, at.App.Nodes)
		if a != nil {
			row.Class, row.Runs = a.Class, a.Runs
		}
		target := at.Class == centersim.ClassIOIntensive && at.Runs+at.RunsWithoutIO >= 5
		if target {
			res.Targets++
		}
		if a != nil && a.Class == ClassIOIntensive {
			if !target {
				res.FalsePositives = append(res.FalsePositives, id)
			} else {
				res.Found++
				if p := at.Pattern; p != nil {
					row.Volume, row.Interval = relErr(a.BurstBytes, p.BurstBytes), relErr(a.IntervalS, p.IntervalS)
					row.Throughput, row.Footprint = relErr(a.Throughput, p.Throughput), relErr(a.OSTFootprint, p.OSTFootprint)
					res.MaxError = max(res.MaxError, row.Volume, row.Interval, row.Throughput, row.Footprint)
				}
				if p := at.Nominal; p != nil {
					row.NomVolume, row.NomInterval = relErr(a.BurstBytes, p.BurstBytes), relErr(a.IntervalS, p.IntervalS)
					row.NomThroughput, row.NomFootprint = relErr(a.Throughput, p.Throughput), relErr(a.OSTFootprint, p.OSTFootprint)
					res.MaxNominal = max(res.MaxNominal, row.NomVolume, row.NomInterval, row.NomThroughput, row.NomFootprint)
				}
			}
		}
		res.Rows = append(res.Rows, row)
	}
	for _, a := range k.Apps {
		if a.Class == ClassIOIntensive && !listed[a.ID()] {
			res.FalsePositives = append(res.FalsePositives, a.ID())
		}
	}
	return res
}

// Write prints the comparison.
func (c *CheckResult) Write(w io.Writer) {
	pc := func(x float64) string {
		if math.IsNaN(x) {
			return "-"
		}
		return fmt.Sprintf("%.1f%%", 100*x)
	}
	fmt.Fprintf(w, "%-26s %-13s %-13s %5s  %-31s %s\n", "application", "truth", "learnt", "runs", "error vs runs: vol ival thr osts", "vs nominal: vol ival thr osts")
	for _, r := range c.Rows {
		fmt.Fprintf(w, "%-26s %-13s %-13s %5d  %-7s %-7s %-7s %-7s  %-7s %-7s %-7s %-7s\n", r.App, r.TrueClass, r.Class, r.Runs,
			pc(r.Volume), pc(r.Interval), pc(r.Throughput), pc(r.Footprint), pc(r.NomVolume), pc(r.NomInterval), pc(r.NomThroughput), pc(r.NomFootprint))
	}
	fp := "none"
	if len(c.FalsePositives) > 0 {
		fp = strings.Join(c.FalsePositives, ", ")
	}
	fmt.Fprintf(w, "\nfound %d of %d I/O-intensive applications; false positives: %s\nlargest error: %.1f%% against the simulated runs, %.1f%% against the nominal pattern\n",
		c.Found, c.Targets, fp, 100*c.MaxError, 100*c.MaxNominal)
}

// ReplayStats sums up one replay of a job queue.
type ReplayStats struct {
	Jobs, IOJobs        int
	MeanSlowdown, Worst float64 // I/O-intensive jobs' I/O slowdown
	// MakespanS is from the first submission of the listed applications'
	// jobs (the queue replayed) to the end of the last; Unfinished counts
	// those still running or waiting when the simulation ended.
	MakespanS  float64
	Unfinished int
	MeanWaitS  float64 // over every job that started
	// On "run" and on "delay": the I/O-intensive jobs started on each
	// answer (with advice followed, "delay" means held until MaxDelayS).
	RunJobs, DelayJobs         int
	RunSlowdown, DelaySlowdown float64
	Asked, RunAnswers          int
}

// Summarize computes the replay figures of a simulation.
func Summarize(res *centersim.Result, start time.Time) ReplayStats {
	var st ReplayStats
	var sl, rs, ds []float64
	var first, last time.Time
	waits := 0.0
	for _, j := range res.Jobs {
		if !j.Foreign {
			if first.IsZero() || j.Submit.Before(first) {
				first = j.Submit
			}
			if j.End.IsZero() {
				st.Unfinished++
			} else if j.End.After(last) {
				last = j.End
			}
		}
		if !j.Started() {
			continue
		}
		st.Jobs++
		waits += j.WaitS()
		if j.Class == centersim.ClassIOIntensive && !j.Foreign && j.WithIO && j.IOAloneS > 0 && !j.End.IsZero() {
			s := j.Slowdown()
			sl = append(sl, s)
			switch j.Advice {
			case "run":
				rs = append(rs, s)
			case "delay":
				ds = append(ds, s)
			}
		}
	}
	st.IOJobs = len(sl)
	st.MeanSlowdown = mean(sl)
	if len(sl) > 0 {
		st.Worst = slices.Max(sl)
	}
	st.RunJobs, st.DelayJobs = len(rs), len(ds)
	st.RunSlowdown, st.DelaySlowdown = mean(rs), mean(ds)
	if !last.IsZero() {
		st.MakespanS = last.Sub(first).Seconds()
	}
	if st.Jobs > 0 {
		st.MeanWaitS = waits / float64(st.Jobs)
	}
	return st
}

// ReplayQueue prepares a scenario for a replay: the listed applications'
// runs (the queue replayed) are submitted until a day before the end, so
// that the queue drains before the simulation stops and its makespan is
// measured.
func ReplayQueue(s *centersim.Scenario) {
	if s.Days < 2 {
		return
	}
	for i := range s.Apps {
		if s.Apps[i].ToDay == 0 && len(s.Apps[i].SubmitS) == 0 && s.Apps[i].Within == "" {
			s.Apps[i].ToDay = s.Days - 1
		}
	}
}

// Trial is one training job's dispatch: the IOLT's band shares averaged
// over the OSTs, and its I/O time.
type Trial struct {
	App    string
	At     time.Time
	F      []float64
	IOTime float64
}

// trialRecorder records the IOLT at each dispatch and always says "run".
type trialRecorder struct {
	a      *Advisor
	trials map[string]Trial // by app and time
}

func (t *trialRecorder) Advise(req centersim.AdviceRequest) (centersim.Advice, error) {
	if !strings.HasPrefix(req.App.Name, "train_") {
		return centersim.Advice{Run: true}, nil
	}
	w := t.a.Weights
	io, err := BuildIOLT(req.Log, req.At, w.BandWidth, len(w.W), t.a.Windows, t.a.Window)
	if err != nil {
		return centersim.Advice{}, err
	}
	f := make([]float64, len(w.W))
	for _, of := range io.F {
		for i := range f {
			f[i] += of[i] / float64(len(io.F))
		}
	}
	t.trials[req.App.String()+"@"+req.At.UTC().Format(time.RFC3339Nano)] = Trial{App: req.App.String(), At: req.At, F: f}
	return centersim.Advice{Run: true}, nil
}

// TrainingScenario adds training jobs to a scenario: small applications
// with a known pattern over every OST (n-to-n, a file per node striped
// once), dispatched at random times among the center's load, whose I/O
// time under each load trains the weights. rate is what each asks of an
// OST.
func TrainingScenario(s *centersim.Scenario, trials int, rate float64, seed uint64) *centersim.Scenario {
	rng := rand.New(rand.NewPCG(seed, 77))
	s.Nodes = 0 // every job starts when submitted: the trials see the load as it comes
	per := max(1, trials/4)
	for i := range 4 {
		nodes := s.OSTs
		bw := rate * float64(s.OSTs)
		sub := make([]float64, per)
		for k := range sub {
			sub[k] = rng.Float64() * (s.Days*86400 - 3600)
		}
		sort.Float64s(sub)
		s.Apps = append(s.Apps, centersim.AppSpec{User: "train", Name: fmt.Sprintf("train_%d", i), Nodes: nodes,
			Class: centersim.ClassIOIntensive, Runs: per, Iterations: [2]int{3, 3}, SubmitS: sub,
			Cycle:  []centersim.Phase{{ComputeS: float64(60 + 30*i), WriteBytes: bw * 30}},
			Layout: centersim.Layout{Model: "n-to-n", Files: s.OSTs, Stripe: 1}, Bandwidth: bw, TailS: 10})
	}
	return s
}

// RunTrials runs the scenario with training jobs and returns every trial.
func RunTrials(s *centersim.Scenario, seed uint64, a *Advisor) ([]Trial, error) {
	rec := &trialRecorder{a: a, trials: map[string]Trial{}}
	res, err := centersim.Run(s, centersim.Options{Seed: seed, Advisor: rec})
	if err != nil {
		return nil, err
	}
	var out []Trial
	for _, j := range res.Jobs {
		if !j.Started() || !strings.HasPrefix(j.Name, "train_") || j.IOAloneS <= 0 {
			continue
		}
		tr, ok := rec.trials[serverlog.App{User: j.User, Name: j.Name, Nodes: j.Nodes}.String()+"@"+j.Start.UTC().Format(time.RFC3339Nano)]
		if !ok {
			continue
		}
		tr.IOTime = j.IOTimeS
		out = append(out, tr)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].At.Before(out[b].At) })
	return out, nil
}

// WriteTrials writes trials as the CSV that ReadMeasurements reads.
func WriteTrials(w io.Writer, trials []Trial, bandWidth, rate float64) error {
	fmt.Fprintf(w, "# band_width=%g\n# train_rate=%g\n", bandWidth, rate)
	if len(trials) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString("trial,app,at,io_time_s")
	for i := range trials[0].F {
		fmt.Fprintf(&b, ",f%d", i)
	}
	b.WriteString("\n")
	for i, t := range trials {
		fmt.Fprintf(&b, "%d,%s,%s,%.3f", i, t.App, t.At.UTC().Format(time.RFC3339), t.IOTime)
		for _, f := range t.F {
			fmt.Fprintf(&b, ",%.5f", f)
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
