package iosi

import (
	"cmp"
	"math"
	"slices"
)

// baselineS is the half-width, in seconds, of the window a run's local
// floor is the lowest level of: wider than the longest burst (a
// checkpoint of a few minutes).
const baselineS = 900

// segment is one burst found in one run: points [lo, hi) of its
// background-free total rate, carrying vol bytes.
type segment struct {
	lo, hi int
	vol    float64
}

// extractAligned is IOSI with burst-by-burst alignment (Options.
// BurstAlign): the runs keep their own lengths, and
//   - an anchor run, the shortest among those whose bursts the other runs
//     show nearly as well as the best-supported one's, gives the bursts:
//     every other run is scaled to its length and its bursts matched to
//     the anchor's one by one, in order (a run that drifted keeps each
//     burst matched to its own), and an anchor burst is kept only when
//     most runs show it;
//   - each run's stretch against the anchor is the median ratio of its
//     matched bursts' times to the anchor's; the runs are matched again
//     on that scale, within a tighter drift, which leaves out foreign
//     bursts that matched by chance (another job's train of bursts
//     passes near any time within a wide tolerance);
//   - the time line is the least-stretched run that shows most of the
//     bursts (contention only prolongs), not the anchor, whose bursts
//     may carry foreign ones and which need not be the least disturbed;
//   - each burst's shape is the pointwise median of its matches, aligned
//     at their onsets, scaled to their median volume, and placed where
//     it fits the time line's run best (least absolute difference within
//     the matched stretch), so that no single run's foreign burst leaks
//     into the signature;
//   - a burst the anchor cannot show (another job's burst many times its
//     size covers it there) but the other runs do is found with them as
//     the reference (otherBursts).
//
// Bursts late in the run are kept as the early ones are: no run is cut
// to the shortest.
func extractAligned(samples []Sample, o Options) (*Signature, error) {
	o.Trim = false
	p, err := preprocess(samples, o)
	if err != nil {
		return nil, err
	}
	ds := make([]detrended, len(p.t))
	for i, t := range p.t {
		ds[i] = detrend(t, p.stepS)
	}
	thr := segmentThreshold(ds)
	segs := make([][]segment, len(p.t))
	for i := range p.t {
		segs[i] = findSegments(ds[i], thr, p.stepS)
	}
	// The anchor is the shortest run among those whose bursts the runs
	// show nearly as well as the best (support, refShare): the shortest
	// of all may be a restart that did no I/O but kept a foreign burst,
	// or one whose bursts merged with other jobs'.
	order := make([]int, len(p.t))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return len(p.t[a]) - len(p.t[b]) })
	cand := make([]matching, len(p.t))
	score := make([]float64, len(p.t))
	best := math.Inf(-1)
	for _, r := range order {
		cand[r] = supported(p, segs, r, nil, nil)
		score[r] = support(cand[r].vols, len(p.t))
		best = max(best, score[r])
	}
	anchor := order[0]
	for _, r := range order {
		if score[r] >= refShare*best {
			anchor = r
			break
		}
	}
	m := cand[anchor]
	stretch := runStretch(segs, m, anchor)
	if !o.OneMatch {
		m = supported(p, segs, anchor, stretch, &m)
		if !o.KeepOddBursts {
			dropOddBursts(m)
		}
		stretch = runStretch(segs, m, anchor)
	}
	kept := 0
	for _, v := range m.vols {
		if v != nil {
			kept++
		}
	}
	// The time line: the shortest run that shows a third of the kept
	// bursts (contention only prolongs runs; a run showing fewer is a
	// restart that did no I/O, or one whose bursts other jobs' hide).
	tl := anchor
	if !o.AnchorTimeline {
		for i := range p.t {
			if i != anchor && 3*m.count(i) >= max(1, kept) && len(p.t[i]) < len(p.t[tl]) {
				tl = i
			}
		}
	}
	scale := stretch[tl]
	if math.IsNaN(scale) {
		scale = float64(len(p.t[tl])) / float64(len(p.t[anchor]))
	}
	n := len(p.t[tl])
	sig := &Signature{Method: "iosi-aligned", RunsFound: p.found, RunsUsed: len(p.t), StepS: p.stepS,
		Write: make([]float64, n), Read: make([]float64, n), Dropped: p.dropped, Reference: p.ids[tl]}
	if o.KeepSamples {
		for i := range p.t {
			sig.Samples = append(sig.Samples, resample(p.t[i], n))
		}
	}
	// Where each kept burst lies on the anchor's time, to tell a burst
	// another reference finds from one already kept.
	var taken []segment
	for k := range segs[anchor] {
		if m.vols[k] == nil {
			continue
		}
		// The matches of burst k in every run, the anchor's own first.
		var members [][2]int // run, segment
		members = append(members, [2]int{anchor, k})
		for i := range p.t {
			if i != anchor && m.match[i][k] >= 0 {
				members = append(members, [2]int{i, m.match[i][k]})
			}
		}
		// Where it goes on the time line: where the time line's run
		// shows it, else where its nearest shown neighbour's offset from
		// the anchor's scaled time puts it; then where the shape fits
		// the run best nearby.
		at := placeOn(segs[tl], m.match[tl], m.vols, segs[anchor], k, scale)
		addAlignedBurst(sig, p, ds, tl, segs, members, median(m.vols[k]), at, false, true)
		taken = append(taken, segs[anchor][k])
	}
	if !o.OneMatch && !o.AnchorOnly {
		for _, x := range otherBursts(p, segs, anchor, tl, order, score, stretch, m, taken) {
			addAlignedBurst(sig, p, ds, tl, segs, x.members, x.vol, x.at, true, x.shown)
		}
	}
	if !o.OneMatch && !o.AnchorOnly && !o.NoRhythm {
		for _, x := range rhythmBursts(p, segs, anchor, tl, stretch, m) {
			addAlignedBurst(sig, p, ds, tl, segs, x.members, x.vol, x.at, true, x.shown)
		}
	}
	slices.SortFunc(sig.Bursts, func(a, b Burst) int { return cmp.Compare(a.StartS, b.StartS) })
	return sig, nil
}

// addAlignedBurst adds to sig one burst, the consensus of its members
// (run, segment) scaled to vol bytes, starting at at on the time line
// (run tl), or with fit where it fits that run's rates best within the
// tight drift of at. An extra burst (found by another reference than
// the anchor) is not added near one already placed.
func addAlignedBurst(sig *Signature, p *prepared, ds []detrended, tl int, segs [][]segment, members [][2]int, vol float64, at int, extra, fit bool) {
	n := len(sig.Write)
	x := ds[tl].x
	shapeRates, readShare := consensus(p, ds, segs, members, vol)
	if fit {
		tol := 3 + int(tightDriftShare*float64(at))
		at = fitPlace(x, segment{lo: max(0, at-tol), hi: min(n, at+len(shapeRates)+tol)}, shapeRates)
	}
	if extra {
		// Another reference's burst that lands on one already placed,
		// or nearer to it than the first matching's tolerance, is that
		// burst matched again, a little off.
		gap := (driftShare*float64(at) + 0.5*float64(len(shapeRates))) * p.stepS
		lo, hi := float64(at)*p.stepS, float64(at+len(shapeRates))*p.stepS
		for _, b := range sig.Bursts {
			if lo < b.EndS+gap && b.StartS < hi+gap {
				return
			}
		}
	}
	b := Burst{StartS: math.Inf(1)}
	for q, v := range shapeRates {
		j := at + q
		if j < 0 || j >= n || !(v > 0) {
			continue
		}
		w, r := v*(1-readShare), v*readShare
		sig.Write[j] += w
		sig.Read[j] += r
		b.StartS = min(b.StartS, float64(j)*p.stepS)
		b.EndS = float64(j+1) * p.stepS
		b.WriteBytes += w * p.stepS
		b.ReadBytes += r * p.stepS
		b.PeakBytesPerS = max(b.PeakBytesPerS, w+r)
	}
	if !math.IsInf(b.StartS, 1) {
		sig.Bursts = append(sig.Bursts, b)
	}
}

// extraShare is the least share of the runs that must show a burst
// another reference finds.
const extraShare = 0.5

// minExtraKept is the fewest kept anchor bursts for other references to
// be asked for more: a run's stretch from two or three bursts an hour
// apart maps another run's bursts too loosely to tell a missed burst
// from a neighbour, or from another job's burst that recurs near it.
const minExtraKept = 4

// extraBurst is a burst another reference run found that the anchor's
// kept bursts miss: its members (run, segment), typical volume, and
// start on the time line's run.
type extraBurst struct {
	members [][2]int
	vol     float64
	at      int
	shown   bool // the time line's run shows it at at
}

// otherBursts finds the bursts the anchor does not show (another job's
// burst many times its size covers it there, or it is cut) but the other
// runs do: every other run with a stretch, best supported first, is
// matched against the runs as the anchor was (by length, then again by
// the runs' stretches relative to its own). One of its kept bursts is
// added when
//   - as many runs show it as show the anchor's bursts (their median),
//     the anchor aside, and at least half the runs: a stricter bar than
//     the anchor's bursts meet, since every extra reference is another
//     chance for other jobs' bursts to line up;
//   - its volume is within tightVolumeRatio of the range of the kept
//     bursts' (an application writes the sizes it writes);
//   - the anchor is not quiet there (a larger burst covers the place, or
//     the anchor has an unkept burst matched to it): the best-supported
//     run denying a burst outweighs another reference's support;
//   - it is matched to no kept anchor burst and, on the anchor's time,
//     overlaps no burst already taken.
//
// Nothing is added to fewer than minExtraKept kept bursts.
func otherBursts(p *prepared, segs [][]segment, anchor, tl int, order []int, score, stretch []float64, m matching, taken []segment) []extraBurst {
	lo, hi := math.Inf(1), 0.0
	var shows []float64
	for _, v := range m.vols {
		if v != nil {
			lo, hi = min(lo, median(v)), max(hi, median(v))
			shows = append(shows, float64(len(v)))
		}
	}
	if len(shows) < minExtraKept {
		return nil
	}
	// As many runs as show the anchor's bursts (the median), the anchor
	// aside, which cannot show a burst it is asked about for missing.
	need := max(extraShare*float64(len(p.t)), median(shows)-1)
	refs := slices.Clone(order)
	slices.SortStableFunc(refs, func(a, b int) int { return cmp.Compare(score[b], score[a]) })
	var out []extraBurst
	for _, r := range refs {
		if r == anchor || math.IsNaN(stretch[r]) || !(stretch[r] > 0) {
			continue
		}
		rel := make([]float64, len(stretch))
		for i := range rel {
			rel[i] = stretch[i] / stretch[r]
		}
		first := supported(p, segs, r, nil, nil)
		mr := supported(p, segs, r, rel, &first)
		for k, v := range mr.vols {
			if v == nil || float64(len(v)) < need || median(v) < lo/tightVolumeRatio || median(v) > hi*tightVolumeRatio {
				continue
			}
			known := false
			for j, q := range m.match[r] {
				known = known || q == k && m.vols[j] != nil
			}
			if j := mr.match[anchor][k]; j >= 0 && m.vols[j] != nil {
				known = true
			} else if j < 0 && !hiddenAt(segs[r][k], segs[anchor], stretch[r], foreignVolumeRatio) {
				// The anchor, the best-supported run, is quiet there.
				continue
			}
			s := segs[r][k]
			onAnchor := segment{lo: int(float64(s.lo) / stretch[r]), hi: int(math.Ceil(float64(s.hi) / stretch[r]))}
			for _, t := range taken {
				known = known || onAnchor.lo < t.hi && t.lo < onAnchor.hi
			}
			if known {
				continue
			}
			members := [][2]int{{r, k}}
			for i := range p.t {
				if i != r && mr.match[i][k] >= 0 {
					members = append(members, [2]int{i, mr.match[i][k]})
				}
			}
			// Where it lands on the time line: its offset, scaled, from
			// the nearest kept burst that both run r and the time
			// line's run show; else its time scaled.
			scale := stretch[tl] / stretch[r]
			if math.IsNaN(scale) {
				scale = 1 / stretch[r]
			}
			at := int(math.Round(float64(s.lo) * scale))
			bestD := math.Inf(1)
			for j, q := range m.match[r] {
				if q < 0 || m.vols[j] == nil || m.match[tl][j] < 0 {
					continue
				}
				if d := math.Abs(float64(segs[r][q].lo - s.lo)); d < bestD {
					bestD = d
					at = segs[tl][m.match[tl][j]].lo + int(math.Round(float64(s.lo-segs[r][q].lo)*scale))
				}
			}
			shown := false
			if j := mr.match[tl][k]; j >= 0 {
				at, shown = segs[tl][j].lo, true
			}
			out = append(out, extraBurst{members: members, vol: median(v), at: at, shown: shown})
			taken = append(taken, onAnchor)
		}
	}
	return out
}

// rhythmShare is how far, as a share of the period, a gap between kept
// bursts may be off one or two periods for the bursts to keep a rhythm:
// the anchor's bursts drift, and one merged with another job's starts
// early (tuning seeds 1006 and 1008: gaps 16% and 12% off the median in
// trains whose runs show the missing burst; 0.1 found 4 of the 6
// missing bursts these rules recover on 1001-1012, 0.2 all 6).
const rhythmShare = 0.2

// rhythmPlaces are where, on the anchor's time, a train of kept bursts
// (starts lo, sorted) that keeps a rhythm puts a burst it lacks: the
// middle of each gap of two periods, and one period before the first
// and after the last when that is within the run (n points, the bursts
// w points wide). The period is the median gap; the train keeps the
// rhythm when it has at least three bursts, every gap is within
// rhythmShare of one period or two, and most are of one.
func rhythmPlaces(lo []int, w, n int) []int {
	if len(lo) < 3 {
		return nil
	}
	gaps := make([]float64, len(lo)-1)
	for i := range gaps {
		gaps[i] = float64(lo[i+1] - lo[i])
	}
	period := median(gaps)
	if !(period > 0) {
		return nil
	}
	var out []int
	single := 0
	for i, g := range gaps {
		switch k := math.Round(g / period); {
		case k == 1 && math.Abs(g-period) <= rhythmShare*period:
			single++
		case k == 2 && math.Abs(g-2*period) <= rhythmShare*period:
			out = append(out, lo[i]+int(math.Round(g/2)))
		default:
			return nil
		}
	}
	if 2*single <= len(gaps) {
		return nil
	}
	p := int(math.Round(period))
	if lo[0]-p >= 0 {
		out = append(out, lo[0]-p)
	}
	if last := lo[len(lo)-1] + p; last+w <= n {
		out = append(out, last)
	}
	return out
}

// rhythmBursts finds the bursts that a train of kept bursts keeping a
// rhythm lacks (rhythmPlaces) and the runs show: at each such place, a
// burst of the kept bursts' typical volume and width is matched in
// every run with a stretch, as the kept ones were (by the run's
// stretch, within the tight drift and volume ratios), and kept when at
// least two runs show it, more show it than are quiet there, and the
// runs that show it or cannot tell (a larger burst covers the place)
// are as many as show the median kept burst, less one. That is less
// than a kept burst needs (a third of the runs showing it): the rhythm
// already says where it is, and the burst is missing because another
// job's larger ones cover it in the anchor and in many runs (tuning
// seeds 1001, 1002 and 1005: few-OST writers and a train of eight, one
// burst missed; shown by 2 to 5 runs of 8 to 10, covered in 2 to 4,
// denied by at most one).
func rhythmBursts(p *prepared, segs [][]segment, anchor, tl int, stretch []float64, m matching) []extraBurst {
	var lo []int
	var vols, shows, widths []float64
	widest := 0
	for k, v := range m.vols {
		if v != nil {
			s := segs[anchor][k]
			lo = append(lo, s.lo)
			vols = append(vols, median(v))
			shows = append(shows, float64(len(v)))
			widths = append(widths, float64(s.hi-s.lo))
			widest = max(widest, s.hi-s.lo)
		}
	}
	places := rhythmPlaces(lo, widest, len(p.t[anchor]))
	if len(places) == 0 {
		return nil
	}
	vol, need, w := median(vols), median(shows)-1, int(math.Round(median(widths)))
	var out []extraBurst
	for _, at := range places {
		ref := []segment{{lo: at, hi: at + w, vol: vol}}
		var members [][2]int
		var got []float64
		c := [3]int{}
		tlAt := -1
		for i := range p.t {
			if math.IsNaN(stretch[i]) || !(stretch[i] > 0) {
				continue
			}
			f := 1 / stretch[i]
			if j := matchSegments(ref, segs[i], f, 4, tightDriftShare, foreignVolumeRatio, tightVolumeRatio)[0]; j >= 0 {
				c[shown]++
				members = append(members, [2]int{i, j})
				got = append(got, segs[i][j].vol)
				if i == tl {
					tlAt = segs[i][j].lo
				}
			} else if hiddenAt(ref[0], segs[i], f, foreignVolumeRatio) {
				c[hidden]++
			} else {
				c[denied]++
			}
		}
		if c[shown] < 2 || c[shown] <= c[denied] || float64(c[shown]+c[hidden]) < need {
			continue
		}
		x := extraBurst{members: members, vol: median(got), shown: tlAt >= 0, at: tlAt}
		if tlAt < 0 {
			// Its offset, scaled, from the nearest kept burst the time
			// line's run shows.
			scale := stretch[tl]
			x.at = int(math.Round(float64(at) * scale))
			best := math.Inf(1)
			for k, j := range m.match[tl] {
				if j < 0 || m.vols[k] == nil {
					continue
				}
				if d := math.Abs(float64(segs[anchor][k].lo - at)); d < best {
					best = d
					x.at = segs[tl][j].lo + int(math.Round(float64(at-segs[anchor][k].lo)*scale))
				}
			}
		}
		out = append(out, x)
	}
	return out
}

// underWeight is how much more the shape standing above a run's rates
// costs in fitPlace than the run standing above the shape.
const underWeight = 10

// placeOn is where anchor burst k starts on a run whose matches to the
// anchor's bursts are match: its match's start, or the anchor's start
// scaled by the run's stretch and moved by the offset of the nearest
// kept burst the run matches.
func placeOn(run []segment, match []int, vols [][]float64, anchor []segment, k int, scale float64) int {
	if j := match[k]; j >= 0 {
		return run[j].lo
	}
	at := int(math.Round(float64(anchor[k].lo) * scale))
	for d := 1; d < len(anchor); d++ {
		for _, q := range []int{k - d, k + d} {
			if q >= 0 && q < len(anchor) && match[q] >= 0 && vols[q] != nil {
				return at + run[match[q]].lo - int(math.Round(float64(anchor[q].lo)*scale))
			}
		}
	}
	return at
}

// matching is how every run's bursts match a reference run's: match[i][k]
// is run i's segment matched to the reference's k-th, or -1; vols[k] the
// volumes of burst k's matches (the reference's own first) when most
// runs show it, nil when they do not.
type matching struct {
	match [][]int
	vols  [][]float64
}

// oddShare is the share of the best-supported kept burst's runs below
// which a kept burst must have a size the application writes elsewhere.
const oddShare = 0.75

// oddMaxKept is the most kept bursts dropOddBursts looks at: an hourly
// checkpointer's few bursts set each run's stretch loosely, and another
// job's burst lines up in enough runs to be kept; in a long train (the
// first family's lammps_melt, 21 bursts) a small burst that fewer runs
// show is the application's (seed 1 lost one to the rule without this
// bound).
const oddMaxKept = 5

// dropOddBursts drops from m, when it keeps at most oddMaxKept bursts,
// the kept bursts that fewer runs show than
// oddShare of the best-supported one's and whose typical volume (the
// median of their matches') is smaller than every better-supported kept
// burst's by more than tightVolumeRatio: another job's burst that lined
// up in enough runs to be kept. On the tuning seeds 1001-1012, such
// extras of 0.08 to 0.7 times the checkpoints' size were shown by 5 to
// 8 runs where the checkpoints were by 8 to 11. An application's own
// burst with as little support has the size of a well-supported one
// (other jobs cover it in many runs), or is larger than the others
// (the first burst of dov/cosmo_d and dov/dynamo_d, shown by 8 runs
// of 11, reads or writes more than the later ones); a small one of its
// own that few runs show is lost (1008's dov/quake_d, a burst of 0.26
// times the next smallest, 4 runs of 8).
func dropOddBursts(m matching) {
	top, kept := 0, 0
	for _, v := range m.vols {
		top = max(top, len(v))
		if v != nil {
			kept++
		}
	}
	if kept > oddMaxKept {
		return
	}
	var well []float64
	for _, v := range m.vols {
		if v != nil && float64(len(v)) >= oddShare*float64(top) {
			well = append(well, median(v))
		}
	}
	for k, v := range m.vols {
		if v == nil || float64(len(v)) >= oddShare*float64(top) {
			continue
		}
		typical, smaller := median(v), true
		for _, w := range well {
			smaller = smaller && tightVolumeRatio*typical < w
		}
		if smaller {
			m.vols[k] = nil
		}
	}
}

// count is the number of kept reference bursts that run i matches.
func (m matching) count(i int) int {
	c := 0
	for k, j := range m.match[i] {
		if j >= 0 && m.vols[k] != nil {
			c++
		}
	}
	return c
}

// runStretch is each run's stretch against the reference: the least-
// squares slope through the origin of its matched kept bursts' middles
// against the reference's, which the late bursts, whose times say the
// most about the stretch, weigh most (NaN for a run matching fewer than
// two, 1 for the reference).
func runStretch(segs [][]segment, m matching, ref int) []float64 {
	out := make([]float64, len(segs))
	for i := range segs {
		if i == ref {
			out[i] = 1
			continue
		}
		var ab, aa float64
		c := 0
		for k, j := range m.match[i] {
			if j < 0 || m.vols[k] == nil {
				continue
			}
			a, b := segs[ref][k], segs[i][j]
			ca, cb := float64(a.lo+a.hi)/2, float64(b.lo+b.hi)/2
			ab += ca * cb
			aa += ca * ca
			c++
		}
		out[i] = math.NaN()
		if c >= 2 && aa > 0 {
			out[i] = ab / aa
		}
	}
	return out
}

// consensus is a burst's shape over its members (run, segment): the
// pointwise median of their background-free rates aligned at their
// onsets, scaled to carry vol bytes; and the median share of reads.
func consensus(p *prepared, ds []detrended, segs [][]segment, members [][2]int, vol float64) ([]float64, float64) {
	longest := 0
	for _, mb := range members {
		s := segs[mb[0]][mb[1]]
		longest = max(longest, s.hi-s.lo)
	}
	out := make([]float64, longest)
	col := make([]float64, len(members))
	for q := range out {
		for c, mb := range members {
			s := segs[mb[0]][mb[1]]
			col[c] = 0
			if s.lo+q < s.hi {
				col[c] = ds[mb[0]].x[s.lo+q]
			}
		}
		out[q] = median(col)
	}
	for len(out) > 0 && !(out[len(out)-1] > 0) {
		out = out[:len(out)-1]
	}
	tot := 0.0
	for _, x := range out {
		tot += x * p.stepS
	}
	if tot > 0 {
		for q := range out {
			out[q] *= vol / tot
		}
	}
	var shares []float64
	for _, mb := range members {
		s := segs[mb[0]][mb[1]]
		w, r := 0.0, 0.0
		for j := s.lo; j < s.hi; j++ {
			w += max(0, p.w[mb[0]][j])
			r += max(0, p.r[mb[0]][j])
		}
		if w+r > 0 {
			shares = append(shares, r/(w+r))
		}
	}
	share := 0.0
	if len(shares) > 0 {
		share = median(shares)
	}
	return out, share
}

// fitPlace is where, within segment s of a run's background-free rates
// x, the shape fits best, wholly inside the segment (its onset when the
// shape is the longer): the onset with the least sum of differences,
// where the shape standing above the run counts underWeight times as
// much as the run standing above the shape. Another job's burst only
// adds to the run's rates, so the burst fits under them; by absolute
// differences alone a burst half off a foreign one it sits on fits
// better than on it.
func fitPlace(x []float64, s segment, shape []float64) int {
	if s.hi-s.lo <= len(shape) {
		return s.lo
	}
	best, at := math.Inf(1), s.lo
	for o := s.lo; o+len(shape) <= s.hi; o++ {
		d := 0.0
		for q, v := range shape {
			d += max(0, x[o+q]-v) + underWeight*max(0, v-x[o+q])
		}
		if d < best {
			best, at = d, o
		}
	}
	return at
}

// supported matches every run's bursts to those of run ref: scaled to its
// length (stretch nil), or by each run's stretch within a tighter drift
// (runs without a stretch are not matched).
func supported(p *prepared, segs [][]segment, ref int, stretch []float64, prev *matching) matching {
	rs := segs[ref]
	below, above := runVolumeRatio, 4*maxVolumeRatio
	if prev != nil {
		// Matched again against the typical volume of each burst's
		// first matches, within a tighter ratio: contention changes a
		// burst's duration, not its bytes.
		rs = slices.Clone(rs)
		for k := range rs {
			if prev.vols[k] != nil {
				rs[k].vol = median(prev.vols[k])
			}
		}
		below, above = foreignVolumeRatio, tightVolumeRatio
	}
	n := len(p.t[ref])
	m := matching{match: make([][]int, len(p.t)), vols: make([][]float64, len(rs))}
	for k, s := range rs {
		m.vols[k] = []float64{s.vol}
	}
	const tol = 4
	state := make([][]int, len(p.t))
	for i := range p.t {
		state[i] = make([]int, len(rs))
		m.match[i] = make([]int, len(rs))
		for k := range m.match[i] {
			m.match[i][k] = -1
		}
		if i == ref {
			for k := range rs {
				m.match[i][k] = k
				state[i][k] = shown
			}
			continue
		}
		f, share := float64(n)/float64(len(p.t[i])), driftShare
		if stretch != nil {
			if math.IsNaN(stretch[i]) {
				continue
			}
			f, share = 1/stretch[i], tightDriftShare
		}
		m.match[i] = matchSegments(rs, segs[i], f, tol, share, below, above)
		for k, j := range m.match[i] {
			switch {
			case j >= 0:
				m.vols[k] = append(m.vols[k], segs[i][j].vol)
				state[i][k] = shown
			case hiddenAt(rs[k], segs[i], f, below):
				state[i][k] = hidden
			}
		}
	}
	for k, ok := range keptBursts(state) {
		if !ok {
			m.vols[k] = nil // most runs do not show it: a foreign burst
		}
	}
	return m
}

// keptBursts tells, for each reference burst, whether most runs show
// it (shownByMost), from state[i][k], the state of burst k in run i.
func keptBursts(state [][]int) []bool {
	if len(state) == 0 {
		return nil
	}
	kept := make([]bool, len(state[0]))
	for k := range kept {
		var c [3]int
		for i := range state {
			c[state[i][k]]++
		}
		kept[k] = shownByMost(c[shown], c[denied], len(state))
	}
	return kept
}

// The state of a reference burst in a run: the run is quiet where it
// would be (denied), shows it, or has a larger burst there (hidden).
const (
	denied = iota
	shown
	hidden
)

// shownByMost tells whether a burst is the application's, from the
// number of runs that show it and of those that deny it (quiet where it
// would be), among runs runs: most runs that can tell show it, and at
// least a third of all the runs and two at least do. A run whose rates
// are covered there by a larger burst (another job's, or its own merged
// with one) can neither show nor deny it: in a busy center most runs of
// an application with small bursts are in that state for some of them,
// and counting them against the burst dropped bursts that every clean
// run shows (tuning seed 307's eli/plasma_e: each of its eight bursts
// is clean in five to seven of its twelve runs, two of which are
// restarts without I/O, and covered in most of the others).
func shownByMost(shown, denied, runs int) bool {
	return shown > denied && 3*shown >= runs && shown >= 2
}

// hiddenAt tells whether a run (its times scaled by f onto the
// reference's) has a burst too large to be the reference's burst ref
// (more than below times its volume) over at least half of where ref
// would be: another job's burst covers the place, or the application's
// merged with one. A larger burst only near the place does not hide it:
// the run is quiet where the burst would be, and denies it.
func hiddenAt(ref segment, run []segment, f, below float64) bool {
	for _, s := range run {
		cover := min(f*float64(s.hi), float64(ref.hi)) - max(f*float64(s.lo), float64(ref.lo))
		if 2*cover >= float64(ref.hi-ref.lo) && s.vol > below*ref.vol {
			return true
		}
	}
	return false
}

// support scores a reference: the sum over its kept bursts of the share
// of runs beyond half that show each. A run whose bursts are the
// application's scores about a half per burst; one whose extra bursts
// found matches by chance gains little from them.
func support(v [][]float64, runs int) float64 {
	s := 0.0
	for _, x := range v {
		if x != nil {
			s += float64(len(x))/float64(runs) - 0.5
		}
	}
	return s
}

// detrended is one run's total rate above its local floor (the lowest
// 3-point average within baselineS seconds), smoothed by a 3-point
// average, with its noise: the robust standard deviation of its
// point-to-point changes.
type detrended struct {
	x, sm []float64
	noise float64
}

func detrend(t []float64, stepS float64) detrended {
	n := len(t)
	half := max(60, int(baselineS/stepS))
	sm := make([]float64, n)
	for i := range t {
		a, b := max(0, i-1), min(n, i+2)
		s := 0.0
		for _, v := range t[a:b] {
			s += v
		}
		sm[i] = s / float64(b-a)
	}
	floor := make([]float64, n)
	for i := range sm {
		floor[i] = slices.Min(sm[max(0, i-half):min(n, i+half+1)])
	}
	d := detrended{x: make([]float64, n), sm: make([]float64, n)}
	var diffs []float64
	for i := range t {
		d.x[i] = max(0, t[i]-floor[i])
		d.sm[i] = max(0, sm[i]-floor[i])
		if i > 0 {
			diffs = append(diffs, math.Abs(t[i]-t[i-1]))
		}
	}
	d.noise = 1.4826 * median(diffs) / math.Sqrt2
	return d
}

// segmentThreshold is the level the bursts of an application's runs are
// cut at: above six times each run's noise, and above a tenth of the
// level the application's bursts recur at, the median over runs of each
// run's third-highest crest (a run's two highest may be other jobs';
// the application's own recur in every run). No run's largest burst sets
// it, which may be another job's forty times the size.
func segmentThreshold(ds []detrended) float64 {
	var thirds []float64
	for _, d := range ds {
		var peaks []float64
		for _, s := range findSegments(d, 6*d.noise, 1) {
			peaks = append(peaks, slices.Max(d.sm[s.lo:s.hi]))
		}
		if len(peaks) == 0 {
			continue
		}
		slices.Sort(peaks)
		thirds = append(thirds, peaks[max(0, len(peaks)-3)])
	}
	if len(thirds) == 0 {
		return 0
	}
	return 0.1 * median(thirds)
}

// findSegments cuts a detrended run where its smoothed rate stands above
// thr, joined across a dip of one point, and widens each stretch by up
// to two points where the rate itself is still above a tenth of thr
// (the partly covered log intervals at the edges).
func findSegments(d detrended, thr, stepS float64) []segment {
	t, sm := d.x, d.sm
	n := len(t)
	thr = max(thr, 6*d.noise)
	if !(thr > 0) {
		return nil
	}
	var out []segment
	for i := 0; i < n; {
		if sm[i] <= thr {
			i++
			continue
		}
		lo := i
		hi := i
		for hi < n && (sm[hi] > thr || hi+1 < n && sm[hi+1] > thr) {
			hi++
		}
		i = hi
		for k := 0; k < 2 && lo > 0 && t[lo-1] > 0.1*thr; k++ {
			lo--
		}
		for k := 0; k < 2 && hi < n && t[hi] > 0.1*thr; k++ {
			hi++
		}
		for lo < hi && t[lo] <= 0.1*thr {
			lo++
		}
		for hi > lo && t[hi-1] <= 0.1*thr {
			hi--
		}
		if hi <= lo {
			continue
		}
		v := 0.0
		for _, x := range t[lo:hi] {
			v += x * stepS
		}
		if len(out) > 0 && out[len(out)-1].hi >= lo {
			last := &out[len(out)-1]
			for _, x := range t[last.hi:max(last.hi, hi)] {
				last.vol += x * stepS
			}
			last.hi = max(last.hi, hi)
			continue
		}
		out = append(out, segment{lo: lo, hi: hi, vol: v})
	}
	return out
}

// driftShare is how far, as a share of its time from the run's start, a
// burst may have drifted from where the run's overall stretch puts it.
const driftShare = 0.05

// tightDriftShare is the same once each run's stretch is known: what is
// left is the drift of its compute phases and bursts around it.
const tightDriftShare = 0.025

// refShare is how close to the best-supported run's support a run must
// come to be the reference, the shortest of those that do.
const refShare = 0.8

// maxVolumeRatio is how far apart two bursts' volumes may be for one to
// be the other in another run: contention changes a burst's duration and
// rate, not its bytes, but a foreign burst may add to it.
const maxVolumeRatio = 1.6

// runVolumeRatio is how much larger a run's burst may be than the
// reference's it matches: another job's burst may sit on it.
const runVolumeRatio = 1.6

// tightVolumeRatio bounds the ratio of volumes in the second matching,
// against each burst's typical volume.
const tightVolumeRatio = 1.3

// foreignVolumeRatio is how much larger than that a run's burst may be
// in the second matching: another job's burst may sit on it, and its
// place is now known closely.
const foreignVolumeRatio = 2.5

// matchSegments matches the bursts of a run (its times scaled by f onto
// the reference's) to the reference's bursts in order, by dynamic
// programming: a pair may match when their starts are within driftShare
// of the time plus half the burst's width (at least minTol points) and
// their volumes within a factor of maxVolumeRatio (four times that when
// the reference's is the larger), and the matching maximises
// the sum of the pairs' closeness. It returns, for each reference burst,
// the index of its match or -1.
func matchSegments(ref, run []segment, f, minTol, share, below, above float64) []int {
	nr, nu := len(ref), len(run)
	score := func(i, j int) float64 {
		// Drift grows along the run: a burst may be off by a few
		// percent of its time, and by half its width.
		tol := max(minTol, share*float64(ref[i].lo)+0.5*float64(ref[i].hi-ref[i].lo))
		d := math.Abs(float64(ref[i].lo) - f*float64(run[j].lo))
		if d >= tol || !(run[j].vol > 0) {
			return math.Inf(-1)
		}
		// The reference's burst may carry a foreign one besides.
		lr := math.Log(ref[i].vol / run[j].vol)
		if lr < -math.Log(below) || lr > math.Log(above) {
			return math.Inf(-1)
		}
		return 1 - 0.5*d/tol - 0.3*min(1, math.Abs(lr)/math.Log(maxVolumeRatio))
	}
	// best[i][j]: the best total over ref[:i] and run[:j].
	best := make([][]float64, nr+1)
	for i := range best {
		best[i] = make([]float64, nu+1)
	}
	for i := 1; i <= nr; i++ {
		for j := 1; j <= nu; j++ {
			b := max(best[i-1][j], best[i][j-1])
			if s := score(i-1, j-1); s > 0 {
				b = max(b, best[i-1][j-1]+s)
			}
			best[i][j] = b
		}
	}
	out := make([]int, nr)
	for i := range out {
		out[i] = -1
	}
	for i, j := nr, nu; i > 0 && j > 0; {
		switch s := score(i-1, j-1); {
		case s > 0 && best[i][j] == best[i-1][j-1]+s:
			out[i-1] = j - 1
			i, j = i-1, j-1
		case best[i][j] == best[i-1][j]:
			i--
		default:
			j--
		}
	}
	return out
}

// lengthSpread is the interquartile range of the lengths of the runs
// left after preprocessing, over their median: how unevenly contention
// stretched them.
func lengthSpread(samples []Sample, o Options) float64 {
	o.Trim, o.Background = false, false
	p, err := preprocess(samples, o)
	if err != nil || len(p.t) < 2 {
		return 0
	}
	l := make([]float64, len(p.t))
	for i, t := range p.t {
		l[i] = float64(len(t))
	}
	return (quantile(l, 0.75) - quantile(l, 0.25)) / median(l)
}

// supportedShare is the share of a signature's bytes in bursts that most
// of the runs show, and the number of those bursts of at least a tenth
// of the largest: each run's bursts
// (cut as extractAligned cuts them) are matched to the signature's,
// scaled to its length, as the first matching of extractAligned matches
// them to the anchor's, and counted as supported matches do
// (shownByMost). A burst that only one run's foreign job put there finds
// no match in most runs.
func supportedShare(sig *Signature, samples []Sample, o Options) (float64, int) {
	if sig == nil || len(sig.Bursts) == 0 || len(sig.Write) == 0 {
		return 0, 0
	}
	o.Trim = false
	p, err := preprocess(samples, o)
	if err != nil || len(p.t) == 0 {
		return 0, 0
	}
	ds := make([]detrended, len(p.t))
	for i, t := range p.t {
		ds[i] = detrend(t, p.stepS)
	}
	thr := segmentThreshold(ds)
	ref := make([]segment, len(sig.Bursts))
	total := 0.0
	for k, b := range sig.Bursts {
		v := b.WriteBytes + b.ReadBytes
		ref[k] = segment{lo: int(b.StartS / sig.StepS), hi: max(int(b.StartS/sig.StepS)+1, int(math.Ceil(b.EndS/sig.StepS))), vol: v}
		total += v
	}
	state := make([][]int, len(p.t))
	for i := range p.t {
		f := float64(len(sig.Write)) / float64(len(p.t[i]))
		run := findSegments(ds[i], thr, p.stepS)
		state[i] = make([]int, len(ref))
		for k, j := range matchSegments(ref, run, f, 4, driftShare, runVolumeRatio, 4*maxVolumeRatio) {
			switch {
			case j >= 0:
				state[i][k] = shown
			case hiddenAt(ref[k], run, f, runVolumeRatio):
				state[i][k] = hidden
			}
		}
	}
	if !(total > 0) {
		return 0, 0
	}
	sup, largest := 0.0, 0.0
	kept := keptBursts(state)
	for k, ok := range kept {
		if ok {
			sup += ref[k].vol
			largest = max(largest, ref[k].vol)
		}
	}
	// Bursts counted are those of at least a tenth of the largest, the
	// level findSegments cuts at: the aligned extraction keeps small
	// bumps of a varying background that recur near any time.
	n := 0
	for k, ok := range kept {
		if ok && 10*ref[k].vol >= largest {
			n++
		}
	}
	return sup / total, n
}
