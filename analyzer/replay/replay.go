// Package replay runs the per-process model over recorded events the way
// the Omnisc'IO paper evaluates its predictor (section III): before each
// event it asks the model what comes next, then scores the prediction
// against the event and against the naive baselines (contiguous offsets,
// immediate re-access), and finally feeds the event to the model.
package replay

import (
	"errors"
	"fmt"
	"io"
	"time"

	"iopred/predictor"
	"iopred/tracefmt"
)

// Options configures an evaluation.
type Options struct {
	// Model, when set, is the model to start from (second-run evaluation);
	// the evaluation updates it. Nil starts from a new model.
	Model *predictor.Model
	// ModelOptions configures the new model when Model is nil.
	ModelOptions predictor.Options
	// GrowthPoints is about how many points of the grammar-size series the
	// report keeps (between this and twice this). Default 64.
	GrowthPoints int
	// Steps, when positive, is how many events with an Op the evaluation
	// will see (File counts them first). The evaluator then sums the
	// context scores of all steps and of the last half as they come,
	// instead of keeping every step's score to the end: memory stays
	// constant however long the trace. The figures are the same, summed
	// in the same order. An evaluation that sees another number of steps
	// takes the last half from step Steps/2.
	Steps int
}

// Accuracy is the context prediction score (section III-B): a step scores
// the weight its candidates give to the context that really came next.
type Accuracy struct {
	Steps int `json:"steps"`
	// Paper gives each of k candidates 1/k, as the paper does.
	Paper         float64 `json:"paper"`
	PaperLastHalf float64 `json:"paper_last_half"`
	// Weighted uses the model's own candidate probabilities.
	Weighted         float64 `json:"weighted"`
	WeightedLastHalf float64 `json:"weighted_last_half"`
}

// SizeReport is the relative size error of equation (2) for data calls
// with a non-zero size, using the most likely candidate.
type SizeReport struct {
	Scored      int     `json:"scored"`      // data calls with a size
	Unpredicted int     `json:"unpredicted"` // of which no prediction at all
	MeanError   float64 `json:"mean_relative_error"`
	Exact       float64 `json:"exact"` // share of predicted calls with error 0
}

// OffsetReport is the share of correctly predicted offsets (Table VI).
type OffsetReport struct {
	Scored   int     `json:"scored"` // data calls with an offset
	Model    float64 `json:"model"`  // candidates weighted 1/k
	Weighted float64 `json:"model_weighted"`
	// GivenFile scores predictor.Model.NextOffset: the model's offset for
	// the file the call really touched, the same knowledge the contiguous
	// baseline has.
	GivenFile  float64 `json:"model_given_file"`
	Contiguous float64 `json:"contiguous"` // next offset = end of the previous call on the file
}

// HitReport is the mean hit ratio of equation (3), in percent (Table VII).
type HitReport struct {
	Scored   int     `json:"scored"`
	Paper    float64 `json:"paper"`
	Weighted float64 `json:"weighted"`
}

// TimeReport compares predicted and observed inter-arrival times (Table
// VIII): the time from the end of one call to the start of the next.
type TimeReport struct {
	Scored            int     `json:"scored"`
	MeanAbsErrorSec   float64 `json:"mean_abs_error_s"`
	ImmediateReaccess float64 `json:"immediate_reaccess_s"` // the baseline that predicts 0
}

// Point is one sample of the model's growth.
type Point struct {
	Event       int `json:"event"`
	GrammarSize int `json:"grammar_size"`
	MemoryBytes int `json:"memory_bytes"`
}

// Report is the evaluation of one process.
type Report struct {
	Trace        string       `json:"trace,omitempty"`
	Program      string       `json:"program,omitempty"`
	PID          int          `json:"pid,omitempty"`
	Rank         *int         `json:"rank"`
	Truncated    string       `json:"truncated,omitempty"` // why the trace ended early, if it did
	Events       int          `json:"events"`
	Ignored      int          `json:"ignored"`
	Contexts     int          `json:"contexts"`
	Context      Accuracy     `json:"context"`
	Size         SizeReport   `json:"size"`
	Offset       OffsetReport `json:"offset"`
	HitRatio     HitReport    `json:"hit_ratio"`
	InterArrival TimeReport   `json:"inter_arrival"`
	GrammarSize  int          `json:"grammar_size"`
	MemoryBytes  int          `json:"memory_bytes"`
	NsPerEvent   float64      `json:"update_predict_ns_per_event"`
	// Fields compares each predicted field with its simple baseline.
	Fields []FieldScore `json:"fields"`
	// Steady is the steady phase after start-up, when the run has one.
	Steady *SteadyPhase `json:"steady,omitempty"`
	// ModelAlone is Fields for the model without its baselines
	// (predictor.Options.NoFallback), when that was evaluated too.
	ModelAlone []FieldScore `json:"model_alone,omitempty"`
	Growth     []Point      `json:"growth"`
}

// Evaluator scores a model on a stream of events.
type Evaluator struct {
	model *predictor.Model
	opt   Options

	events, ignored int
	// Context scores per step, kept to score the last half at the end
	// when the number of steps is not known (Options.Steps); otherwise
	// their sums over all steps and over the last half.
	paperScores, weightedScores []float32
	paperSum, weightedSum       float64
	paperLast, weightedLast     float64

	sizeScored, sizePredicted, sizeUnpredicted, sizeExact int
	sizeErrSum                                            float64

	offScored                                      int
	offModel, offWeighted, offGiven, offContiguous float64
	ends                                           map[string]int64 // contiguous baseline: where the latest call on each file ended

	hitScored          int
	hitPaper, hitWeigh float64

	timeScored         int
	timeErr, timeImmed float64
	prevEndNs          int64
	havePrev           bool

	growth []Point
	every  int

	base      baselines
	sums      fieldSums
	stepStart fieldSums // sums before the current step
	snaps     []snapshot

	spent time.Duration
}

// NewEvaluator returns an evaluator of opt.Model, or of a new model.
func NewEvaluator(opt Options) *Evaluator {
	if opt.GrowthPoints <= 0 {
		opt.GrowthPoints = 64
	}
	m := opt.Model
	if m == nil {
		m = predictor.New(opt.ModelOptions)
	}
	return &Evaluator{model: m, opt: opt, ends: map[string]int64{}, every: 1,
		base: baselines{succ: map[ctxKey]*successors{}, lastSize: map[string]int64{}}}
}

// Model returns the model under evaluation.
func (ev *Evaluator) Model() *predictor.Model { return ev.model }

func pathOf(e *tracefmt.Event) string {
	if e.Path != "" {
		return e.Path
	}
	if e.FileID != 0 {
		return fmt.Sprintf("#%d", e.FileID)
	}
	return ""
}

// sameFile tells whether a prediction names the event's file; an unknown
// path on either side does not count against it.
func sameFile(p *predictor.Prediction, path string) bool {
	return p.Path == "" || path == "" || p.Path == path
}

// hit is equation (3): the overlap of the predicted and observed segments
// over the distance between their extremes, in percent.
func hit(xs, xe, ys, ye int64) float64 {
	if xs == xe && ys == ye {
		if xs == ys {
			return 100
		}
		return 0
	}
	lo, hi := max(xs, ys), min(xe, ye)
	if hi <= lo {
		return 0
	}
	return 100 * float64(hi-lo) / float64(max(xe, ye)-min(xs, ys))
}

// Event scores the model's prediction of e, then feeds e to the model.
func (ev *Evaluator) Event(e *tracefmt.Event) {
	if e.Op == "" {
		ev.ignored++
		ev.model.Observe(e)
		return
	}
	ev.stepStart = ev.sums
	start := time.Now()
	cands := ev.model.Candidates()
	ev.spent += time.Since(start)
	ev.events++
	path := pathOf(e)
	k := float64(len(cands))

	// Context.
	var paper, weighted float64
	for i := range cands {
		if cands[i].Ctx == e.Ctx && cands[i].Op == e.Op {
			paper += 1 / k
			weighted += cands[i].Probability
		}
	}
	if ev.opt.Steps > 0 {
		// As mean() sums the kept float32 scores.
		p, w := float64(float32(paper)), float64(float32(weighted))
		ev.paperSum += p
		ev.weightedSum += w
		if ev.events-1 >= ev.opt.Steps/2 {
			ev.paperLast += p
			ev.weightedLast += w
		}
	} else {
		ev.paperScores = append(ev.paperScores, float32(paper))
		ev.weightedScores = append(ev.weightedScores, float32(weighted))
	}

	isData := tracefmt.IsData(e.Op)
	// Size, equation (2).
	if isData && e.Size > 0 {
		ev.sizeScored++
		if len(cands) == 0 {
			ev.sizeUnpredicted++
		} else {
			ev.sizePredicted++
			d := cands[0].Size - e.Size
			if d == 0 {
				ev.sizeExact++
			}
			ev.sizeErrSum += float64(max(d, -d)) / float64(e.Size)
		}
	}
	// Offsets (Table VI) and hit ratio (equation 3, Table VII).
	if isData && e.Offset != tracefmt.NoOffset {
		ev.offScored++
		contiguous := ev.ends[path] == e.Offset
		if contiguous {
			ev.offContiguous++
		}
		if path != "" {
			given := ev.model.NextOffset(path) == e.Offset
			if given {
				ev.offGiven++
			}
			fromBase := len(cands) > 0 && cands[0].Path == path && cands[0].Fallback&predictor.FieldOffset != 0
			ev.scoreOffset(given, contiguous, fromBase)
		}
		ev.hitScored++
		for i := range cands {
			c := &cands[i]
			if c.Offset == tracefmt.NoOffset || !sameFile(c, path) {
				continue
			}
			if c.Offset == e.Offset {
				ev.offModel += 1 / k
				ev.offWeighted += c.Probability
			}
			h := hit(c.Offset, c.Offset+c.Size, e.Offset, e.Offset+e.Size)
			ev.hitPaper += h / k
			ev.hitWeigh += h * c.Probability
		}
	}
	// Inter-arrival, against the immediate re-access baseline (Table VIII).
	var gap float64
	if ev.havePrev {
		gap = float64(max(e.StartNs-ev.prevEndNs, 0))
		observed := gap
		predicted := 0.0
		if len(cands) > 0 {
			predicted = float64(cands[0].Delay)
		}
		ev.timeScored++
		ev.timeErr += abs(predicted - observed)
		ev.timeImmed += observed
	}
	ev.scoreFields(e, cands, path, gap, ev.havePrev, paper)
	ev.prevEndNs, ev.havePrev = e.EndNs, true

	// The baseline's file positions.
	switch {
	case isData && e.Offset != tracefmt.NoOffset:
		moved := e.Bytes
		if moved <= 0 && e.Errno == 0 && e.Ret > 0 {
			moved = e.Size
		}
		ev.ends[path] = e.Offset + max(moved, 0)
	case path != "" && (containsAny(e.Op, "open", "creat") || containsAny(e.Op, "close")):
		delete(ev.ends, path)
	}

	start = time.Now()
	ev.model.Observe(e)
	ev.spent += time.Since(start)

	if ev.events%ev.every == 0 {
		ev.sample()
	}
}

func (ev *Evaluator) sample() {
	ev.growth = append(ev.growth, Point{ev.events, ev.model.GrammarSize(), ev.model.MemoryBytes()})
	if len(ev.growth) >= 2*ev.opt.GrowthPoints {
		// Keep every other point and sample half as often from now on.
		kept := ev.growth[:0]
		for i, p := range ev.growth {
			if i%2 == 1 {
				kept = append(kept, p)
			}
		}
		ev.growth = kept
		ev.every *= 2
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		for i := 0; i+len(sub) <= len(s); i++ {
			if s[i:i+len(sub)] == sub {
				return true
			}
		}
	}
	return false
}

func mean(xs []float32) float64 {
	if len(xs) == 0 {
		return 0
	}
	var s float64
	for _, x := range xs {
		s += float64(x)
	}
	return s / float64(len(xs))
}

func ratio(a float64, n int) float64 {
	if n == 0 {
		return 0
	}
	return a / float64(n)
}

// Report summarises the evaluation so far.
func (ev *Evaluator) Report() Report {
	half := len(ev.paperScores) / 2
	acc := Accuracy{
		Steps:            ev.events,
		Paper:            mean(ev.paperScores),
		PaperLastHalf:    mean(ev.paperScores[half:]),
		Weighted:         mean(ev.weightedScores),
		WeightedLastHalf: mean(ev.weightedScores[half:]),
	}
	if ev.opt.Steps > 0 && ev.events > 0 {
		last := ev.events - min(ev.opt.Steps/2, ev.events)
		acc.Paper, acc.Weighted = ev.paperSum/float64(ev.events), ev.weightedSum/float64(ev.events)
		acc.PaperLastHalf, acc.WeightedLastHalf = 0, 0
		if last > 0 {
			acc.PaperLastHalf, acc.WeightedLastHalf = ev.paperLast/float64(last), ev.weightedLast/float64(last)
		}
	}
	r := Report{
		Events:  ev.events,
		Ignored: ev.ignored,
		Context: acc,
		Size: SizeReport{
			Scored:      ev.sizeScored,
			Unpredicted: ev.sizeUnpredicted,
			MeanError:   ratio(ev.sizeErrSum, ev.sizePredicted),
			Exact:       ratio(float64(ev.sizeExact), ev.sizePredicted),
		},
		Offset: OffsetReport{
			Scored:     ev.offScored,
			Model:      ratio(ev.offModel, ev.offScored),
			Weighted:   ratio(ev.offWeighted, ev.offScored),
			GivenFile:  ratio(ev.offGiven, ev.offScored),
			Contiguous: ratio(ev.offContiguous, ev.offScored),
		},
		HitRatio: HitReport{
			Scored:   ev.hitScored,
			Paper:    ratio(ev.hitPaper, ev.hitScored),
			Weighted: ratio(ev.hitWeigh, ev.hitScored),
		},
		InterArrival: TimeReport{
			Scored:            ev.timeScored,
			MeanAbsErrorSec:   ratio(ev.timeErr, ev.timeScored) / 1e9,
			ImmediateReaccess: ratio(ev.timeImmed, ev.timeScored) / 1e9,
		},
		Contexts:    ev.model.Contexts(),
		GrammarSize: ev.model.GrammarSize(),
		MemoryBytes: ev.model.MemoryBytes(),
		NsPerEvent:  ratio(float64(ev.spent.Nanoseconds()), ev.events),
	}
	r.Fields, r.Steady = ev.fieldScores()
	r.Growth = append(r.Growth, ev.growth...)
	if n := len(r.Growth); ev.events > 0 && (n == 0 || r.Growth[n-1].Event != ev.events) {
		r.Growth = append(r.Growth, Point{ev.events, r.GrammarSize, r.MemoryBytes})
	}
	return r
}

// Events evaluates a model on a slice of events.
func Events(events []*tracefmt.Event, opt Options) (Report, *predictor.Model) {
	ev := NewEvaluator(opt)
	for _, e := range events {
		ev.Event(e)
	}
	return ev.Report(), ev.Model()
}

// File evaluates a model on one trace file. A truncated trace is evaluated
// up to its last complete record and the report says why it ended; a
// corrupt one gives an error naming the file and position. It reads the
// trace twice: once to count its steps (Options.Steps), so that the
// evaluation's memory does not grow with the trace.
func File(path string, opt Options) (Report, *predictor.Model, error) {
	steps, err := countSteps(path)
	if err != nil {
		return Report{}, nil, err
	}
	r, err := tracefmt.Open(path)
	if err != nil {
		return Report{}, nil, err
	}
	defer r.Close()
	opt.Steps = steps
	ev := NewEvaluator(opt)
	truncated := ""
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		var te *tracefmt.TruncatedError
		if errors.As(err, &te) {
			truncated = te.Error()
			break
		}
		if err != nil {
			return Report{}, nil, err
		}
		if rec.Kind == tracefmt.KindEvent && rec.Event != nil {
			ev.Event(rec.Event)
		}
	}
	rep := ev.Report()
	h := r.Header()
	rep.Trace, rep.Program, rep.PID, rep.Rank, rep.Truncated = path, h.Program, h.PID, h.Rank, truncated
	return rep, ev.Model(), nil
}

// countSteps counts the events with an Op of a trace, up to a truncation;
// a corrupt record is left for the evaluation to report.
func countSteps(path string) (int, error) {
	r, err := tracefmt.Open(path)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	n := 0
	for {
		rec, err := r.Next()
		if err != nil {
			return n, nil
		}
		if rec.Kind == tracefmt.KindEvent && rec.Event != nil && rec.Event.Op != "" {
			n++
		}
	}
}
