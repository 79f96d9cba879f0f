package centersim

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"iopred/analyzer/serverlog"
)

// FamilyDrift names the second scenario family (Scenario.Family). Its
// generator shares nothing with the fluid engine but the output types: it
// draws the center (24 to 1,000 OSTs, 2 to 10 s steps, the OST bandwidth)
// and every application from the seed, and writes each run's bursts
// straight onto the log as they were perturbed, instead of letting a
// scheduler and a bandwidth-sharing model perturb them. What it models is
// what a real center's log shows and the first family does not:
//   - whole runs prolonged by contention, by 0 to 10% and now and then
//     by about 30%, each burst drifting and lasting longer in its own
//     measure on top;
//   - restarts: runs of an application that did no I/O at all;
//   - long intervals (hourly checkpoints, a few bursts per run) and
//     modest bursts at a low rate per OST on few OSTs;
//   - foreign bursts of the targets' own sizes and durations, on OSTs the
//     targets share, and jobs that share an OST pool.
//
// The truth of a target is its clean signature (alone, undisturbed
// burst durations and rates) on the time line of its least-disturbed
// run: the bursts start where that run's did, which is what IOSI's
// duration correction takes as the reference.
const FamilyDrift = "drift"

// driftStream is the family's own RNG stream family, far from the
// engine's streams.
const driftStream uint64 = 0xD21F7 << 40

// driftKind is what a drift scenario's preset fixes; everything else is
// drawn from the seed.
type driftKind struct {
	targets  int
	runs     [2]int // runs with I/O per target
	restarts [2]int // runs without I/O
	decoys   bool   // light, irregular, piggy-back and probation applications
}

var driftKinds = map[string]driftKind{
	"drift":     {targets: 6, runs: [2]int{8, 11}, restarts: [2]int{1, 3}},
	"drift-aid": {targets: 6, runs: [2]int{8, 11}, restarts: [2]int{2, 4}, decoys: true},
}

func driftIOSIScenario() *Scenario {
	return &Scenario{Name: "drift", Family: FamilyDrift, Days: 3, FS: "drift"}
}

func driftAIDScenario() *Scenario {
	return &Scenario{Name: "drift-aid", Family: FamilyDrift, Days: 20, FS: "dria"}
}

// DrawFamily fills what the scenario's family draws from the seed and
// the scenario leaves at zero: for the drift family the OST count
// (log-uniform in 24..1000), the step (2 to 10 s) and the OST bandwidth.
// It does nothing for the first family.
func (s *Scenario) DrawFamily(seed uint64) {
	if s.Family != FamilyDrift {
		return
	}
	rng := newRNG(seed, driftStream)
	osts := int(math.Round(logUniform(rng, 24, 1000)))
	step := 2 + rng.IntN(9)
	bw := 250e6 + 350e6*rng.Float64()
	if s.OSTs == 0 {
		s.OSTs = osts
	}
	if s.StepS == 0 {
		s.StepS = step
	}
	if s.OSTBandwidth == 0 {
		s.OSTBandwidth = bw
	}
}

// dBurst is one burst on the log: bytes spread evenly over [at, at+d)
// on the OSTs from first, round robin over k of them.
type dBurst struct {
	at, d       float64
	write, read float64
	first, k    int
}

// dRun is one run of a drift-family application.
type dRun struct {
	app     *dApp
	start   float64
	dur     float64
	withIO  bool
	stretch float64
	bursts  []dBurst
	records []BurstRecord
	state   string
}

// dApp is one application of a drift scenario.
type dApp struct {
	ref     AppRef
	class   string
	foreign bool
	within  *dApp
	// The clean program: compute before each burst, the burst's bytes,
	// its rate alone; the tail after the last one.
	compute []float64
	bytes   []float64
	readFr  []float64
	rate    float64
	tail    float64
	k       int // OSTs per burst
	pool    []int
	runs    []*dRun
	// For light and irregular applications.
	light, perHour, burstBytes float64
	duration                   [2]float64
}

// runDrift simulates a drift-family scenario.
func runDrift(s *Scenario, opt Options) (*Result, error) {
	kind, ok := driftKinds[s.Name]
	if !ok {
		kind = driftKinds["drift"]
	}
	g := &driftGen{s: s, rng: newRNG(opt.Seed, driftStream+1), kind: kind, period: s.Days * 86400}
	g.apps()
	g.foreign()
	g.schedule()
	for _, a := range g.all {
		for _, r := range a.runs {
			g.perform(r)
		}
	}
	if err := g.render(opt); err != nil {
		return nil, err
	}
	return g.result(opt.Seed), nil
}

type driftGen struct {
	s      *Scenario
	rng    *rand.Rand
	kind   driftKind
	period float64
	all    []*dApp
	// targets is the number of listed applications at the head of all.
	listed int
	// poolStart is the first OST of the pool the few-OST applications
	// and the foreign jobs that mimic them share.
	poolStart int
}

// pickOSTs draws the first OST of a burst: from the application's pool
// when it has one, else anywhere.
func (g *driftGen) pickOSTs(a *dApp, rng *rand.Rand) int {
	if len(a.pool) > 0 {
		return a.pool[rng.IntN(len(a.pool))]
	}
	return rng.IntN(g.s.OSTs)
}

// apps draws the listed applications. The targets cycle through four
// shapes so that every seed has each: a regular checkpointer, an hourly
// one with few bursts per run, a modest writer at a low rate on few OSTs
// sharing an OST pool with foreign jobs, and one with a read prologue
// and bursts of varying sizes.
func (g *driftGen) apps() {
	s, rng := g.s, g.rng
	bw := s.OSTBandwidth
	users := []string{"abe", "bea", "cyd", "dov", "eli", "flo", "gil", "hana", "ivo", "jo"}
	names := []string{"climate", "plasma", "combust", "quake", "cosmo", "ocean", "fusion", "dynamo", "lattice", "seismic"}
	g.poolStart = rng.IntN(s.OSTs)
	for i := range g.kind.targets {
		a := &dApp{ref: AppRef{User: users[i%len(users)], Name: fmt.Sprintf("%s_%c", names[rng.IntN(len(names))], 'a'+i),
			Nodes: 16 << rng.IntN(6)}, class: ClassIOIntensive}
		shape := i % 4
		var n int
		var ival, vol float64
		switch shape {
		case 0: // regular
			a.k = min(s.OSTs, 8<<rng.IntN(4))
			n = 4 + rng.IntN(6)
			ival = 150 + 450*rng.Float64()
			a.rate = float64(a.k) * bw * (0.3 + 0.5*rng.Float64())
			vol = a.rate * ival * (0.08 + 0.12*rng.Float64())
		case 1: // hourly, few bursts
			a.k = min(s.OSTs, 16<<rng.IntN(3))
			n = 2 + rng.IntN(3)
			ival = 3000 + 1200*rng.Float64()
			a.rate = float64(a.k) * bw * (0.4 + 0.4*rng.Float64())
			vol = a.rate * (60 + 120*rng.Float64())
		case 2: // modest, on few OSTs in a shared pool
			n = 3 + rng.IntN(4)
			ival = 900 + 900*rng.Float64()
			if g.kind.decoys {
				// For AID, which reads every OST: a low rate per OST.
				a.k = 2 + rng.IntN(3)
				a.rate = float64(a.k) * bw * (0.08 + 0.12*rng.Float64())
			} else {
				// For IOSI, which reads the aggregate: few OSTs, but
				// driven hard enough to stand above the others' sum.
				a.k = 4 + rng.IntN(5)
				a.rate = float64(a.k) * bw * (0.5 + 0.3*rng.Float64())
			}
			vol = a.rate * (40 + 80*rng.Float64())
			a.pool = g.pool(a.k)
		case 3: // prologue read and bursts of two or three sizes
			a.k = min(s.OSTs, 8<<rng.IntN(4))
			n = 5 + rng.IntN(5)
			ival = 200 + 400*rng.Float64()
			a.rate = float64(a.k) * bw * (0.3 + 0.5*rng.Float64())
			vol = a.rate * ival * (0.06 + 0.1*rng.Float64())
		}
		if g.kind.decoys {
			// AID's center: longer runs, more bursts.
			n = max(n, int(math.Ceil(3*3600/ival)))
			if shape == 1 {
				n = 3 + rng.IntN(3)
			}
		}
		sizes := []float64{1}
		if shape == 3 {
			sizes = []float64{1, 0.4 + 0.3*rng.Float64(), 0.2 + 0.2*rng.Float64()}[:2+rng.IntN(2)]
		}
		for b := range n {
			c := ival - vol*sizes[b%len(sizes)]/a.rate
			if b == 0 {
				c = 60 + ival*rng.Float64()
			}
			a.compute = append(a.compute, max(20, c))
			a.bytes = append(a.bytes, vol*sizes[b%len(sizes)])
			a.readFr = append(a.readFr, 0)
		}
		if shape == 3 {
			a.readFr[0] = 1
			a.bytes[0] = 1.5 * vol
		}
		a.tail = 60 + 240*rng.Float64()
		nr := g.kind.runs[0] + rng.IntN(g.kind.runs[1]-g.kind.runs[0]+1)
		nx := g.kind.restarts[0] + rng.IntN(g.kind.restarts[1]-g.kind.restarts[0]+1)
		g.addRuns(a, nr, nx)
		g.all = append(g.all, a)
	}
	if !g.kind.decoys {
		g.listed = len(g.all)
		return
	}
	add := func(a *dApp, runs int) {
		g.addRuns(a, runs, 0)
		g.all = append(g.all, a)
	}
	// Too few runs: probation, though regular.
	for i := range 2 {
		a := &dApp{ref: AppRef{User: fmt.Sprintf("pro%d", i), Name: fmt.Sprintf("newcode_%d", i), Nodes: 32 << i}, class: ClassIOIntensive,
			k: min(s.OSTs, 8), rate: 8 * bw * 0.5, tail: 120}
		for range 8 {
			a.compute = append(a.compute, 300)
			a.bytes = append(a.bytes, 8*bw*0.5*60)
			a.readFr = append(a.readFr, 0)
		}
		add(a, 3+i)
	}
	// Light: steady low rates for hours.
	for i := range 2 {
		a := &dApp{ref: AppRef{User: fmt.Sprintf("lit%d", i), Name: fmt.Sprintf("stream_%d", i), Nodes: 8 << i}, class: ClassLight,
			k: min(s.OSTs, 4), light: 4 * bw * (0.05 + 0.05*rng.Float64()), duration: [2]float64{3600, 4 * 3600}}
		add(a, 8+rng.IntN(4))
	}
	// Irregular: bursts of the targets' sizes at random times.
	for i := range 2 {
		ref := g.all[i%g.kind.targets]
		a := &dApp{ref: AppRef{User: fmt.Sprintf("irr%d", i), Name: fmt.Sprintf("adhoc_%d", i), Nodes: 64}, class: ClassRandom,
			k: ref.k, rate: ref.rate, perHour: 2 + 2*rng.Float64(), burstBytes: median(ref.bytes), duration: [2]float64{2 * 3600, 6 * 3600},
			pool: ref.pool}
		add(a, 8+rng.IntN(4))
	}
	// Piggy-back: tiny jobs that run inside a target's runs.
	for i := range 2 {
		host := g.all[i]
		a := &dApp{ref: AppRef{User: fmt.Sprintf("pig%d", i), Name: fmt.Sprintf("monitor_%d", i), Nodes: 1}, class: ClassNested, within: host}
		g.all = append(g.all, a)
		for _, h := range host.runs {
			if h.withIO {
				a.runs = append(a.runs, &dRun{app: a, withIO: false})
			}
		}
	}
	g.listed = len(g.all)
}

// pool is the shared OST pool of the few-OST applications: k to 2k OSTs
// from a fixed start.
func (g *driftGen) pool(k int) []int {
	var p []int
	for i := range max(k, 4) {
		p = append(p, (g.poolStart+i)%g.s.OSTs)
	}
	return p
}

// addRuns gives an application its runs with and without I/O, shuffled.
func (g *driftGen) addRuns(a *dApp, withIO, without int) {
	for i := range withIO + without {
		a.runs = append(a.runs, &dRun{app: a, withIO: i < withIO})
	}
	g.rng.Shuffle(len(a.runs), func(i, j int) { a.runs[i], a.runs[j] = a.runs[j], a.runs[i] })
}

// foreign draws the foreign applications: some write bursts of the
// targets' sizes (onto the shared pool too), some stream, most do no
// I/O.
func (g *driftGen) foreign() {
	s, rng := g.s, g.rng
	nApps := 30 + rng.IntN(30)
	perDay := 60 + rng.IntN(120)
	jobs := int(float64(perDay) * s.Days)
	// The share of foreign applications whose bursts look like a
	// target's.
	share := 0.08 + 0.12*rng.Float64()
	var apps []*dApp
	for i := range nApps {
		a := &dApp{ref: AppRef{User: fmt.Sprintf("f%03d", rng.IntN(40)), Name: fmt.Sprintf("%s_%d", foreignNames[rng.IntN(len(foreignNames))], i),
			Nodes: 1 << rng.IntN(9)}, class: ClassNone, foreign: true, duration: [2]float64{600, 8 * 3600}}
		switch u := rng.Float64(); {
		case u < share:
			// Bursts like a target's: same volume, rate and footprint.
			ref := g.all[rng.IntN(g.kind.targets)]
			a.class, a.k, a.rate, a.burstBytes, a.pool = ClassRandom, ref.k, ref.rate, median(ref.bytes), ref.pool
			a.perHour = 0.5 + 2*rng.Float64()
		case u < share+0.25:
			a.class, a.k, a.light = ClassLight, 1+rng.IntN(8), s.OSTBandwidth*0.02*math.Exp(rng.NormFloat64())
		}
		apps = append(apps, a)
	}
	for range jobs {
		// Popular applications run more often.
		a := apps[min(nApps-1, int(float64(nApps)*math.Pow(rng.Float64(), 2)))]
		a.runs = append(a.runs, &dRun{app: a, withIO: a.class != ClassNone})
	}
	g.all = append(g.all, apps...)
}

// schedule places every run in time: listed runs spread over the period,
// foreign ones anywhere; piggy-back runs inside their hosts'.
func (g *driftGen) schedule() {
	rng := g.rng
	for _, a := range g.all {
		if a.within != nil {
			continue
		}
		n := len(a.runs)
		slot := g.period / float64(max(1, n))
		for i, r := range a.runs {
			if a.foreign {
				r.start = rng.Float64() * g.period * 0.98
			} else {
				r.start = (float64(i) + 0.05 + 0.6*rng.Float64()) * slot
			}
		}
	}
}

// perform draws what one run did: its stretch, its bursts' drift and
// slowdown, and its duration.
func (g *driftGen) perform(r *dRun) {
	a, rng := r.app, g.rng
	r.state = "COMPLETED"
	switch {
	case a.within != nil:
		return // set with its host below
	case len(a.compute) > 0:
		// Contention prolongs the whole run: mostly 0 to 10%, now and
		// then about 30%.
		r.stretch = 1 + 0.1*rng.Float64()
		if rng.Float64() < 0.12 {
			r.stretch = 1.25 + 0.1*rng.Float64()
		}
		ex := r.stretch - 1
		t := 0.0
		for b := range a.compute {
			// Each compute phase drifts on its own around the run's
			// stretch; each burst is slowed by its own share of the
			// contention.
			t += a.compute[b] * (r.stretch + 0.015*rng.NormFloat64())
			clean := a.bytes[b] / a.rate
			d := clean * (1 + ex*(0.5+1.5*rng.Float64()) + 0.03*rng.Float64())
			if r.withIO {
				first := g.pickOSTs(a, rng)
				r.bursts = append(r.bursts, dBurst{at: t, d: d, write: a.bytes[b] * (1 - a.readFr[b]), read: a.bytes[b] * a.readFr[b],
					first: first, k: a.k})
				r.records = append(r.records, BurstRecord{StartS: t, EndS: t + d, WriteBytes: a.bytes[b] * (1 - a.readFr[b]),
					ReadBytes: a.bytes[b] * a.readFr[b], OSTs: a.k, AloneS: clean, Kind: b})
				t += d
			} else {
				t += clean // the restart's compute keeps its pace
			}
		}
		r.dur = t + a.tail*r.stretch
	default:
		r.dur = logUniform(rng, a.duration[0], a.duration[1])
		if !r.withIO {
			break
		}
		switch a.class {
		case ClassLight:
			first := g.pickOSTs(a, rng)
			r.bursts = []dBurst{{at: 0, d: r.dur, write: a.light * r.dur * 0.7, read: a.light * r.dur * 0.3, first: first, k: a.k}}
		case ClassRandom:
			for t := rng.ExpFloat64() * 3600 / a.perHour; t < r.dur; t += rng.ExpFloat64() * 3600 / a.perHour {
				b := a.burstBytes * math.Exp(0.3*rng.NormFloat64())
				d := b / a.rate
				w := b
				if rng.Float64() < 0.3 {
					w = 0
				}
				r.bursts = append(r.bursts, dBurst{at: t, d: d, write: w, read: b - w, first: g.pickOSTs(a, rng), k: a.k})
			}
		}
	}
	if r.start+r.dur > g.period {
		r.start = math.Max(0, g.period-r.dur-60)
	}
	if a.foreign && rng.Float64() < 0.03 {
		r.state, r.dur = "FAILED", r.dur*rng.Float64()
		var keep []dBurst
		for _, b := range r.bursts {
			if b.at+b.d <= r.dur {
				keep = append(keep, b)
			}
		}
		r.bursts = keep
	}
}

// render writes the log: every burst's bytes onto its OSTs, over a
// background of low AR(1) noise per OST, chunk by chunk.
func (g *driftGen) render(opt Options) error {
	s := g.s
	step := float64(s.StepS)
	total := int(math.Ceil(g.period / step))
	n := s.OSTs
	chunkLen := opt.ChunkSamples
	if chunkLen <= 0 {
		chunkLen = max(1, min(int(86400/step), (1<<22)/n))
	}
	// Piggy-back runs take their place inside a host's run now that the
	// hosts' durations are known.
	for _, a := range g.all {
		if a.within == nil {
			continue
		}
		var hosts []*dRun
		for _, h := range a.within.runs {
			if h.withIO {
				hosts = append(hosts, h)
			}
		}
		for i, r := range a.runs {
			h := hosts[i%len(hosts)]
			r.start = h.start + h.dur*(0.1+0.1*g.rng.Float64())
			r.dur = h.dur * (0.3 + 0.3*g.rng.Float64())
			r.state = "COMPLETED"
		}
	}
	type ev struct {
		at, end float64
		b       *dBurst
	}
	var evs []ev
	for _, a := range g.all {
		for _, r := range a.runs {
			for i := range r.bursts {
				b := &r.bursts[i]
				evs = append(evs, ev{r.start + b.at, r.start + b.at + b.d, b})
			}
		}
	}
	sort.Slice(evs, func(i, j int) bool { return evs[i].at < evs[j].at })
	brng := newRNG(opt.Seed, driftStream+2)
	mean := make([]float64, n)
	zw, zr := make([]float64, n), make([]float64, n)
	for i := range mean {
		mean[i] = 1.5e6 * math.Exp(0.6*brng.NormFloat64())
	}
	names := make([]string, n)
	for i := range names {
		names[i] = s.OSTName(i)
	}
	// One monitoring gap of a few minutes, as a counter reset leaves.
	gapAt := int(brng.Float64() * float64(total))
	gapLen := int(math.Ceil((120 + 300*brng.Float64()) / step))
	next := 0 // first event not yet wholly rendered
	for c0 := 0; c0 < total; c0 += chunkLen {
		m := min(chunkLen, total-c0)
		ch := &serverlog.Rates{Start: s.Start.Add(dur(float64(c0) * step)), Step: s.Step(), OSTs: names,
			Read: make([][]float64, n), Write: make([][]float64, n)}
		for i := range n {
			ch.Read[i], ch.Write[i] = make([]float64, m), make([]float64, m)
			for t := range m {
				zw[i] = 0.97*zw[i] + 0.243*brng.NormFloat64()
				zr[i] = 0.97*zr[i] + 0.243*brng.NormFloat64()
				ch.Write[i][t] = mean[i] * math.Exp(0.5*zw[i])
				ch.Read[i][t] = 0.6 * mean[i] * math.Exp(0.5*zr[i])
			}
		}
		lo, hi := float64(c0)*step, float64(c0+m)*step
		for next < len(evs) && evs[next].end <= lo {
			next++
		}
		for k := next; k < len(evs) && evs[k].at < hi; k++ {
			e := evs[k]
			if e.end <= lo {
				continue
			}
			b := e.b
			wr, rr := b.write/b.d/float64(b.k), b.read/b.d/float64(b.k)
			for t := max(c0, int(e.at/step)); t < c0+m && float64(t)*step < e.end; t++ {
				ov := math.Min(e.end, float64(t+1)*step) - math.Max(e.at, float64(t)*step)
				if ov <= 0 {
					continue
				}
				f := ov / step
				for q := range b.k {
					o := (b.first + q) % n
					ch.Write[o][t-c0] += wr * f
					ch.Read[o][t-c0] += rr * f
				}
			}
		}
		lost := make([]bool, m)
		for t := range m {
			lost[t] = c0+t >= gapAt && c0+t < gapAt+gapLen
		}
		var view *serverlog.Rates
		var errs []error
		for _, sk := range opt.Sinks {
			if cs, ok := sk.(CounterSink); ok {
				errs = append(errs, cs.WriteCounters(ch, lost))
				continue
			}
			if view == nil {
				view = withGaps(ch, lost)
			}
			errs = append(errs, sk.WriteRates(view))
		}
		if err := errors.Join(errs...); err != nil {
			return err
		}
	}
	return nil
}

// result makes the job log and the truth.
func (g *driftGen) result(seed uint64) *Result {
	s := g.s
	var runs []*dRun
	for _, a := range g.all {
		runs = append(runs, a.runs...)
	}
	sort.SliceStable(runs, func(i, j int) bool { return runs[i].start < runs[j].start })
	res := &Result{Seed: seed, Samples: int(math.Ceil(g.period / float64(s.StepS)))}
	ids := map[*dRun]string{}
	for k, r := range runs {
		id := itoa(2000001 + k)
		ids[r] = id
		a := r.app
		wait := 30 + 600*g.rng.Float64()
		rec := JobRecord{Job: serverlog.Job{ID: id, User: a.ref.User, Name: a.ref.Name, Nodes: a.ref.Nodes, State: r.state,
			Start: s.Start.Add(dur(r.start)), End: s.Start.Add(dur(r.start + r.dur))},
			Submit: s.Start.Add(dur(math.Max(0, r.start-wait))), Limit: dur(limitFor(r.dur, 2)), Class: a.class, Foreign: a.foreign,
			WithIO: r.withIO && len(r.bursts) > 0, Iterations: len(r.records), Bursts: r.records}
		for _, b := range r.records {
			rec.IOTimeS += b.EndS - b.StartS
			rec.IOAloneS += b.AloneS
		}
		for _, b := range r.bursts {
			res.Bytes += b.write + b.read
		}
		res.Jobs = append(res.Jobs, rec)
	}
	t := &Truth{Scenario: s.Name, Seed: seed, Start: s.Start, End: s.End(), StepS: s.StepS, OSTs: s.OSTs, OSTBandwidth: s.OSTBandwidth}
	fapps := map[*dApp]bool{}
	for _, a := range g.all {
		if a.foreign {
			t.Foreign.Jobs += len(a.runs)
			if len(a.runs) > 0 {
				fapps[a] = true
			}
			continue
		}
		at := AppTruth{App: a.ref, Class: a.class, FileModel: "n-to-m", Files: a.k, Stripe: 1, OSTFootprint: a.k}
		if a.within != nil {
			at.Within = fmt.Sprintf("%s/%s/%d", a.within.ref.User, a.within.ref.Name, a.within.ref.Nodes)
		}
		var acc patternAcc
		var ref *dRun
		for _, r := range a.runs {
			at.JobIDs = append(at.JobIDs, ids[r])
			if r.withIO && len(a.compute) > 0 {
				at.Runs++
				acc.run(r.records)
				if ref == nil || r.stretch < ref.stretch {
					ref = r
				}
			} else if !r.withIO && a.class != ClassNested {
				at.RunsWithoutIO++
			} else {
				at.Runs++
			}
		}
		if len(a.compute) > 0 {
			at.Pattern = acc.pattern()
			at.Nominal, at.Signature = a.cleanSignature(ref, float64(s.StepS))
		}
		t.Apps = append(t.Apps, at)
	}
	t.Foreign.Apps = len(fapps)
	res.Truth = t
	return res
}

// cleanSignature is the application alone, undisturbed, on the time line
// of its least-disturbed run: each burst starts where that run's did and
// lasts what it does alone, at its rate alone.
func (a *dApp) cleanSignature(ref *dRun, step float64) (*Pattern, *Signature) {
	sig := &Signature{Iterations: len(a.compute), StepS: step}
	var acc patternAcc
	var bursts []BurstRecord
	for b := range a.compute {
		d := a.bytes[b] / a.rate
		at := ref.records[b].StartS
		w, r := a.bytes[b]*(1-a.readFr[b]), a.bytes[b]*a.readFr[b]
		bursts = append(bursts, BurstRecord{StartS: at, EndS: at + d, WriteBytes: w, ReadBytes: r, OSTs: a.k, AloneS: d, Kind: b})
		sig.Bursts = append(sig.Bursts, SigBurst{StartS: at, EndS: at + d, WriteBytes: w, ReadBytes: r, PeakBytesPerS: a.rate})
		sig.Volume.WriteBytes += w
		sig.Volume.ReadBytes += r
	}
	acc.run(bursts)
	sig.DurationS = ref.dur
	n := int(math.Ceil(ref.dur / step))
	sig.TS, sig.Write, sig.Read = make([]float64, n), make([]float64, n), make([]float64, n)
	for k := range n {
		sig.TS[k] = float64(k) * step
	}
	for _, b := range bursts {
		tot := b.WriteBytes + b.ReadBytes
		for k := int(b.StartS / step); k < n && float64(k)*step < b.EndS; k++ {
			lo, hi := math.Max(b.StartS, float64(k)*step), math.Min(b.EndS, float64(k+1)*step)
			if hi <= lo {
				continue
			}
			moved := a.rate * (hi - lo) / step
			sig.Write[k] += moved * b.WriteBytes / tot
			sig.Read[k] += moved * b.ReadBytes / tot
		}
	}
	return acc.pattern(), sig
}
