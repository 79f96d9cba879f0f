package centersim

import (
	"container/heap"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"iopred/analyzer/serverlog"
)

// Sink receives the per-OST log as it is produced: consecutive chunks of
// rates on the scenario's grid, every OST in each, NaN in the samples a
// monitoring outage lost. A sink may keep the chunk.
type Sink interface {
	WriteRates(r *serverlog.Rates) error
}

// Advisor tells the scheduler whether a job should start now. The
// simulator asks it when a job could start; with Options.FollowAdvice a
// "delay" holds the job until the next scheduling event (at most
// Scenario.MaxDelayS), otherwise the advice is only recorded.
type Advisor interface {
	Advise(req AdviceRequest) (Advice, error)
}

// AdviceRequest is what an advisor knows when it is asked: the job's
// application, the time, the per-OST log up to that time and the jobs
// running.
type AdviceRequest struct {
	App     serverlog.App
	At      time.Time
	Log     serverlog.Source
	Running []RunningJob
	// Held is how long advice has held the job so far, and MaxHold how
	// long it may hold it at most (Scenario.MaxDelayS).
	Held, MaxHold time.Duration
}

// RunningJob is a running job as the scheduler sees it.
type RunningJob struct {
	App   serverlog.App
	Start time.Time
	Limit time.Time // start plus the requested time limit
	// OSTs are the OST indices the job's files were placed on when it
	// followed a placement hint (Options.Place), ascending; nil when its
	// files went wherever the allocator put them.
	OSTs []int
}

// Advice is an advisor's answer.
type Advice struct {
	Run       bool
	Reason    string
	Score     float64
	Threshold float64
	// OSTs is a placement hint: the OST indices the job's files should go
	// on (as `lfs setstripe -o` or an OST pool would place them); nil for
	// none. With Options.Place a job started after advice places its
	// bursts there.
	OSTs []int
}

// Options control one simulation run.
type Options struct {
	Seed  uint64
	Sinks []Sink
	// ChunkSamples is how many samples each chunk given to the sinks
	// holds; 0 chooses about a day, at most 4 Mi cells.
	ChunkSamples int
	Advisor      Advisor
	FollowAdvice bool
	// Place makes a job started after followed advice place its files on
	// the OSTs its last advice hinted at, instead of on the round-robin
	// allocator's κ OSTs from a random start. Jobs without a hint (and
	// foreign jobs, unless advised) keep the random placement.
	Place bool
}

// flow is an I/O transfer striped over some OSTs.
type flow struct {
	job       *job // nil for an interactive transfer
	p         placement
	demand    float64 // bytes/s the flow asks for in total
	remaining float64 // bytes; +Inf for steady I/O
	readFrac  float64
	rate      float64
	theta     float64
	frozen    bool
	accW      float64 // bytes moved in the current sample, not yet on the OSTs
	accR      float64
	started   float64
	aloneS    float64
	total     float64
	kind      int
	pos       int
}

type timerKind int8

const (
	tSubmit timerKind = iota
	tCompute
	tLimit
	tFail
	tCancel
	tTransfer
	tTick
)

type timer struct {
	at   float64
	seq  int
	kind timerKind
	j    *job
	jseq int
	i    int
}

type timerHeap []timer

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(a, b int) bool {
	if h[a].at != h[b].at {
		return h[a].at < h[b].at
	}
	return h[a].seq < h[b].seq
}
func (h timerHeap) Swap(a, b int) { h[a], h[b] = h[b], h[a] }
func (h *timerHeap) Push(x any)   { *h = append(*h, x.(timer)) }
func (h *timerHeap) Pop() any     { old := *h; x := old[len(old)-1]; *h = old[:len(old)-1]; return x }
func (h timerHeap) peek() *timer  { return &h[0] }
func (e *engine) push(t timer)    { e.seq++; t.seq = e.seq; heap.Push(&e.timers, t) }
func (e *engine) pushJob(at float64, k timerKind, j *job) {
	e.push(timer{at: at, kind: k, j: j, jseq: j.timerSeq})
}

type engine struct {
	s      *Scenario
	opt    Options
	w      *workload
	step   float64
	now    float64
	active []*flow
	dirty  bool
	timers timerHeap
	seq    int
	err    error

	// Per-OST scratch of the bandwidth sharing.
	nflows  []int32
	ucount  []int32 // flows on the OST not yet limited
	udem    []float64
	used    []float64
	capa    []float64
	touched []int32
	onOST   [][]*flow

	colW, colR     []float64 // bytes of the current sample
	bgRNG          *rand.Rand
	trRNG          *rand.Rand // where interactive transfers go
	bgZW, bgZR     []float64
	bgMW, bgMR     []float64
	outages        [][2]int
	outageIdx      int
	chunk          *serverlog.Rates
	chunkPos       int
	chunkLen       int
	lost           []bool // samples of the chunk the monitoring lost
	hist           *MemoryLog
	queue          []*job
	running        map[*job]struct{}
	free           int
	nextID         int
	tickPending    bool
	samples        int
	jobsStarted    int
	transfersBytes float64
}

// Run simulates the scenario and returns what happened to every job and
// the ground truth; the per-OST log goes to the sinks as it is produced.
func Run(s *Scenario, opt Options) (*Result, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if s.Family == FamilyDrift {
		if opt.Advisor != nil {
			return nil, errors.New("scenario: the drift family has no scheduler to advise")
		}
		c := *s
		c.DrawFamily(opt.Seed)
		return runDrift(&c, opt)
	}
	w, err := s.buildWorkload(opt.Seed)
	if err != nil {
		return nil, err
	}
	for _, j := range w.jobs {
		if s.Nodes > 0 && j.app.spec.Nodes > s.Nodes {
			return nil, fmt.Errorf("scenario: %s needs %d nodes, the machine has %d", j.app.id, j.app.spec.Nodes, s.Nodes)
		}
	}
	e := newEngine(s, opt, w)
	if err := e.run(); err != nil {
		return nil, err
	}
	return e.result(), nil
}

func newEngine(s *Scenario, opt Options, w *workload) *engine {
	n := s.OSTs
	e := &engine{s: s, opt: opt, w: w, step: float64(s.StepS),
		nflows: make([]int32, n), ucount: make([]int32, n), udem: make([]float64, n), used: make([]float64, n), capa: make([]float64, n),
		onOST: make([][]*flow, n), colW: make([]float64, n), colR: make([]float64, n),
		running: map[*job]struct{}{}, free: s.Nodes, nextID: 1000001}
	e.bgRNG = newRNG(opt.Seed, streamBackground)
	e.trRNG = newRNG(opt.Seed, streamPlacement)
	e.bgZW, e.bgZR = make([]float64, n), make([]float64, n)
	e.bgMW, e.bgMR = make([]float64, n), make([]float64, n)
	for i := range n {
		// Some OSTs are busier than others, for good.
		spread := math.Exp(0.5*e.bgRNG.NormFloat64() - 0.125)
		e.bgMW[i] = s.Background.WriteMean * s.Noise * spread
		e.bgMR[i] = s.Background.ReadMean * s.Noise * spread
		e.bgZW[i], e.bgZR[i] = e.bgRNG.NormFloat64(), e.bgRNG.NormFloat64()
	}
	total := e.totalSamples()
	orng := newRNG(opt.Seed, streamOutage)
	for range s.Outages {
		l := int(math.Ceil((300 + orng.Float64()*900) / e.step))
		at := orng.IntN(max(1, total-l))
		e.outages = append(e.outages, [2]int{at, at + l})
	}
	sortRanges(e.outages)
	e.chunkLen = opt.ChunkSamples
	if e.chunkLen <= 0 {
		e.chunkLen = max(1, min(int(86400/e.step), (1<<22)/n))
	}
	if opt.Advisor != nil {
		e.hist = NewMemoryLog(s.Start, s.Step(), e.s.OSTNames())
	}
	for _, j := range w.jobs {
		if !math.IsNaN(j.submit) {
			e.pushJob(j.submit, tSubmit, j)
		}
	}
	for i, t := range w.interactive {
		e.push(timer{at: t.at, kind: tTransfer, i: i})
	}
	return e
}

func sortRanges(r [][2]int) {
	for i := 1; i < len(r); i++ {
		for k := i; k > 0 && r[k][0] < r[k-1][0]; k-- {
			r[k], r[k-1] = r[k-1], r[k]
		}
	}
}

func (e *engine) totalSamples() int { return int(math.Ceil(e.s.Days * 86400 / e.step)) }

func (e *engine) run() error {
	total := e.totalSamples()
	for k := range total {
		tEnd := float64(k+1) * e.step
		for e.now < tEnd {
			if e.dirty {
				e.share()
			}
			next := tEnd
			if len(e.timers) > 0 && e.timers.peek().at < next {
				next = max(e.timers.peek().at, e.now)
			}
			var first *flow
			for _, f := range e.active {
				if f.rate > 0 && !math.IsInf(f.remaining, 1) {
					if tc := e.now + f.remaining/f.rate; tc < next {
						next, first = tc, f
					}
				}
			}
			e.advance(next - e.now)
			e.now = next
			if first != nil {
				first.remaining = 0
			}
			e.completeFlows()
			for len(e.timers) > 0 && e.timers.peek().at <= e.now {
				t := heap.Pop(&e.timers).(timer)
				e.fire(t)
			}
			if e.err != nil {
				return e.err
			}
		}
		if err := e.finalize(k); err != nil {
			return err
		}
	}
	return e.flushChunk()
}

// advance moves every flow forward by dt seconds at its current rate.
func (e *engine) advance(dt float64) {
	if dt <= 0 {
		return
	}
	for _, f := range e.active {
		b := f.rate * dt
		if b > f.remaining {
			b = f.remaining
		}
		f.remaining -= b
		f.total += b
		f.accR += b * f.readFrac
		f.accW += b * (1 - f.readFrac)
	}
}

// completeFlows ends the bursts that have moved all their bytes.
func (e *engine) completeFlows() {
	for i := 0; i < len(e.active); {
		f := e.active[i]
		if f.remaining > 1e-6*f.total+1e-3 {
			i++
			continue
		}
		e.removeFlow(f)
		if j := f.job; j != nil {
			e.burstDone(j, f)
		}
	}
}

func (e *engine) addFlow(f *flow) {
	f.pos = len(e.active)
	e.active = append(e.active, f)
	e.dirty = true
}

func (e *engine) removeFlow(f *flow) {
	e.spill(f)
	last := e.active[len(e.active)-1]
	e.active[f.pos] = last
	last.pos = f.pos
	e.active = e.active[:len(e.active)-1]
	e.dirty = true
}

// spill puts the bytes a flow moved in this sample onto its OSTs.
func (e *engine) spill(f *flow) {
	if f.accW == 0 && f.accR == 0 {
		return
	}
	for i, o := range f.p.osts {
		e.colW[o] += f.accW * f.p.w[i]
		e.colR[o] += f.accR * f.p.w[i]
	}
	e.transfersBytes += f.accW + f.accR
	f.accW, f.accR = 0, 0
}

// share gives every flow its rate: weighted max-min filling. All flows
// not yet limited grow the same fraction theta of their demand until an
// OST saturates (its bandwidth, reduced by the seek penalty of the flows
// sharing it) or theta reaches 1; the flows on a saturated OST keep that
// theta, the others go on growing. A striped burst thus advances at the
// pace of its most contended OST.
func (e *engine) share() {
	e.dirty = false
	for _, o := range e.touched {
		e.nflows[o], e.ucount[o], e.udem[o], e.used[o] = 0, 0, 0, 0
		e.onOST[o] = e.onOST[o][:0]
	}
	e.touched = e.touched[:0]
	for _, f := range e.active {
		f.frozen, f.theta = false, 0
		for i, o := range f.p.osts {
			if e.nflows[o] == 0 && len(e.onOST[o]) == 0 {
				e.touched = append(e.touched, o)
			}
			e.nflows[o]++
			e.ucount[o]++
			e.udem[o] += f.demand * f.p.w[i]
			e.onOST[o] = append(e.onOST[o], f)
		}
	}
	for _, o := range e.touched {
		e.capa[o] = e.s.OSTBandwidth / (1 + e.s.ContentionPenalty*float64(e.nflows[o]-1))
	}
	theta, left := 0.0, len(e.active)
	for left > 0 {
		d, arg := 1-theta, int32(-1)
		for _, o := range e.touched {
			if e.ucount[o] == 0 || e.udem[o] <= 0 {
				continue
			}
			if x := (e.capa[o] - e.used[o] - theta*e.udem[o]) / e.udem[o]; x < d {
				d, arg = x, o
			}
		}
		theta += max(d, 0)
		freeze := func(f *flow) {
			if f.frozen {
				return
			}
			f.frozen, f.theta = true, theta
			for i, o := range f.p.osts {
				dw := f.demand * f.p.w[i]
				e.used[o] += theta * dw
				e.udem[o] -= dw
				if e.ucount[o]--; e.ucount[o] == 0 {
					e.udem[o] = 0
				}
			}
			left--
		}
		if arg < 0 {
			for _, f := range e.active {
				freeze(f)
			}
			break
		}
		for _, o := range e.touched {
			if e.ucount[o] > 0 && (o == arg || e.capa[o]-e.used[o]-theta*e.udem[o] <= 1e-9*e.capa[o]) {
				for _, f := range e.onOST[o] {
					freeze(f)
				}
			}
		}
	}
	for _, f := range e.active {
		f.rate = f.theta * f.demand
	}
}

func (e *engine) fire(t timer) {
	j := t.j
	switch t.kind {
	case tSubmit:
		e.submitJob(j)
	case tCancel:
		if j.state == jobQueued {
			e.dequeue(j)
			j.state, j.end, j.start, j.endState = jobDone, e.now, math.NaN(), "CANCELLED"
		}
	case tCompute:
		if j.state == jobRunning && t.jseq == j.timerSeq {
			e.computeDone(j)
		}
	case tLimit:
		if j.state == jobRunning && t.jseq == j.timerSeq {
			e.finish(j, "TIMEOUT")
		}
	case tFail:
		if j.state == jobRunning && t.jseq == j.timerSeq {
			e.finish(j, "FAILED")
		}
	case tTransfer:
		tr := e.w.interactive[t.i]
		l := Layout{Model: "n-to-m", Files: tr.osts, Stripe: 1}
		f := &flow{p: l.place(e.s.OSTs, e.trRNG), demand: e.s.Interactive.Bandwidth, remaining: tr.bytes, started: e.now}
		if tr.read {
			f.readFrac = 1
		}
		e.addFlow(f)
	case tTick:
		e.tickPending = false
		e.schedule()
	}
}

func (e *engine) submitJob(j *job) {
	j.state, j.submit, j.id = jobQueued, e.now, e.nextID
	e.nextID++
	e.queue = append(e.queue, j)
	if j.cancelAtS > 0 {
		e.pushJob(e.now+j.cancelAtS, tCancel, j)
		return // held until cancelled: it never runs
	}
	e.schedule()
}

func (e *engine) dequeue(j *job) {
	for i, q := range e.queue {
		if q == j {
			e.queue = append(e.queue[:i], e.queue[i+1:]...)
			return
		}
	}
}

// schedule starts what the policy allows: every job on an unlimited
// machine; otherwise in submission order, and with backfill a later job
// that fits now and does not delay the reservation of the first blocked
// one (EASY). A job held by advice takes no reservation.
func (e *engine) schedule() {
	var keep []*job
	unlimited := e.s.Nodes == 0
	blocked, shadow, extra := false, 0.0, 0
	for i, j := range e.queue {
		if j.cancelAtS > 0 {
			keep = append(keep, j)
			continue
		}
		nodes := j.app.spec.Nodes
		fits := unlimited || nodes <= e.free
		if fits && blocked && !(e.now+j.limitS <= shadow || nodes <= extra) {
			fits = false
		}
		if fits {
			if !e.mayStart(j) {
				keep = append(keep, j)
				continue
			}
			if blocked && e.now+j.limitS > shadow {
				extra -= nodes
			}
			e.startJob(j)
			continue
		}
		keep = append(keep, j)
		if !blocked {
			if e.s.Policy == "fifo" {
				keep = append(keep, e.queue[i+1:]...)
				break
			}
			blocked = true
			shadow, extra = e.reservation(nodes)
		}
	}
	e.queue = keep
}

// reservation returns when enough nodes will be free for a job of the
// given size, going by the running jobs' time limits, and how many nodes
// beyond it will be free then.
func (e *engine) reservation(nodes int) (float64, int) {
	ends := make([]*job, 0, len(e.running))
	for j := range e.running {
		ends = append(ends, j)
	}
	sortJobs(ends, func(a, b *job) bool {
		ta, tb := a.start+a.limitS, b.start+b.limitS
		if ta != tb {
			return ta < tb
		}
		return a.id < b.id
	})
	free := e.free
	for _, j := range ends {
		free += j.app.spec.Nodes
		if free >= nodes {
			return j.start + j.limitS, free - nodes
		}
	}
	return math.Inf(1), 0
}

func sortJobs(js []*job, less func(a, b *job) bool) {
	for i := 1; i < len(js); i++ {
		for k := i; k > 0 && less(js[k], js[k-1]); k-- {
			js[k], js[k-1] = js[k-1], js[k]
		}
	}
}

// ask asks the advisor about j, at most once per log sample.
func (e *engine) ask(j *job) bool {
	if j.advice != "" && math.Floor(j.asked/e.step) == math.Floor(e.now/e.step) {
		return j.lastRun
	}
	req := AdviceRequest{App: serverlog.App{User: j.app.spec.User, Name: j.app.spec.Name, Nodes: j.app.spec.Nodes},
		At: e.s.Start.Add(dur(e.now)), Log: e.hist, MaxHold: dur(e.s.MaxDelayS)}
	if j.held > 0 {
		req.Held = dur(e.now - j.heldSince)
	}
	for r := range e.running {
		sp := r.app.spec
		rj := RunningJob{App: serverlog.App{User: sp.User, Name: sp.Name, Nodes: sp.Nodes},
			Start: e.s.Start.Add(dur(r.start)), Limit: e.s.Start.Add(dur(r.start + r.limitS))}
		for _, o := range r.placed {
			rj.OSTs = append(rj.OSTs, int(o))
		}
		req.Running = append(req.Running, rj)
	}
	sortRunning(req.Running)
	adv, err := e.opt.Advisor.Advise(req)
	if err != nil && e.err == nil {
		e.err = fmt.Errorf("advice for job %d (%s) at %s: %w", j.id, j.app.id, req.At.Format(time.RFC3339), err)
	}
	j.asked, j.lastRun, j.reason, j.hintOSTs = e.now, adv.Run, adv.Reason, adv.OSTs
	j.advice = "delay"
	if adv.Run {
		j.advice = "run"
	}
	return adv.Run
}

func sortRunning(r []RunningJob) {
	for i := 1; i < len(r); i++ {
		for k := i; k > 0 && r[k].Start.Before(r[k-1].Start); k-- {
			r[k], r[k-1] = r[k-1], r[k]
		}
	}
}

// mayStart applies the advice to a job that could start now.
func (e *engine) mayStart(j *job) bool {
	if e.opt.Advisor == nil || !e.opt.FollowAdvice {
		return true
	}
	if e.ask(j) {
		return true
	}
	if j.held == 0 {
		j.heldSince = e.now
	}
	if e.now-j.heldSince >= e.s.MaxDelayS {
		return true // held long enough: it starts on "delay"
	}
	j.held++
	if !e.tickPending {
		e.tickPending = true
		e.push(timer{at: e.now + e.s.TickS, kind: tTick})
	}
	return false
}

func (e *engine) startJob(j *job) {
	if e.opt.Advisor != nil && !e.opt.FollowAdvice {
		e.ask(j) // only recorded
	}
	j.state, j.start = jobRunning, e.now
	j.placed = nil
	if e.opt.Place && e.opt.FollowAdvice && e.opt.Advisor != nil {
		j.placed = hintSet(j.hintOSTs, e.s.OSTs)
	}
	e.running[j] = struct{}{}
	e.free -= j.app.spec.Nodes
	e.jobsStarted++
	e.pushJob(e.now+j.limitS, tLimit, j)
	if j.failAtS > 0 {
		e.pushJob(e.now+j.failAtS, tFail, j)
	}
	if j.steady > 0 {
		f := &flow{job: j, p: e.placeJob(j), demand: j.steady, remaining: math.Inf(1), started: e.now}
		f.readFrac = 0.3
		j.steadyF = f
		e.addFlow(f)
	}
	for _, n := range j.nested {
		n.submit = e.now + n.nestAt*j.nominalS
		e.pushJob(n.submit, tSubmit, n)
	}
	j.stepIdx = 0
	e.startStep(j)
}

// startStep begins the compute of the current step (or the tail).
func (e *engine) startStep(j *job) {
	d := j.tailS
	if j.stepIdx < len(j.steps) {
		d = j.steps[j.stepIdx].computeS
	}
	e.pushJob(e.now+d, tCompute, j)
}

func (e *engine) computeDone(j *job) {
	if j.stepIdx >= len(j.steps) {
		e.finish(j, "COMPLETED")
		return
	}
	st := j.steps[j.stepIdx]
	b := st.write + st.read
	if b <= 0 {
		j.stepIdx++
		e.startStep(j)
		return
	}
	l := j.app.spec.Layout
	p := j.fixed
	if p == nil || !l.SameFiles {
		np := e.placeJob(j)
		p = &np
		if l.SameFiles {
			j.fixed = p
		}
	}
	f := &flow{job: j, p: *p, demand: j.app.spec.Bandwidth, remaining: b, readFrac: st.read / b, started: e.now, kind: st.kind}
	f.aloneS = b / aloneRate(f.demand, maxOf(p.w), e.s.OSTBandwidth)
	j.flow = f
	e.addFlow(f)
}

func maxOf(x []float64) float64 {
	m := 0.0
	for _, v := range x {
		m = max(m, v)
	}
	return m
}

func (e *engine) burstDone(j *job, f *flow) {
	j.flow = nil
	j.ioTime += e.now - f.started
	j.ioAlone += f.aloneS
	if !j.app.foreign {
		j.bursts = append(j.bursts, BurstRecord{StartS: f.started - j.start, EndS: e.now - j.start,
			WriteBytes: f.total * (1 - f.readFrac), ReadBytes: f.total * f.readFrac, OSTs: len(f.p.osts), AloneS: f.aloneS, Kind: f.kind})
	}
	j.stepIdx++
	e.startStep(j)
}

func (e *engine) finish(j *job, state string) {
	if j.flow != nil {
		e.removeFlow(j.flow)
		j.flow = nil
	}
	if j.steadyF != nil {
		e.removeFlow(j.steadyF)
		j.steadyF = nil
	}
	j.timerSeq++
	j.state, j.end, j.endState = jobDone, e.now, state
	delete(e.running, j)
	e.free += j.app.spec.Nodes
	e.schedule()
}

// finalize closes sample k: every flow's bytes go onto its OSTs, the
// background is added, and the sample joins the chunk.
func (e *engine) finalize(k int) error {
	for _, f := range e.active {
		e.spill(f)
	}
	if e.chunk == nil {
		n := min(e.chunkLen, e.totalSamples()-k)
		e.chunk = &serverlog.Rates{Start: e.s.Start.Add(dur(float64(k) * e.step)), Step: e.s.Step(), OSTs: e.s.OSTNames(),
			Read: make([][]float64, e.s.OSTs), Write: make([][]float64, e.s.OSTs)}
		for i := range e.chunk.Read {
			e.chunk.Read[i] = make([]float64, n)
			e.chunk.Write[i] = make([]float64, n)
		}
		e.chunkPos = 0
		e.lost = make([]bool, n)
	}
	for e.outageIdx < len(e.outages) && e.outages[e.outageIdx][1] <= k {
		e.outageIdx++
	}
	lost := e.outageIdx < len(e.outages) && e.outages[e.outageIdx][0] <= k
	bg := e.s.Background
	rho := bg.Correlation
	innov := math.Sqrt(1 - rho*rho)
	day := e.s.diurnal((float64(k) + 0.5) * e.step)
	half := bg.Sigma * bg.Sigma / 2
	c := e.chunkPos
	for i := range e.colW {
		e.bgZW[i] = rho*e.bgZW[i] + innov*e.bgRNG.NormFloat64()
		e.bgZR[i] = rho*e.bgZR[i] + innov*e.bgRNG.NormFloat64()
		w := e.colW[i]/e.step + e.bgMW[i]*day*math.Exp(bg.Sigma*e.bgZW[i]-half)
		r := e.colR[i]/e.step + e.bgMR[i]*day*math.Exp(bg.Sigma*e.bgZR[i]-half)
		e.colW[i], e.colR[i] = 0, 0
		e.chunk.Write[i][c] = w
		e.chunk.Read[i][c] = r
	}
	e.lost[c] = lost
	if e.hist != nil {
		e.hist.appendColumn(e.chunk, c, lost)
	}
	e.samples++
	e.chunkPos++
	if e.chunkPos == len(e.chunk.Write[0]) {
		return e.flushChunk()
	}
	return nil
}

func (e *engine) flushChunk() error {
	if e.chunk == nil {
		return nil
	}
	c := e.chunk
	e.chunk = nil
	if e.chunkPos < c.Len() {
		for i := range c.Read {
			c.Read[i], c.Write[i] = c.Read[i][:e.chunkPos], c.Write[i][:e.chunkPos]
		}
	}
	lost := e.lost[:e.chunkPos]
	var view *serverlog.Rates // the log as read: NaN where samples were lost
	var errs []error
	for _, s := range e.opt.Sinks {
		if cs, ok := s.(CounterSink); ok {
			errs = append(errs, cs.WriteCounters(c, lost))
			continue
		}
		if view == nil {
			view = withGaps(c, lost)
		}
		errs = append(errs, s.WriteRates(view))
	}
	return errors.Join(errs...)
}

// withGaps returns r with NaN in the lost samples (r itself when none
// is).
func withGaps(r *serverlog.Rates, lost []bool) *serverlog.Rates {
	some := false
	for _, l := range lost {
		some = some || l
	}
	if !some {
		return r
	}
	out := &serverlog.Rates{Start: r.Start, Step: r.Step, OSTs: r.OSTs, Read: make([][]float64, len(r.Read)), Write: make([][]float64, len(r.Write))}
	for i := range r.Read {
		out.Read[i] = append([]float64(nil), r.Read[i]...)
		out.Write[i] = append([]float64(nil), r.Write[i]...)
		for t, l := range lost {
			if l {
				out.Read[i][t], out.Write[i][t] = math.NaN(), math.NaN()
			}
		}
	}
	return out
}

// dur converts seconds to a Duration, to the nanosecond.
func dur(s float64) time.Duration { return time.Duration(math.Round(s * 1e9)) }

// placeJob places one burst (or the steady I/O) of j: on the OSTs of its
// placement hint when it followed one, else as the allocator does.
func (e *engine) placeJob(j *job) placement {
	if j.placed != nil {
		return j.app.spec.Layout.placeOn(e.s.OSTs, j.placed, j.rng)
	}
	return j.app.spec.Layout.place(e.s.OSTs, j.rng)
}

// hintSet returns the valid, distinct OSTs of a hint, ascending; nil for
// none.
func hintSet(hint []int, n int) []int32 {
	seen := make(map[int]bool, len(hint))
	var out []int32
	for _, o := range hint {
		if o >= 0 && o < n && !seen[o] {
			seen[o] = true
			out = append(out, int32(o))
		}
	}
	slices.Sort(out)
	return out
}
