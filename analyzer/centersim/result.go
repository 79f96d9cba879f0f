package centersim

import (
	"math"
	"sort"
	"time"

	"iopred/analyzer/serverlog"
)

// Result is what happened in one simulation.
type Result struct {
	Seed    uint64
	Jobs    []JobRecord // every submitted job, by id
	Truth   *Truth
	Samples int     // log samples written
	Bytes   float64 // bytes moved by jobs and transfers (background excluded)
}

// JobRecord is one job as the scheduler logged it, with what the
// simulator knows besides.
type JobRecord struct {
	serverlog.Job
	Submit     time.Time
	Limit      time.Duration
	Class      string
	Foreign    bool // not a listed application
	WithIO     bool
	Iterations int
	// IOTimeS is the time the job spent in its bursts; IOAloneS what they
	// would have taken on an idle file system.
	IOTimeS  float64
	IOAloneS float64
	// Advice is what the advisor said when the job started ("run",
	// "delay"; empty without an advisor); Held how many times advice held
	// it back.
	Advice string
	Reason string
	Held   int
	Bursts []BurstRecord // listed applications only
}

// Started tells whether the job ran.
func (j *JobRecord) Started() bool { return !j.Start.IsZero() }

// WaitS is the time from submission to start.
func (j *JobRecord) WaitS() float64 { return j.Start.Sub(j.Submit).Seconds() }

// Slowdown is the job's I/O time over its I/O time on an idle file
// system (1 for a job without I/O).
func (j *JobRecord) Slowdown() float64 {
	if j.IOAloneS <= 0 {
		return 1
	}
	return j.IOTimeS / j.IOAloneS
}

// BurstRecord is one burst of a job, times from the job's start.
type BurstRecord struct {
	StartS     float64 `json:"start_s"`
	EndS       float64 `json:"end_s"`
	WriteBytes float64 `json:"write_bytes"`
	ReadBytes  float64 `json:"read_bytes"`
	OSTs       int     `json:"osts"`
	AloneS     float64 `json:"alone_s"`
	Kind       int     `json:"kind"` // phase of the cycle; -1 for the prologue
}

// Truth is the ground truth of a simulation: every listed application
// with what it really did.
type Truth struct {
	Scenario     string      `json:"scenario"`
	Seed         uint64      `json:"seed"`
	Start        time.Time   `json:"start"`
	End          time.Time   `json:"end"`
	StepS        int         `json:"step_s"`
	OSTs         int         `json:"osts"`
	OSTBandwidth float64     `json:"ost_bandwidth"`
	Apps         []AppTruth  `json:"apps"`
	Foreign      ForeignInfo `json:"foreign"`
}

// ForeignInfo counts the foreign workload.
type ForeignInfo struct {
	Jobs int `json:"jobs"`
	Apps int `json:"apps"`
}

// AppRef names an application as the job log does.
type AppRef struct {
	User  string `json:"user"`
	Name  string `json:"name"`
	Nodes int    `json:"nodes"`
}

// AppTruth is one listed application.
type AppTruth struct {
	App   AppRef `json:"app"`
	Class string `json:"class"`
	// Runs counts the completed runs with I/O in the job log,
	// RunsWithoutIO those without.
	Runs          int      `json:"runs"`
	RunsWithoutIO int      `json:"runs_without_io"`
	JobIDs        []string `json:"job_ids"`
	Within        string   `json:"within,omitempty"`
	FileModel     string   `json:"file_model"`
	Files         int      `json:"files"`
	Stripe        int      `json:"stripe"`
	// OSTFootprint is the number of distinct OSTs one burst touches.
	OSTFootprint int `json:"ost_footprint"`
	// Pattern is what the cycle's bursts did in the simulated runs (with
	// contention); Nominal what they do alone. The prologue is left out
	// of both (it is in the signature).
	Pattern   *Pattern   `json:"pattern,omitempty"`
	Nominal   *Pattern   `json:"nominal,omitempty"`
	Signature *Signature `json:"signature,omitempty"`
}

// Pattern is an application's I/O pattern, averaged over bursts.
type Pattern struct {
	BurstsPerRun float64 `json:"bursts_per_run"`
	BurstBytes   float64 `json:"burst_bytes"`
	WriteBytes   float64 `json:"write_bytes"`
	ReadBytes    float64 `json:"read_bytes"`
	IntervalS    float64 `json:"interval_s"` // from one burst's start to the next's
	BurstS       float64 `json:"burst_s"`
	Throughput   float64 `json:"throughput_bytes_per_s"`
	OSTFootprint float64 `json:"ost_footprint"`
}

// Signature is an application's I/O signature as IOSI defines it: the
// server-side throughput of one run alone on the file system, sampled on
// the log's grid from the run's start, for the smallest iteration count.
// Peaks are the rates during the bursts, before sampling.
type Signature struct {
	Iterations int         `json:"iterations"`
	StepS      float64     `json:"step_s"`
	TS         []float64   `json:"t_s"`
	Write      []float64   `json:"write_bytes_per_s"`
	Read       []float64   `json:"read_bytes_per_s"`
	Bursts     []SigBurst  `json:"bursts"`
	DurationS  float64     `json:"duration_s"`
	Volume     VolumeTotal `json:"volume"`
}

// VolumeTotal is the bytes a signature moves.
type VolumeTotal struct {
	WriteBytes float64 `json:"write_bytes"`
	ReadBytes  float64 `json:"read_bytes"`
}

// SigBurst is one burst of a signature, in the JSON form of `iopred
// signature`.
type SigBurst struct {
	StartS        float64 `json:"start_s"`
	EndS          float64 `json:"end_s"`
	WriteBytes    float64 `json:"write_bytes"`
	ReadBytes     float64 `json:"read_bytes"`
	PeakBytesPerS float64 `json:"peak_bytes_per_s"`
}

func (e *engine) result() *Result {
	r := &Result{Seed: e.opt.Seed, Samples: e.samples, Bytes: e.transfersBytes}
	var jobs []*job
	for _, j := range e.w.jobs {
		if j.state != jobWaiting {
			jobs = append(jobs, j)
		}
	}
	sort.Slice(jobs, func(a, b int) bool { return jobs[a].id < jobs[b].id })
	for _, j := range jobs {
		r.Jobs = append(r.Jobs, e.record(j))
	}
	r.Truth = e.truth(jobs)
	return r
}

func (e *engine) record(j *job) JobRecord {
	sp := j.app.spec
	rec := JobRecord{Job: serverlog.Job{ID: itoa(j.id), User: sp.User, Name: sp.Name, Nodes: sp.Nodes, State: j.endState},
		Submit: e.at(j.submit), Limit: dur(j.limitS), Class: j.app.class, Foreign: j.app.foreign, WithIO: j.withIO,
		Iterations: j.iterations, IOTimeS: j.ioTime, IOAloneS: j.ioAlone, Advice: j.advice, Reason: j.reason, Held: j.held,
		Bursts: j.bursts}
	switch j.state {
	case jobDone:
		if !math.IsNaN(j.start) {
			rec.Start = e.at(j.start)
		}
		rec.End = e.at(j.end)
	case jobRunning:
		rec.Start, rec.State = e.at(j.start), "RUNNING"
	case jobQueued:
		rec.State = "PENDING"
	}
	return rec
}

func (e *engine) at(s float64) time.Time { return e.s.Start.Add(dur(s)) }

func itoa(i int) string {
	var b [20]byte
	n := len(b)
	for {
		n--
		b[n] = byte('0' + i%10)
		i /= 10
		if i == 0 {
			break
		}
	}
	return string(b[n:])
}

func (e *engine) truth(jobs []*job) *Truth {
	s := e.s
	t := &Truth{Scenario: s.Name, Seed: e.opt.Seed, Start: s.Start, End: s.End(), StepS: s.StepS, OSTs: s.OSTs, OSTBandwidth: s.OSTBandwidth}
	byApp := map[*appRT][]*job{}
	foreignApps := map[*appRT]bool{}
	for _, j := range jobs {
		if j.app.foreign {
			t.Foreign.Jobs++
			foreignApps[j.app] = true
			continue
		}
		byApp[j.app] = append(byApp[j.app], j)
	}
	t.Foreign.Apps = len(foreignApps)
	for _, a := range e.w.apps {
		sp := a.spec
		at := AppTruth{App: AppRef{User: sp.User, Name: sp.Name, Nodes: sp.Nodes}, Class: a.class, Within: sp.Within,
			FileModel: sp.Layout.Model, Files: sp.Layout.Files, Stripe: sp.Layout.Stripe, OSTFootprint: sp.Layout.footprint(s.OSTs)}
		var acc patternAcc
		for _, j := range byApp[a] {
			at.JobIDs = append(at.JobIDs, itoa(j.id))
			if j.state != jobDone || j.endState != "COMPLETED" {
				continue
			}
			if !j.withIO {
				at.RunsWithoutIO++
				continue
			}
			at.Runs++
			acc.run(j.bursts)
		}
		if len(a.cycle) > 0 {
			at.Pattern = acc.pattern()
			at.Nominal, at.Signature = e.nominal(a)
		}
		t.Apps = append(t.Apps, at)
	}
	return t
}

// patternAcc averages the cycle bursts of runs.
type patternAcc struct {
	runs, bursts, intervals     int
	bytes, w, r, dur, thr, osts float64
	ivalSum                     float64
}

func (p *patternAcc) run(bursts []BurstRecord) {
	p.runs++
	prev := -1.0
	for _, b := range bursts {
		if b.Kind < 0 {
			continue
		}
		p.bursts++
		p.bytes += b.WriteBytes + b.ReadBytes
		p.w += b.WriteBytes
		p.r += b.ReadBytes
		d := b.EndS - b.StartS
		p.dur += d
		if d > 0 {
			p.thr += (b.WriteBytes + b.ReadBytes) / d
		}
		p.osts += float64(b.OSTs)
		if prev >= 0 {
			p.ivalSum += b.StartS - prev
			p.intervals++
		}
		prev = b.StartS
	}
}

func (p *patternAcc) pattern() *Pattern {
	if p.bursts == 0 {
		return nil
	}
	n := float64(p.bursts)
	out := &Pattern{BurstsPerRun: n / float64(p.runs), BurstBytes: p.bytes / n, WriteBytes: p.w / n, ReadBytes: p.r / n,
		BurstS: p.dur / n, Throughput: p.thr / n, OSTFootprint: p.osts / n}
	if p.intervals > 0 {
		out.IntervalS = p.ivalSum / float64(p.intervals)
	}
	return out
}

// nominal runs the application alone, without jitter, for its smallest
// iteration count: its nominal pattern and its signature.
func (e *engine) nominal(a *appRT) (*Pattern, *Signature) {
	s := e.s
	sp := a.spec
	rate := aloneRate(sp.Bandwidth, a.maxShare, s.OSTBandwidth)
	sig := &Signature{Iterations: sp.Iterations[0], StepS: float64(s.StepS)}
	var acc patternAcc
	var bursts []BurstRecord
	t := 0.0
	burst := func(p Phase, kind int) {
		t += p.ComputeS
		b := p.WriteBytes + p.ReadBytes
		if b <= 0 {
			return
		}
		d := b / rate
		bursts = append(bursts, BurstRecord{StartS: t, EndS: t + d, WriteBytes: p.WriteBytes, ReadBytes: p.ReadBytes,
			OSTs: sp.Layout.footprint(s.OSTs), AloneS: d, Kind: kind})
		sig.Bursts = append(sig.Bursts, SigBurst{StartS: t, EndS: t + d, WriteBytes: p.WriteBytes, ReadBytes: p.ReadBytes, PeakBytesPerS: rate})
		sig.Volume.WriteBytes += p.WriteBytes
		sig.Volume.ReadBytes += p.ReadBytes
		t += d
	}
	if a.prologue != nil {
		burst(*a.prologue, -1)
	}
	for _, k := range a.phases(sp.Iterations[0]) {
		burst(a.cycle[k], k)
	}
	t += a.tailS
	sig.DurationS = t
	acc.run(bursts)
	n := int(math.Ceil(t / sig.StepS))
	sig.TS, sig.Write, sig.Read = make([]float64, n), make([]float64, n), make([]float64, n)
	for k := range n {
		sig.TS[k] = float64(k) * sig.StepS
	}
	for _, b := range bursts {
		tot := b.WriteBytes + b.ReadBytes
		for k := int(b.StartS / sig.StepS); k < n && float64(k)*sig.StepS < b.EndS; k++ {
			lo, hi := math.Max(b.StartS, float64(k)*sig.StepS), math.Min(b.EndS, float64(k+1)*sig.StepS)
			if hi <= lo {
				continue
			}
			moved := rate * (hi - lo) / sig.StepS
			sig.Write[k] += moved * b.WriteBytes / tot
			sig.Read[k] += moved * b.ReadBytes / tot
		}
	}
	return acc.pattern(), sig
}
