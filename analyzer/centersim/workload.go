package centersim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
)

// RNG streams: each part of the simulation draws from its own, so that
// changing one part (the scheduler holding a job) leaves the others
// (background, interactive traffic, every job's own compute jitter and
// file placements) exactly as they were.
const (
	streamWorkload uint64 = iota + 1
	streamBackground
	streamInteractive
	streamForeign
	streamOutage
	streamPlacement
	streamJob = 1 << 32 // + job index
)

func newRNG(seed, stream uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, stream)) }

// step is one iteration of a job: compute, then (when bytes are set) one
// burst.
type step struct {
	computeS    float64
	write, read float64
	kind        int // which phase of the application's cycle (-1: prologue)
}

// appRT is an application ready to run: its spec with the cycle resolved.
type appRT struct {
	spec     *AppSpec
	id       string
	class    string
	cycle    []Phase
	prologue *Phase
	tailS    float64
	foreign  bool
	maxShare float64
	// passes: one iteration is a pass over the whole cycle (a traced
	// run), not one phase of it.
	passes bool
}

// phases returns the phases of n iterations.
func (a *appRT) phases(n int) []int {
	if a.passes {
		n *= len(a.cycle)
	}
	out := make([]int, n)
	for i := range out {
		out[i] = i % len(a.cycle)
	}
	return out
}

// job is one batch job, from its spec to what happened to it.
type job struct {
	idx        int // creation order: the job's RNG stream
	id         int // the scheduler's job id, given at submission
	app        *appRT
	withIO     bool
	iterations int
	steps      []step
	tailS      float64
	steady     float64 // bytes/s of steady I/O through the run
	submit     float64 // seconds from the start; NaN until a nested job's host starts
	limitS     float64
	nominalS   float64
	ioAloneS   float64 // planned I/O time on an idle file system
	failAtS    float64 // > 0: the job fails this long after it starts
	cancelAtS  float64 // > 0: the job is cancelled this long after submission, before it starts
	host       *job    // nested: submitted when host starts
	nestAt     float64 // fraction of the host's nominal time after its start
	nested     []*job  // jobs waiting for this one to start

	rng       *rand.Rand
	state     int
	start     float64
	end       float64
	stepIdx   int
	fixed     *placement
	flow      *flow
	steadyF   *flow
	endState  string
	bursts    []BurstRecord
	ioTime    float64
	ioAlone   float64
	advice    string
	reason    string
	heldSince float64
	held      int
	asked     float64 // time of the last advice asked
	lastRun   bool
	hintOSTs  []int   // the placement hint of the last advice
	placed    []int32 // the OSTs its files go on (Options.Place), ascending; nil: the allocator's
	timerSeq  int     // invalidates timers of a job that ended
}

const (
	jobWaiting = iota
	jobQueued
	jobRunning
	jobDone
)

// workload is everything the scenario submits.
type workload struct {
	apps        []*appRT
	jobs        []*job
	interactive []transfer
}

// transfer is one interactive transfer.
type transfer struct {
	at    float64
	bytes float64
	read  bool
	osts  int
}

func (s *Scenario) buildWorkload(seed uint64) (*workload, error) {
	w := &workload{}
	rng := newRNG(seed, streamWorkload)
	period := s.Days * 86400
	byID := map[string]*appRT{}
	for i := range s.Apps {
		a, err := s.resolveApp(&s.Apps[i])
		if err != nil {
			return nil, err
		}
		w.apps = append(w.apps, a)
		byID[a.id] = a
	}
	for _, a := range w.apps {
		sp := a.spec
		if sp.Within != "" {
			continue
		}
		n := sp.Runs + sp.RunsWithoutIO
		if len(sp.SubmitS) > 0 {
			for i, t := range sp.SubmitS {
				w.newJob(s, a, i < sp.Runs, seed).submit = t
			}
			continue
		}
		withIO := make([]bool, n)
		for i := range sp.Runs {
			withIO[i] = true
		}
		rng.Shuffle(n, func(i, j int) { withIO[i], withIO[j] = withIO[j], withIO[i] })
		from, to := sp.FromDay*86400, sp.toDay(s)*86400
		slot := (to - from) / float64(n)
		for i := range n {
			j := w.newJob(s, a, withIO[i], seed)
			j.submit = from + (float64(i)+0.1+0.8*rng.Float64())*slot
		}
	}
	// Nested applications: each run rides on a run of its host.
	for _, a := range w.apps {
		sp := a.spec
		if sp.Within == "" {
			continue
		}
		var hosts []*job
		for _, j := range w.jobs {
			if j.app.id == sp.Within && j.withIO {
				hosts = append(hosts, j)
			}
		}
		if len(hosts) == 0 {
			return nil, fmt.Errorf("scenario: %s: its host %s has no run with I/O", a.id, sp.Within)
		}
		perm := rng.Perm(len(hosts))
		for i := range sp.Runs + sp.RunsWithoutIO {
			h := hosts[perm[i%len(hosts)]]
			j := w.newJob(s, a, i < sp.Runs, seed)
			j.submit = math.NaN()
			j.host, j.nestAt = h, 0.1+0.15*rng.Float64()
			// The nested run lasts a quarter to a half of its host's.
			d := h.nominalS * (0.25 + 0.25*rng.Float64())
			j.steps = []step{{computeS: d}}
			j.nominalS, j.tailS = d, 0
			j.limitS = limitFor(d, 2)
			h.nested = append(h.nested, j)
		}
	}
	if err := s.foreignJobs(w, seed, period); err != nil {
		return nil, err
	}
	s.interactiveTransfers(w, seed, period)
	return w, nil
}

// resolveApp turns a spec into a runnable application.
func (s *Scenario) resolveApp(sp *AppSpec) (*appRT, error) {
	a := &appRT{spec: sp, id: sp.ID(), class: sp.Class, cycle: sp.Cycle, prologue: sp.Prologue, tailS: sp.TailS,
		maxShare: sp.Layout.maxShare(s.OSTs)}
	if sp.Trace != "" {
		p, err := LoadTraceProfile(sp.Trace, 0)
		if err != nil {
			return nil, fmt.Errorf("scenario: %s: %w", a.id, err)
		}
		a.cycle, a.tailS = p.Program(sp.TraceIntervalS, sp.TraceBurstBytes)
		a.tailS += sp.TailS
		a.passes = true
	}
	return a, nil
}

func limitFor(nominal, factor float64) float64 {
	l := nominal * factor
	return math.Max(600, math.Ceil(l/300)*300)
}

// newJob makes one run of a listed application.
func (w *workload) newJob(s *Scenario, a *appRT, withIO bool, seed uint64) *job {
	j := &job{idx: len(w.jobs), app: a, withIO: withIO}
	j.rng = newRNG(seed, streamJob+uint64(j.idx))
	w.jobs = append(w.jobs, j)
	sp := a.spec
	speed := 1 + math.Abs(sp.RunNoise*j.rng.NormFloat64())
	jit := func(x float64) float64 {
		return math.Max(0, x*speed*(1+sp.Jitter*j.rng.NormFloat64()))
	}
	switch {
	case len(a.cycle) > 0:
		j.iterations = sp.Iterations[0] + j.rng.IntN(sp.Iterations[1]-sp.Iterations[0]+1)
		if a.prologue != nil {
			st := step{computeS: jit(a.prologue.ComputeS), kind: -1}
			if withIO {
				st.write, st.read = a.prologue.WriteBytes, a.prologue.ReadBytes
			}
			j.steps = append(j.steps, st)
		}
		for _, k := range a.phases(j.iterations) {
			p := a.cycle[k]
			st := step{computeS: jit(p.ComputeS), kind: k}
			if withIO {
				st.write, st.read = p.WriteBytes, p.ReadBytes
			}
			j.steps = append(j.steps, st)
		}
		j.tailS = jit(a.tailS)
	default:
		d := logUniform(j.rng, sp.DurationS[0], sp.DurationS[1])
		switch {
		case sp.Class == ClassRandom && withIO:
			j.steps, j.tailS = randomSteps(j.rng, d, sp.RandomPerHour, sp.RandomBytes, 0.5)
		default:
			j.steps = []step{{computeS: d}}
		}
		if withIO && sp.LightRate > 0 {
			j.steady = sp.LightRate * math.Exp(0.3*j.rng.NormFloat64())
		}
	}
	j.plan(s)
	j.limitS = limitFor(j.nominalS, 3)
	return j
}

// plan computes the job's nominal run time and I/O time on an idle file
// system.
func (j *job) plan(s *Scenario) {
	rate := aloneRate(j.app.spec.Bandwidth, j.app.maxShare, s.OSTBandwidth)
	j.nominalS, j.ioAloneS = j.tailS, 0
	for _, st := range j.steps {
		j.nominalS += st.computeS
		if b := st.write + st.read; b > 0 {
			j.ioAloneS += b / rate
		}
	}
	j.nominalS += j.ioAloneS
}

// randomSteps draws bursts at Poisson times with log-normal volumes over
// a run of d seconds.
func randomSteps(rng *rand.Rand, d, perHour, median, readShare float64) ([]step, float64) {
	if perHour <= 0 || median <= 0 {
		return []step{{computeS: d}}, 0
	}
	var steps []step
	t := 0.0
	for {
		gap := rng.ExpFloat64() * 3600 / perHour
		if t+gap >= d {
			return steps, d - t
		}
		t += gap
		b := median * math.Exp(1.2*rng.NormFloat64())
		st := step{computeS: gap, kind: len(steps)}
		if rng.Float64() < readShare {
			st.read = b
		} else {
			st.write = b
		}
		steps = append(steps, st)
	}
}

func logUniform(rng *rand.Rand, lo, hi float64) float64 {
	if hi <= lo {
		return lo
	}
	return lo * math.Exp(rng.Float64()*math.Log(hi/lo))
}

// foreignNames are job names of the foreign applications, suffixed with
// a number.
var foreignNames = []string{"vasp", "gromacs", "namd", "cp2k", "qe_scf", "wrf", "cesm", "openfoam", "nwchem", "amber",
	"lammps", "python", "run", "job", "test", "postproc", "analysis", "train", "md", "cfd"}

func (s *Scenario) foreignJobs(w *workload, seed uint64, period float64) error {
	f := s.Foreign
	if f.Jobs == 0 {
		return nil
	}
	rng := newRNG(seed, streamForeign)
	apps := make([]*appRT, f.Apps)
	for i := range apps {
		sp := &AppSpec{User: fmt.Sprintf("u%04d", rng.IntN(f.Users)), Name: fmt.Sprintf("%s_%d", foreignNames[rng.IntN(len(foreignNames))], i),
			Nodes: 1 << rng.IntN(9), Class: ClassNone, Bandwidth: 2e9 * s.Noise,
			Layout: Layout{Model: "n-to-m", Files: 1 + rng.IntN(8), Stripe: 1 + rng.IntN(4)}}
		switch u := rng.Float64(); {
		case u < f.Light:
			sp.Class, sp.LightRate = ClassLight, f.LightRate*s.Noise*math.Exp(rng.NormFloat64())
		case u < f.Light+f.Random:
			sp.Class, sp.RandomPerHour, sp.RandomBytes = ClassRandom, f.RandomPerHour, f.RandomBytes*s.Noise
		}
		apps[i] = &appRT{spec: sp, id: sp.ID(), class: sp.Class, foreign: true, maxShare: sp.Layout.maxShare(s.OSTs)}
	}
	zipf := rand.NewZipf(rng, math.Max(f.Zipf, 1.0001), 1, uint64(f.Apps-1))
	type sub struct {
		at  float64
		app *appRT
		d   float64
		u   float64
	}
	subs := make([]sub, f.Jobs)
	for i := range subs {
		subs[i] = sub{at: rng.Float64() * period, app: apps[zipf.Uint64()],
			d: math.Min(f.MaxS, math.Max(60, f.MedianS*math.Exp(f.Sigma*rng.NormFloat64()))), u: rng.Float64()}
	}
	sort.Slice(subs, func(a, b int) bool { return subs[a].at < subs[b].at })
	for _, x := range subs {
		a, sp := x.app, x.app.spec
		j := &job{idx: len(w.jobs), app: a, withIO: a.class != ClassNone, submit: x.at, iterations: 1}
		j.rng = newRNG(seed, streamJob+uint64(j.idx))
		w.jobs = append(w.jobs, j)
		switch a.class {
		case ClassRandom:
			j.steps, j.tailS = randomSteps(j.rng, x.d, sp.RandomPerHour, sp.RandomBytes, 0.4)
		default:
			j.steps = []step{{computeS: x.d}}
			if a.class == ClassLight {
				j.steady = sp.LightRate
			}
		}
		j.plan(s)
		j.limitS = limitFor(j.nominalS, 1.3+1.2*j.rng.Float64())
		switch {
		case x.u < f.Cancelled:
			j.cancelAtS = 60 + j.rng.Float64()*7200
		case x.u < f.Cancelled+f.Failed:
			j.failAtS = j.nominalS * (0.05 + 0.75*j.rng.Float64())
		}
	}
	return nil
}

func (s *Scenario) interactiveTransfers(w *workload, seed uint64, period float64) {
	in := s.Interactive
	rate := in.PerHour * s.Noise / 3600
	if rate <= 0 || in.MedianBytes <= 0 {
		return
	}
	rng := newRNG(seed, streamInteractive)
	peak := rate * (1 + s.Background.Diurnal)
	for t := rng.ExpFloat64() / peak; t < period; t += rng.ExpFloat64() / peak {
		if rng.Float64()*peak > rate*s.diurnal(t) {
			continue // thinning: fewer transfers at night
		}
		w.interactive = append(w.interactive, transfer{at: t, bytes: in.MedianBytes * math.Exp(in.Sigma*rng.NormFloat64()),
			read: rng.Float64() < in.ReadFraction, osts: 1 + rng.IntN(in.MaxOSTs)})
	}
}

// diurnal is the day's modulation of traffic at t seconds from the start:
// 1 on average, highest mid-afternoon in the scenario's time zone.
func (s *Scenario) diurnal(t float64) float64 {
	if s.Background.Diurnal == 0 {
		return 1
	}
	_, off := s.Start.Zone()
	sod := float64((s.Start.Unix()+int64(off))%86400) + t // seconds since a local midnight
	h := math.Mod(sod/3600, 24)
	return 1 + s.Background.Diurnal*math.Sin(2*math.Pi*(h-9)/24)
}
