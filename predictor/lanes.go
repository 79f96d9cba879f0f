package predictor

import (
	"slices"
	"time"

	"iopred/predictor/sequitur"
	"iopred/tracefmt"
)

// lane is the call sequence of one thread. Threads of a process interleave
// their calls in an order that changes from run to run (an I/O thread next
// to a polling main thread), which a single grammar would see as noise; so
// each thread gets its own grammar and its own previous call, while the
// context symbols and the size, offset, file and time tables are shared.
// Threads map to lanes in the order they first call, which is stable
// across runs for the usual main-thread-then-workers programs.
type lane struct {
	main      *sequitur.Predictor
	startSym  int
	prev      int
	prevEndNs int64
	prevPath  string
	// weight is an exponential average of how often this lane made the
	// latest call; it weighs the lanes' candidates.
	weight float64
}

// laneDecay is how much of a lane's weight survives each call.
const laneDecay = 0.9

// store copies the model's current-lane fields into lane i.
func (m *Model) store(i int) {
	l := &m.lanes[i]
	l.main, l.startSym, l.prev, l.prevEndNs, l.prevPath = m.main, m.startSym, m.prev, m.prevEndNs, m.prevPath
}

// load makes lane i the current lane.
func (m *Model) load(i int) {
	l := &m.lanes[i]
	m.main, m.startSym, m.prev, m.prevEndNs, m.prevPath = l.main, l.startSym, l.prev, l.prevEndNs, l.prevPath
	m.cur = i
}

// switchTo makes the lane of thread tid current, creating it if needed,
// for the call of symbol s. It tells whether the lane changed; then s
// counts as a cross-thread successor of the process's previous call.
func (m *Model) switchTo(tid int32, s int) (switched bool) {
	var i int
	if m.runCache.laneOK && tid == m.runCache.laneTid {
		i = m.runCache.lane
	} else {
		var ok bool
		if i, ok = m.laneOf[tid]; !ok {
			i = len(m.laneOf)
			if i >= m.opt.MaxThreads {
				i = m.opt.MaxThreads - 1
			}
			m.laneOf[tid] = i
		}
		m.runCache.laneTid, m.runCache.lane, m.runCache.laneOK = tid, i, true
	}
	for i >= len(m.lanes) {
		m.lanes = append(m.lanes, lane{main: sequitur.NewPredictor(), startSym: -1, prev: -1})
	}
	if i != m.cur {
		if m.prev >= 0 {
			// The lanes' transitions do not hold this pair of calls.
			m.syms[m.prev].noteCross(s)
		}
		m.store(m.cur)
		m.load(i)
		switched = true
	}
	if len(m.lanes) > 1 {
		for j := range m.lanes {
			m.lanes[j].weight *= laneDecay
		}
		m.lanes[i].weight += 1 - laneDecay
	}
	return switched
}

// laneCandidates merges the candidates of every active lane when the
// process has several threads: each lane's candidates are scaled by the
// lane's weight, and their delays are counted from the latest event of the
// process rather than from the lane's own latest call.
func (m *Model) laneCandidates(one func() []Prediction) []Prediction {
	cur := m.cur
	m.store(cur)
	// base: the process successor of the process's previous call (the
	// current lane's latest), and baseLane the lane of its likeliest
	// candidate, which the stable sort below puts first among its
	// copies.
	procPrev, base, baseLane, baseProb := m.prev, -1, -1, 0.0
	var want *symbol
	var cross bool
	if !m.opt.NoFallback && procPrev >= 0 {
		base = int(m.syms[procPrev].ProcNext) - 1
		if base >= 0 {
			want, cross = m.syms[base], m.syms[procPrev].ProcNextCross
		}
	}
	// Of base's copies (one per lane that names its call), the one to
	// put first: never one on a file that is not open (see closedData);
	// one of the thread the process successor was counted for (the
	// previous call's thread, or another one when it was counted across
	// threads), else the likeliest.
	baseRank, basePath := 0, ""
	var lastEnd int64
	for i := range m.lanes {
		lastEnd = max(lastEnd, m.lanes[i].prevEndNs)
	}
	var out []Prediction
	// topLane is the lane of the first candidate after the stable sort
	// below: the first one appended with the highest probability.
	topLane, topProb := -1, 0.0
	for i := range m.lanes {
		l := &m.lanes[i]
		if l.weight < 0.01 {
			continue
		}
		m.load(i)
		for _, p := range one() {
			p.Probability *= l.weight
			p.Delay = max(0, p.Delay+time.Duration(l.prevEndNs-lastEnd))
			if topLane < 0 || p.Probability > topProb {
				topLane, topProb = i, p.Probability
			}
			if want != nil && p.Ctx == want.Ctx && p.Op == want.Op && !m.closedData(&p) {
				rank := 0
				if (i != cur) == cross {
					rank++
				}
				if baseLane < 0 || rank > baseRank || (rank == baseRank && p.Probability > baseProb) {
					baseLane, baseProb, baseRank, basePath = i, p.Probability, rank, p.Path
				}
			}
			out = append(out, p)
		}
	}
	m.load(cur)
	var total float64
	for _, p := range out {
		total += p.Probability
	}
	if total > 0 {
		for i := range out {
			out[i].Probability /= total
		}
	}
	slices.SortStableFunc(out, func(a, b Prediction) int {
		switch {
		case a.Probability > b.Probability:
			return -1
		case a.Probability < b.Probability:
			return 1
		}
		return 0
	})
	m.pending, m.pendingGuess = -1, false
	if len(out) > 0 {
		if s, ok := m.dict[symKey{out[0].Ctx, out[0].Op}]; ok {
			m.pending = s
		}
		m.threadFileFallback(out, topLane != cur)
		if base >= 0 {
			m.scoreProcessSuccessor(out, procPrev, base, baseLane, topLane, cur, basePath, !cross && baseLane != cur)
		}
	}
	return out
}

// scoreProcessSuccessor notes the merged candidates' answer, after the
// file's fallback (which may have put another call first), and the
// process successor base of the process's previous call procPrev, to be
// scored at the next event; and puts base first, when it is among the
// candidates (baseLane, the lane of its likeliest copy, not -1), while it
// has been right more often after procPrev, or as often when it is
// another thread's call than the answer's (topLane's, or the previous
// call's, cur, when the file's fallback put its candidate first): the
// merged candidates rank threads by how recently they called, which tells
// nothing of which thread follows this call, while the process successor
// has seen it (fio's checkpoint burst after the disk-usage thread's poll,
// and the poll's next call after a random reader's reads: each first run
// lost the call that would have proved it).
func (m *Model) scoreProcessSuccessor(out []Prediction, procPrev, base, baseLane, topLane, cur int, basePath string, ownFile bool) {
	top := m.pending
	if top >= 0 && (out[0].Ctx != m.syms[top].Ctx || out[0].Op != m.syms[top].Op) {
		top, topLane = -1, cur
		if s, ok := m.dict[symKey{out[0].Ctx, out[0].Op}]; ok {
			top = s
		}
		m.pending = top
	}
	if top < 0 {
		return
	}
	m.pendingProc, m.pendingTop, m.pendingBase = true, top, base
	if baseLane >= 0 && top != base && m.syms[procPrev].ProcArb.preferBase(baseLane == topLane) {
		m.processSuccessorFallback(out, base, basePath, ownFile)
		m.pending = base
	}
}

// processSuccessorFallback moves the first candidate for symbol base, the
// call that most often came next in the process after its previous call,
// to the front of the merged candidates, whole (its thread's file, offset,
// size and delay), marked as the context baseline's. It is called while
// that has been right more often than the merged candidates' first after
// that call (ProcArb): a thread that polls between another's bursts (fio's
// disk-usage thread reading /sys/block/*/stat) has its own next call,
// another poll, for its lane's first candidate, and a weight that its
// three calls just raised, while the other thread's burst comes next.
//
// ownFile tells that the successor was counted within the previous call's
// thread while the copy moved is another thread's (the previous call's
// own lane names another call): the call is the successor's, but its
// file is the previous call's, with no offset (the copy's offset is for
// another file), as threadFileFallback does.
func (m *Model) processSuccessorFallback(out []Prediction, base int, path string, ownFile bool) {
	want := m.syms[base]
	for i := 1; i < len(out); i++ {
		if out[i].Ctx == want.Ctx && out[i].Op == want.Op && out[i].Path == path {
			c := out[i]
			c.Fallback |= FieldContext
			if prev := m.procPrevPath; ownFile && prev != "" && c.Path != prev {
				c.Path, c.FileID, c.Offset = prev, 0, tracefmt.NoOffset
				c.Fallback |= FieldFile
				if fs := m.files[prev]; fs != nil {
					c.FileID = fs.id
				}
			}
			copy(out[1:i+1], out[:i])
			out[0] = c
			return
		}
	}
}

// closedData tells whether p is a data call on a file that is not open:
// its thread closed it (a reader whose job ended, in fio), and no read or
// write can come on it before an open. The thread's lane still names its
// loop's next read, with the weight its recent calls gave it, so the bet
// on it is not one to trust over the previous call's file, however often
// bets on that thread were right while it ran.
func (m *Model) closedData(p *Prediction) bool {
	if p.Offset == tracefmt.NoOffset || p.Path == "" {
		return false
	}
	_, open := m.files[p.Path]
	return !open
}

// threadFileFallback gives the first of the merged candidates the file of
// the process's previous call while that has been right more often than
// the candidates' own (a thread reading a status file line by line beside
// a busier writer thread: the writer's call leads the merged candidates,
// but the reader's calls follow one another). The answers given are
// scored at the next event, so a process that asks for no predictions
// pays nothing.
//
// switching tells whether the first candidate is another thread's than
// the previous call's: the merged candidates then bet on a change of
// thread, where the previous call's file bets on its thread going on. The
// two bets are scored apart (one score let a phase where the main thread
// ran alone, its lane's candidate right, outvote the previous call's file
// for the next eight calls of two interleaved worker threads: fio's second
// run), and a bet on a change of thread yields until it has been right
// more often, not on a tie (each of four fio runs lost the call that would
// have proved it). It yields to the likeliest candidate on the previous
// call's file when there is one, moved first whole (its own call, offset
// and size; the bet stays among the candidates), else as below. A bet on
// a change of thread that is a data call on a file not open (closedData)
// yields whatever the scores say.
func (m *Model) threadFileFallback(out []Prediction, switching bool) {
	if m.opt.NoFallback {
		return
	}
	p := &out[0]
	m.pendingPath, m.pendingFile, m.pendingSwitch = p.Path, true, switching
	prev := m.procPrevPath
	if prev == "" || p.Path == prev {
		return
	}
	useBase := m.threadFile[0].useBase()
	if switching {
		useBase = m.threadFile[1].preferBase(false)
	}
	if !useBase && !(switching && m.closedData(p)) {
		return
	}
	if switching {
		for i := 1; i < len(out); i++ {
			if out[i].Path == prev {
				c := out[i]
				// The time to the process's next call stays the bet's:
				// a thread's own next call may come after a pause
				// (fio's think time) that the other thread's calls fill.
				c.Delay, c.Fallback = out[0].Delay, c.Fallback&^FieldDelay|out[0].Fallback&FieldDelay|FieldFile
				copy(out[1:i+1], out[:i])
				out[0] = c
				return
			}
		}
	}
	// The call is still the candidate's, so its offset and size say
	// nothing of that file: no offset, and NextSize and NextOffset, which
	// look for a candidate on the file they are asked about, pass it by.
	p.Path, p.FileID, p.Offset = prev, 0, tracefmt.NoOffset
	p.Fallback |= FieldFile
	if fs := m.files[prev]; fs != nil {
		p.FileID = fs.id
	}
}
