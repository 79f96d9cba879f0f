package ftio

import "math"

// DefaultOnlineCapacity bounds the requests an Online evaluator holds.
const DefaultOnlineCapacity = 1 << 18

// Online evaluates the period of a growing trace (FTIO's section 3.4).
// Requests arrive through Add; Evaluate analyses the current window. Once
// a dominant frequency has been found three times, the window shrinks to
// three times the last period found, ending at the latest request (only
// requests that started inside it count); later
// evaluations keep narrowing it the same way. Memory is bounded: past the
// capacity the oldest requests are dropped.
//
// An Online is not safe for concurrent use.
type Online struct {
	opt      Options
	capacity int
	reqs     []Request // ordered by arrival
	found    int
	windowS  float64 // 0: the whole trace
	latest   float64
}

// NewOnline returns an evaluator with the given analysis options and a
// bound of capacity requests (0: DefaultOnlineCapacity).
func NewOnline(opt Options, capacity int) *Online {
	if capacity <= 0 {
		capacity = DefaultOnlineCapacity
	}
	return &Online{opt: opt, capacity: capacity}
}

// Add records one request, times in nanoseconds on any common clock. The
// write flag is kept for callers that feed both directions to separate
// evaluators; it does not change the signal.
func (o *Online) Add(startNs, endNs int64, bytes int64, write bool) {
	_ = write
	o.AddRequest(requestOf(startNs, endNs, bytes))
}

// AddRequest records one request given in seconds.
func (o *Online) AddRequest(r Request) {
	if len(o.reqs) >= o.capacity {
		// Drop a quarter at a time, so that a full evaluator costs an
		// amortised constant per request rather than a copy of all it holds.
		drop := len(o.reqs) - o.capacity + 1 + o.capacity/4
		if drop > len(o.reqs) {
			drop = len(o.reqs)
		}
		o.reqs = append(o.reqs[:0], o.reqs[drop:]...)
	}
	o.reqs = append(o.reqs, r)
	o.latest = math.Max(o.latest, r.End)
}

// Window returns the current window length in seconds; 0 means the whole
// trace.
func (o *Online) Window() float64 { return o.windowS }

// Found returns how many evaluations found a dominant frequency.
func (o *Online) Found() int { return o.found }

// Evaluate analyses the requests inside the window. When the narrowed
// window shows no period (FTIO's rule can lock onto a short spurious period
// found early in a run), the evaluator falls back to every request it
// still holds and starts counting finds again. A trace too short to
// sample gives a Result without a period and the error.
func (o *Online) Evaluate() (Result, error) {
	if o.windowS > 0 {
		from := o.latest - o.windowS
		var window []Request
		for _, r := range o.reqs {
			if r.Start >= from {
				window = append(window, r)
			}
		}
		res, err := Analyze(Slice(window), o.opt)
		if err == nil && res.PeriodS != nil {
			o.found++
			o.windowS = 3 * *res.PeriodS
			return res, nil
		}
		o.found, o.windowS = 0, 0
	}
	res, err := Analyze(Slice(o.reqs), o.opt)
	if err != nil {
		return Result{Verdict: "not periodic"}, err
	}
	if res.PeriodS != nil {
		o.found++
		if o.found >= 3 {
			o.windowS = 3 * *res.PeriodS
		}
	}
	return res, nil
}
