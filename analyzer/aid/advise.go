package aid

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"iopred/analyzer/serverlog"
)

// IOLT is the I/O load table: per OST, the share of time spent in each
// throughput band over the last few windows.
type IOLT struct {
	At        time.Time
	BandWidth float64 // bytes/s
	Windows   int
	Window    time.Duration
	OSTs      []string
	// F[o][i] is the share of the time OST o spent in band i
	// ([i·BandWidth, (i+1)·BandWidth), the last band open), averaged over
	// the windows that have data.
	F [][]float64
	// Samples counts the OST samples with data in the windows: none means
	// the load is unknown (every OST is then taken as idle).
	Samples int
	// index caches Indices, and pos maps an index back to its position:
	// an advice reads them once per placed running job and for its hint.
	index []int
	pos   map[int]int
}

// BuildIOLT reads the windows before at from the per-OST log.
func BuildIOLT(src serverlog.Source, at time.Time, bandWidth float64, bands, windows int, window time.Duration) (*IOLT, error) {
	if bandWidth <= 0 || bands <= 0 || windows <= 0 || window <= 0 {
		return nil, fmt.Errorf("IOLT: band width, bands, windows and window must be positive")
	}
	r, err := src.Window(at.Add(-time.Duration(windows)*window), at)
	if err != nil {
		return nil, err
	}
	t := &IOLT{At: at, BandWidth: bandWidth, Windows: windows, Window: window, OSTs: r.OSTs, F: make([][]float64, len(r.OSTs))}
	per := max(1, int(window/r.Step))
	cnt := make([]float64, bands)
	for o := range r.OSTs {
		f := make([]float64, bands)
		used := 0
		for w := range windows {
			clear(cnt)
			n := 0.0
			for k := r.Len() - (windows-w)*per; k < r.Len()-(windows-w-1)*per; k++ {
				if k < 0 {
					continue
				}
				v := r.Read[o][k] + r.Write[o][k]
				if math.IsNaN(v) {
					continue
				}
				cnt[min(bands-1, max(0, int(v/bandWidth)))]++
				n++
			}
			t.Samples += int(n)
			if n == 0 {
				continue
			}
			used++
			for i := range f {
				f[i] += cnt[i] / n
			}
		}
		if used == 0 {
			f[0] = 1 // nothing logged: taken as idle
		} else {
			for i := range f {
				f[i] /= float64(used)
			}
		}
		t.F[o] = f
	}
	return t, nil
}

// Running is a job running when advice is asked for.
type Running struct {
	App   serverlog.App
	Start time.Time
	Limit time.Time // start plus the requested time; zero if unknown
	// OSTs are the OST indices its files were placed on, when the
	// scheduler placed it by a hint (Advice.OSTs); nil when unknown. A
	// newborn job's load then goes on those OSTs (α).
	OSTs []int
}

// Request is a question to the advisor.
type Request struct {
	App     serverlog.App
	At      time.Time
	Log     serverlog.Source
	Running []Running
	// Held is how long the job has been held by earlier "delay"s, and
	// MaxHold the longest the scheduler will hold it (zero: no limit).
	Held, MaxHold time.Duration
	// Footprint, when set, is the OST indices the job's files already lie
	// on (an earlier run's Darshan LUSTRE records, darshan.Log.OSTs):
	// those OSTs are scored, instead of the least-loaded κ the knowledge
	// base's footprint guesses, and no placement is hinted (the files
	// exist).
	Footprint []int
}

// Advice is the advisor's answer, in the JSON form of `iopred aid advise`.
type Advice struct {
	Advice       string  `json:"advice"` // run or delay
	Score        float64 `json:"score"`
	Threshold    float64 `json:"threshold"`
	OSTFootprint int     `json:"ost_footprint"`
	// OSTs is the placement hint: the indices, ascending, of the κ OSTs
	// scored (the least loaded, α included), where the job's files
	// should go (`lfs setstripe -c κ -o ...`, see Setstripe); OSTNames
	// are their names. Empty for an application that is not known to be
	// I/O-intensive.
	OSTs     []int    `json:"osts"`
	OSTNames []string `json:"ost_names"`
	// Setstripe is the lfs command that places a directory's new files
	// on those OSTs.
	Setstripe string `json:"lfs_setstripe,omitempty"`
	Reason    string `json:"reason"`
	// Adjusted counts the running jobs whose pattern moved the scores (α).
	Adjusted int `json:"adjusted_jobs"`
}

// Advisor answers requests from a knowledge base.
type Advisor struct {
	K       *Knowledge
	Weights *Weights
	// Slowdown is the acceptable I/O slowdown factor (1.5: 50% longer).
	Slowdown float64
	// Windows and Window shape the IOLT (4 windows of 5 minutes).
	Windows int
	Window  time.Duration
	// AllOSTs scores the application on the mean of every OST instead of
	// its footprint's least-loaded ones: for file systems whose allocator
	// places files without regard to load (Lustre's round-robin from a
	// random start, and the center simulator), where the OSTs a job will
	// get are any κ of them.
	AllOSTs bool
	// Alpha chooses which running jobs move the scores: "paper" (born or
	// dying within the table's span, by their whole duty cycle), "born"
	// (born only: a job that is about to end still counts), "overlap"
	// (every job, by its overlap with the candidate's run).
	Alpha string
	// SpreadAlpha spreads α's load over every OST (K/n of it on each)
	// instead of the K least-loaded or busiest: for allocators that place
	// files without regard to load (Lustre's round-robin from a random
	// start, the center simulator). NewAdvisor sets it.
	SpreadAlpha bool
	// HoldRelax widens the threshold's allowance (L − 1) for a held job,
	// by this factor at the hold limit, in proportion to the time held.
	HoldRelax float64
}

// NewAdvisor returns an advisor with the paper's settings.
func NewAdvisor(k *Knowledge, w *Weights) *Advisor {
	if w == nil {
		w = DefaultWeights()
	}
	return &Advisor{K: k, Weights: w, Slowdown: 1.5, Windows: 4, Window: 5 * time.Minute, Alpha: "born", SpreadAlpha: true}
}

// Threshold is the load level L under which the application's expected
// slowdown stays within the acceptable factor. The weights make a score
// the expected I/O slowdown of the training jobs; an application that
// asks each OST for more than they did suffers more from the same load,
// one that asks for less suffers less, by the square root of the ratio
// (bounded to [1/2, 2]).
func (a *Advisor) Threshold(p *Pattern) float64 {
	g := 1.0
	if p != nil && p.OSTFootprint > 0 && p.Throughput > 0 && a.Weights.TrainRate > 0 {
		g = math.Sqrt(p.Throughput / p.OSTFootprint / a.Weights.TrainRate)
		g = min(2, max(0.5, g))
	}
	return 1 + (a.Slowdown-1)/g
}

// Advise says whether the application should start now.
func (a *Advisor) Advise(req Request) (Advice, error) {
	app := a.K.Find(req.App.User, req.App.Name, req.App.Nodes)
	if app == nil {
		return Advice{Advice: "run", Reason: fmt.Sprintf("nothing is known of %s: it is not in the knowledge base", req.App)}, nil
	}
	if app.Class != ClassIOIntensive {
		return Advice{Advice: "run", Reason: fmt.Sprintf("%s is not I/O-intensive (%s: %s)", req.App, app.Class, app.Reason)}, nil
	}
	w := a.Weights
	t, err := BuildIOLT(req.Log, req.At, w.BandWidth, len(w.W), a.Windows, a.Window)
	if err != nil {
		return Advice{}, err
	}
	n := len(t.OSTs)
	if n == 0 {
		return Advice{Advice: "run", Reason: "the log has no OST"}, nil
	}
	if t.Samples == 0 {
		from := req.At.Add(-time.Duration(t.Windows) * t.Window)
		return Advice{Advice: "run", Reason: fmt.Sprintf("the per-OST log has no sample from %s to %s: the load is unknown, so is where to place the files",
			from.Format(time.DateTime), req.At.Format(time.DateTime))}, nil
	}
	alpha, adjusted := a.alpha(t, req)
	scores := make([]float64, n)
	for o := range n {
		s := 0.0
		for i, wi := range w.W {
			s += wi * (t.F[o][i] + alpha[o][i])
		}
		scores[o] = s
	}
	kappa := min(n, max(1, int(math.Round(app.OSTFootprint))))
	// OSTs that score the same (idle ones all do) are taken from a start
	// that depends on the application and the time asked: hints that
	// followed the table's order would send every job that nothing tells
	// apart to the same first κ OSTs.
	start := tieStart(req.App.String(), req.At, n)
	order := make([]int, n)
	for i := range order {
		order[i] = (start + i) % n
	}
	sort.SliceStable(order, func(x, y int) bool { return scores[order[x]] < scores[order[y]] })
	hint := append([]int(nil), order[:kappa]...)
	scored := fmt.Sprintf("the %d least-loaded OSTs", kappa)
	if len(req.Footprint) > 0 {
		hint = t.positions(req.Footprint)
		if len(hint) == 0 {
			return Advice{}, fmt.Errorf("aid: none of the job's %d OSTs (%s) is in the per-OST log", len(req.Footprint), RangeList(req.Footprint))
		}
		kappa = len(hint)
		scored = fmt.Sprintf("the job's %d OSTs", kappa)
		if missing := len(req.Footprint) - kappa; missing > 0 {
			scored = fmt.Sprintf("the job's %d OSTs in the log (%d of its %d are not)", kappa, missing, len(req.Footprint))
		}
	}
	mean := 0.0
	for _, o := range hint {
		mean += scores[o] / float64(kappa)
	}
	idx := t.indices()
	sort.Slice(hint, func(x, y int) bool { return idx[hint[x]] < idx[hint[y]] })
	names := make([]string, 0, kappa)
	osts := make([]int, 0, kappa)
	for _, o := range hint {
		names = append(names, t.OSTs[o])
		osts = append(osts, idx[o])
	}
	if a.AllOSTs && len(req.Footprint) == 0 {
		mean = 0
		for _, s := range scores {
			mean += s / float64(n)
		}
	}
	L := a.Threshold(&app.Pattern)
	if req.MaxHold > 0 && req.Held > 0 && a.HoldRelax > 0 {
		// A held job has paid its wait already, and at the hold limit it
		// starts whatever the load: the slowdown it accepts grows with
		// the time held, so that it starts at the quietest moment of its
		// hold instead of at its end.
		L = 1 + (L-1)*(1+a.HoldRelax*min(1, req.Held.Seconds()/req.MaxHold.Seconds()))
	}
	adv := Advice{Score: round3(mean), Threshold: round3(L), OSTFootprint: kappa, OSTs: osts, OSTNames: names, Adjusted: adjusted}
	if len(req.Footprint) == 0 {
		adv.Setstripe = SetstripeCommand(osts)
	}
	if mean < L {
		adv.Advice = "run"
		adv.Reason = fmt.Sprintf("%s score %.3f, under the threshold %.3f for a slowdown of %g", scored, mean, L, a.Slowdown)
	} else {
		adv.Advice = "delay"
		adv.Reason = fmt.Sprintf("%s score %.3f, at or over the threshold %.3f for a slowdown of %g", scored, mean, L, a.Slowdown)
	}
	return adv, nil
}

// alpha moves band shares for the I/O-intensive jobs that just started
// (their bursts are not in the table yet: added on the K idlest OSTs) or
// are about to end (their bursts will stop: taken off the K busiest),
// K their footprint. A job's share of time in its band is its burst time
// over its interval.
func (a *Advisor) alpha(t *IOLT, req Request) ([][]float64, int) {
	n, nb := len(t.OSTs), len(a.Weights.W)
	al := make([][]float64, n)
	for o := range al {
		al[o] = make([]float64, nb)
	}
	span := time.Duration(a.Windows) * a.Window
	load := func(o int) float64 {
		s := 0.0
		for i, wi := range a.Weights.W {
			s += wi * (t.F[o][i] + al[o][i])
		}
		return s
	}
	// The candidate's run is the horizon the score predicts: its median
	// run time, or the IOLT's span for an application that knows none.
	horizon := span
	if cand := a.K.Find(req.App.User, req.App.Name, req.App.Nodes); cand != nil && cand.RunS > 0 {
		horizon = time.Duration(cand.RunS * 1e9)
	}
	adjusted := 0
	for _, r := range req.Running {
		app := a.K.Find(r.App.User, r.App.Name, r.App.Nodes)
		if app == nil || app.Class != ClassIOIntensive || app.IntervalS <= 0 || app.OSTFootprint <= 0 {
			continue
		}
		end := r.Start.Add(time.Duration(app.RunS * 1e9))
		if !r.Limit.IsZero() && r.Limit.Before(end) {
			end = r.Limit
		}
		if !end.After(req.At) {
			// The job has outlived its median run (contention stretches
			// runs): it is still running, and its end is taken halfway to
			// its time limit, or one table span away without a limit.
			end = req.At.Add(span)
			if r.Limit.After(end) {
				end = req.At.Add(r.Limit.Sub(req.At) / 2)
			}
		}
		// have: the share of the table's span the job ran in (its bursts
		// are in the table in that proportion); want: the share of the
		// candidate's run it will still run in. The paper's α is the
		// special case of a job born or dying within the span.
		have := min(1, max(0, req.At.Sub(r.Start).Seconds()/span.Seconds()))
		want := 1.0
		switch a.Alpha {
		case "overlap":
			want = min(1, max(0, end.Sub(req.At).Seconds()/horizon.Seconds()))
		default:
			born := req.At.Sub(r.Start) < span
			dying := end.Sub(req.At) < span && a.Alpha == "paper"
			if born == dying {
				continue
			}
			if born {
				have = 0
			} else {
				want = 0
			}
		}
		duty := min(1, app.BurstS/app.IntervalS)
		delta := (want - have) * duty
		if math.Abs(delta) < 1e-3 {
			continue
		}
		band := min(nb-1, int(app.Throughput/app.OSTFootprint/t.BandWidth))
		k := min(n, max(1, int(math.Round(app.OSTFootprint))))
		if on := t.positions(r.OSTs); len(on) > 0 {
			// Placed by a hint: its load goes where its files are.
			for _, o := range on {
				move(al[o], t.F[o], delta, band)
			}
			adjusted++
			continue
		}
		if a.SpreadAlpha {
			// Files placed on any K OSTs: each OST gets the job's load
			// with probability K/n, as a job that ran through the
			// table's span shows in it.
			for o := range n {
				if delta > 0 {
					d := min(delta*float64(k)/float64(n), t.F[o][0]+al[o][0])
					al[o][0] -= d
					al[o][band] += d
				} else {
					d := min(-delta*float64(k)/float64(n), t.F[o][band]+al[o][band])
					al[o][band] -= d
					al[o][0] += d
				}
			}
			adjusted++
			continue
		}
		order := make([]int, n)
		for i := range order {
			order[i] = i
		}
		sort.SliceStable(order, func(x, y int) bool { return load(order[x]) < load(order[y]) })
		if delta < 0 {
			slices.Reverse(order)
		}
		for _, o := range order[:k] {
			if delta > 0 {
				d := min(delta, t.F[o][0]+al[o][0])
				al[o][0] -= d
				al[o][band] += d
			} else {
				d := min(-delta, t.F[o][band]+al[o][band])
				al[o][band] -= d
				al[o][0] += d
			}
		}
		adjusted++
	}
	return al, adjusted
}

// tieStart is where Advise starts taking OSTs of equal scores: a hash of
// the application and the time, so that the same question gets the same
// answer and different ones spread.
func tieStart(app string, at time.Time, n int) int {
	h := fnv.New64a()
	h.Write([]byte(app))
	h.Write(binary.LittleEndian.AppendUint64(nil, uint64(at.Unix())))
	return int(h.Sum64() % uint64(n))
}

// move shifts a job's share of time delta (negative: off) from band 0 to
// its band on one OST, within what the OST's shares allow.
func move(al, f []float64, delta float64, band int) {
	if delta > 0 {
		d := min(delta, f[0]+al[0])
		al[0] -= d
		al[band] += d
	} else {
		d := min(-delta, f[band]+al[band])
		al[band] -= d
		al[0] += d
	}
}

// Indices returns each OST's index, from the hexadecimal number after
// "OST" in its name as Lustre names them (scratch-OST00a1 is 161); an OST
// whose name has none, or one another OST has, gets its position in the
// table.
func (t *IOLT) Indices() []int {
	out := make([]int, len(t.OSTs))
	seen := map[int]bool{}
	ok := true
	for i, name := range t.OSTs {
		k := strings.LastIndex(name, "OST")
		if k < 0 {
			ok = false
			break
		}
		v, err := strconv.ParseUint(name[k+3:], 16, 31)
		if err != nil || seen[int(v)] {
			ok = false
			break
		}
		seen[int(v)] = true
		out[i] = int(v)
	}
	if !ok {
		for i := range out {
			out[i] = i
		}
	}
	return out
}

// indices is Indices, computed once per table.
func (t *IOLT) indices() []int {
	if t.index == nil {
		t.index = t.Indices()
	}
	return t.index
}

// positions maps OST indices to the table's positions, skipping those
// the table lacks.
func (t *IOLT) positions(osts []int) []int {
	if len(osts) == 0 {
		return nil
	}
	if t.pos == nil {
		t.pos = make(map[int]int, len(t.OSTs))
		for p, i := range t.indices() {
			t.pos[i] = p
		}
	}
	var out []int
	for _, o := range osts {
		if p, ok := t.pos[o]; ok {
			out = append(out, p)
		}
	}
	return out
}

// RangeList writes OST indices as lfs does: ascending, runs of
// consecutive indices as ranges ("0-15,32,40-47").
func RangeList(osts []int) string {
	s := slices.Clone(osts)
	slices.Sort(s)
	s = slices.Compact(s)
	var b strings.Builder
	for i := 0; i < len(s); {
		k := i
		for k+1 < len(s) && s[k+1] == s[k]+1 {
			k++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		if k > i {
			fmt.Fprintf(&b, "%d-%d", s[i], s[k])
		} else {
			fmt.Fprintf(&b, "%d", s[i])
		}
		i = k + 1
	}
	return b.String()
}

// SetstripeCommand is the lfs command that makes new files in a
// directory stripe over exactly these OSTs; empty for none.
func SetstripeCommand(osts []int) string {
	if len(osts) == 0 {
		return ""
	}
	return fmt.Sprintf("lfs setstripe -c %d -o %s DIR", len(slices.Compact(slices.Sorted(slices.Values(osts)))), RangeList(osts))
}
