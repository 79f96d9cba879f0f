// Package predictor is iopred's per-process model of an application's I/O,
// after Omnisc'IO (Dorier et al., SC14): each intercepted call becomes a
// context symbol (the call-stack context id combined with the operation),
// a Sequitur grammar learns the stream of symbols and predicts the next
// ones, and small tables attached to symbols and to transitions between
// symbols predict the size, file, offset and start time of each predicted
// operation.
//
// Sizes are kept per symbol, offsets, files and inter-arrival times per
// transition, each table going from a single value to a local grammar of
// values to plain statistics as the values vary more. Offsets are tracked
// per file, so interleaved files do not disturb each other, and a PLFS
// pattern detector per file takes over when the offset tables are unsure
// but the file's access pattern is certain.
//
// Files are identified by path and contexts by their stable ids, so a model
// saved at the end of one run (Save) and loaded at the start of the next
// (Load) predicts the second run from its first operation.
package predictor

import (
	"strconv"
	"strings"
	"time"

	"iopred/predictor/pattern"
	"iopred/predictor/sequitur"
	"iopred/tracefmt"
)

// Options bounds the model. The zero value selects the defaults.
type Options struct {
	// SizeBound is the number of distinct sizes a context symbol may show
	// before its local size grammar gives way to statistics (the paper's
	// N = 24). Default 24.
	SizeBound int
	// OffsetBound is the number of distinct offset transformations a
	// transition may show before it falls back to predicting sequential
	// access. Default 24.
	OffsetBound int
	// PatternWindow is the window of the per-file pattern detectors.
	// Default 16.
	PatternWindow int
	// MaxOpenFiles bounds the files whose position and pattern the model
	// tracks at once: a file's state is dropped when it is closed, and
	// past the bound the least recently used file's state is dropped.
	// Default 1024.
	MaxOpenFiles int
	// PhaseGap is the expected idle time after which Phase considers the
	// current I/O phase over. Default 10 ms.
	PhaseGap time.Duration
	// PhaseHorizon is how many operations Phase looks ahead at most.
	// Default 4096.
	PhaseHorizon int
	// MaxThreads bounds the threads that get their own grammar; later
	// threads share the last one. Default 16.
	MaxThreads int
	// NoFallback makes every prediction come from the model's own tables,
	// never from a baseline (see Field): for evaluating the tables alone.
	NoFallback bool
}

func (o Options) withDefaults() Options {
	if o.SizeBound <= 0 {
		o.SizeBound = 24
	}
	if o.OffsetBound <= 0 {
		o.OffsetBound = 24
	}
	if o.PatternWindow <= 0 {
		o.PatternWindow = 16
	}
	if o.MaxOpenFiles <= 0 {
		o.MaxOpenFiles = 1024
	}
	if o.PhaseGap <= 0 {
		o.PhaseGap = 10 * time.Millisecond
	}
	if o.PhaseHorizon <= 0 {
		o.PhaseHorizon = 4096
	}
	if o.MaxThreads <= 0 {
		o.MaxThreads = 16
	}
	return o
}

// Prediction is one predicted operation.
type Prediction struct {
	Op     string // the call, as in tracefmt.Event.Op
	Path   string // the file it touches ("" when unknown or none)
	FileID uint32 // the file's id in the current run's trace, 0 when not open
	Offset int64  // tracefmt.NoOffset for calls without an offset
	Size   int64
	// Delay is the expected time from the end of the last observed event
	// until this operation starts.
	Delay       time.Duration
	Probability float64
	Ctx         uint64 // the context id of the call
	// Fallback tells which fields came from a simple baseline because it
	// has been more accurate than the model's tables at this point of the
	// program (see Field); 0 when all came from the model.
	Fallback Field
}

// symKey identifies a context symbol: where the call came from and what it
// was.
type symKey struct {
	ctx uint64
	op  string
}

// symbol holds what the model knows of one context symbol.
type symbol struct {
	Ctx      uint64            `msgpack:"x"`
	Op       string            `msgpack:"op"`
	Count    uint64            `msgpack:"n"`
	Sizes    valueTable[int64] `msgpack:"s"`
	SizeStat Stats             `msgpack:"ss"`
	Duration Stats             `msgpack:"d"` // ns the call took
	LastPath string            `msgpack:"p"` // file of its latest occurrence
	// Next is 1 + the symbol that most often followed this one (0: none
	// yet), seen NextN times: the context baseline.
	Next  int32  `msgpack:"nx,omitempty"`
	NextN uint64 `msgpack:"nn,omitempty"`
	// LastSize is the size of its latest occurrence (when Count > 0).
	LastSize int64 `msgpack:"ls,omitempty"`
	// CtxArb scores the grammar against the context baseline after this
	// symbol; RepeatArb this symbol's size table against its own last
	// size, and SizeArb whichever of those two is chosen (see ownSize)
	// against the file's last size.
	// They describe the current run only and are not saved: a loaded
	// model's tables know more than when the scores were made.
	CtxArb    arbiter `msgpack:"-"`
	RepeatArb arbiter `msgpack:"-"`
	SizeArb   arbiter `msgpack:"-"`
	// ProcNext is 1 + the symbol that most often came next in the process,
	// in whichever thread (0: none yet), ProcNextN times; ProcArb scores
	// the first of the merged candidates against it (see
	// processSuccessorFallback). Counted only while the process has
	// several threads (with one, the process's successor is Next), and
	// for the current run only.
	// ProcNextCross tells whether those ProcNextN times were counted
	// across threads (another thread's call came next) rather than
	// within the thread.
	ProcNext      int32   `msgpack:"-"`
	ProcNextN     uint64  `msgpack:"-"`
	ProcNextCross bool    `msgpack:"-"`
	ProcArb       arbiter `msgpack:"-"`
	// Cross counts the calls of other threads that came right after this
	// one (the process successor's counts across threads; the lanes'
	// transitions count those within one, ProcCount), at most maxCross.
	Cross []crossCount `msgpack:"-"`
}

// transition holds what the model knows of one transition between context
// symbols.
type transition struct {
	Count   uint64      `msgpack:"n"`
	Gap     Stats       `msgpack:"g"` // ns from the end of the first to the start of the second
	Offsets offsetTable `msgpack:"o"`
	Files   fileTable   `msgpack:"f"`
	// Scores of the tables above against the baselines (see Field).
	// Like symbol's, run-time only.
	FileArb arbiter    `msgpack:"-"`
	GapArb  gapChooser `msgpack:"-"`
	OffArb  arbiter    `msgpack:"-"`
	// ProcCount counts the times the second symbol came right after the
	// first in the process, no other thread's call between them (Count
	// also counts the thread's calls that others interleaved); run-time
	// only, while the process has several threads.
	ProcCount uint64 `msgpack:"-"`
}

// fileState is the run-time state of one file.
type fileState struct {
	id     uint32
	end    int64 // where the latest data operation ended
	fresh  bool  // no data operation since open: the position is 0
	stream *pattern.Stream
	used   uint64 // event count at the latest call on the file
	// lastSize is the size of the latest data call on the file, when
	// hasSize: the size baseline.
	lastSize int64
	hasSize  bool
	// streamArb scores the access pattern's predictions against
	// contiguous access.
	streamArb arbiter
	// nextOffArb scores NextOffset's answers from the candidates against
	// contiguous access, at the file's next data call after each answer
	// (Model.offAsked).
	nextOffArb arbiter
}

// newFile returns the state of a newly seen file, dropping the least
// recently used file when Options.MaxOpenFiles are tracked already.
func (m *Model) newFile(id uint32) *fileState {
	if len(m.files) >= m.opt.MaxOpenFiles {
		var oldest string
		var oldestUse uint64
		first := true
		for p, f := range m.files {
			if first || f.used < oldestUse || (f.used == oldestUse && p < oldest) {
				oldest, oldestUse, first = p, f.used, false
			}
		}
		if m.offAsked == m.files[oldest] {
			m.offAsked = nil
		}
		delete(m.files, oldest)
		m.runCache.file = nil
	}
	return &fileState{id: id, fresh: true}
}

// Model is the per-process model. It is not safe for concurrent use.
type Model struct {
	opt  Options
	main *sequitur.Predictor
	dict map[symKey]int
	// lastKey and lastSym cache the latest dict lookup.
	lastKey   symKey
	lastSym   int
	lastKeyOK bool
	syms      []*symbol
	trans     map[uint64]*transition

	// startSym is the first symbol ever observed, predicted before the
	// first operation of a run; -1 when none.
	startSym int

	// The grammar, startSym and the previous call above are those of the
	// current lane (the thread of the latest event); lanes holds every
	// thread's, and laneOf maps this run's thread ids to lanes.
	lanes  []lane
	cur    int
	laneOf map[int32]int

	// Run-time state, not saved: it describes the current run only.
	prev      int // symbol of the latest event, -1 before the first
	prevEndNs int64
	prevPath  string
	files     map[string]*fileState
	// lastGap is the time between the two latest calls (when haveGap): the
	// delay baseline.
	lastGap int64
	haveGap bool
	// procPrevPath is the file of the process's latest call on one, in
	// whichever thread (prevPath is the current lane's). threadFile scores,
	// in a process with several threads, the file of the first of the
	// merged candidates (pendingPath, when pendingFile) against it: [0]
	// where that candidate is the previous call's thread's, [1] where it
	// is another thread's (pendingSwitch; see threadFileFallback).
	// offAsked is the file of NextOffset's latest answer from the
	// candidates, offAskedOff that answer and offAskedBase contiguous
	// access, to be scored at the file's next data call (nil once scored,
	// or when they agree).
	offAsked                  *fileState
	offAskedOff, offAskedBase int64
	procPrevPath              string
	threadFile                [2]arbiter
	pendingPath               string
	pendingFile               bool
	pendingSwitch             bool
	// pendingProc tells that the merged candidates' first symbol
	// (pendingTop, before processSuccessorFallback) and the process
	// successor (pendingBase) are to be scored at the next event.
	pendingProc bool
	pendingTop  int
	pendingBase int
	// delayArb scores the delay of the model's first candidate against
	// the last gap.
	delayArb delayErrors
	// newTransFile scores, on transitions not seen before, the file the
	// context touched last against the previous call's file.
	newTransFile arbiter
	// topFile scores the file of the model's first candidate against the
	// previous call's file.
	topFile arbiter
	// freshSize is the size of the latest first data call on a file
	// since its open (when hasFreshSize): NextSize's guess for a file
	// that had none yet.
	freshSize    int64
	hasFreshSize bool
	// closedSizes keeps the last size of files closed in this run, for
	// the size baseline when they are opened again (bounded by
	// Options.MaxOpenFiles).
	closedSizes map[string]int64

	// runCache holds the latest lookups of Observe's maps: a loop's
	// events repeat the thread, the file and the transition.
	runCache runCache

	events, ignored, data uint64
	// Online accuracy of the first step of the latest Predict call.
	pending      int
	pendingGuess bool // the pending prediction is a guess (see guess)
	scored, hits uint64
	// selfSteps and selfScore: the grammar's own running score (score).
	selfSteps uint64
	selfScore float64
	// Guesses made when the grammar had no prediction, and how many named
	// the right context.
	guesses, guessHits uint64
}

// New returns an empty model.
func New(opt Options) *Model {
	m := &Model{
		opt:   opt.withDefaults(),
		main:  sequitur.NewPredictor(),
		dict:  map[symKey]int{},
		trans: map[uint64]*transition{},
	}
	m.startSym = -1
	m.lanes = []lane{{}}
	m.resetRun()
	m.store(0)
	return m
}

// resetRun forgets the state of the current run (files, previous event).
func (m *Model) resetRun() {
	m.prev = -1
	m.prevEndNs = 0
	m.prevPath = ""
	m.files = map[string]*fileState{}
	m.lastGap, m.haveGap = 0, false
	m.freshSize, m.hasFreshSize = 0, false
	m.delayArb = delayErrors{}
	m.procPrevPath, m.threadFile, m.pendingFile = "", [2]arbiter{}, false
	m.pendingProc, m.offAsked = false, nil
	m.newTransFile, m.topFile = arbiter{}, arbiter{}
	m.closedSizes = map[string]int64{}
	m.pending = -1
	m.laneOf = map[int32]int{}
	m.runCache = runCache{}
}

// runCache holds the latest entries Observe found in the model's maps.
// Entries of laneOf and trans never change once made, so only a new run
// clears those; a file's entry goes when the file is closed or dropped.
type runCache struct {
	laneTid  int32
	lane     int
	laneOK   bool
	filePath string
	file     *fileState // nil: no file cached
	transKey uint64
	trans    *transition // nil: no transition cached
	op       string      // the latest operation, and whether it moves data
	opData   bool
}

func transKey(from, to int) uint64 { return uint64(uint32(from))<<32 | uint64(uint32(to)) }

// fileKey names the file of an event: its path, or its trace file id when
// the path is unknown, or "" for calls on no file.
func fileKey(e *tracefmt.Event) string {
	if e.Path != "" {
		return e.Path
	}
	if e.FileID != 0 {
		return "#" + strconv.FormatUint(uint64(e.FileID), 10)
	}
	return ""
}

// isOpen and isClose tell calls that reset a file's position.
func isOpen(op string) bool {
	return strings.Contains(op, "open") || strings.HasPrefix(op, "creat")
}

func isClose(op string) bool { return strings.Contains(op, "close") }

// isSeek tells calls that set a file's position, whose events carry it.
func isSeek(op string) bool {
	switch op {
	case "lseek", "lseek64", "fseek", "fseeko", "fseeko64", "rewind", "fsetpos", "fsetpos64", "MPI_File_seek", "MPI_File_seek_shared":
		return true
	}
	return false
}

// movedBytes is how far a data call moved the file position.
func movedBytes(e *tracefmt.Event) int64 {
	switch {
	case e.Bytes > 0:
		return e.Bytes
	case e.Errno != 0 || e.Ret <= 0:
		return 0
	}
	return e.Size
}

// Observe feeds one recorded event to the model. Every event with an
// operation name becomes a symbol of the main grammar (data calls and
// metadata calls alike, since opens and closes mark the program's
// structure); events without one are counted and ignored.
func (m *Model) Observe(e *tracefmt.Event) {
	if e == nil || e.Op == "" {
		m.ignored++
		return
	}
	m.events++
	k := symKey{e.Ctx, e.Op}
	var s int
	if m.lastKeyOK && k == m.lastKey {
		// The same call as the latest one, the usual case in a loop: a
		// symbol's number never changes, so the map need not hash the
		// key again.
		s = m.lastSym
	} else {
		var ok bool
		if s, ok = m.dict[k]; !ok {
			s = len(m.syms)
			m.dict[k] = s
			m.syms = append(m.syms, &symbol{Ctx: e.Ctx, Op: e.Op})
		}
		m.lastKey, m.lastSym, m.lastKeyOK = k, s, true
	}
	if m.pending >= 0 {
		m.scored++
		if m.pending == s {
			m.hits++
		}
		if m.pendingGuess {
			m.guesses++
			if m.pending == s {
				m.guessHits++
			}
		}
		m.pending = -1
	}
	if m.pendingProc {
		// The current lane is still the previous event's: its latest
		// symbol is the process's.
		if m.prev >= 0 {
			m.syms[m.prev].ProcArb.record(m.pendingTop == s, m.pendingBase == s)
		}
		m.pendingProc = false
	}
	switched := m.switchTo(e.Tid, s)
	sym := m.syms[s]
	path := fileKey(e)
	if m.pendingFile {
		if path != "" && m.procPrevPath != "" {
			arb := &m.threadFile[0]
			if m.pendingSwitch {
				arb = &m.threadFile[1]
			}
			arb.record(m.pendingPath == path, m.procPrevPath == path)
		}
		m.pendingFile = false
	}
	c := &m.runCache
	if e.Op != c.op || c.op == "" {
		c.op, c.opData = e.Op, tracefmt.IsData(e.Op)
	}
	isData := c.opData
	hasOffset := isData && e.Offset != tracefmt.NoOffset

	var fs *fileState
	if path != "" {
		if c.file != nil && path == c.filePath {
			fs = c.file
		} else {
			fs = m.files[path]
			if fs == nil && (hasOffset || isOpen(e.Op)) {
				// Only calls that position a file create its state, so
				// that stat or unlink of many paths do not fill the table.
				fs = m.newFile(e.FileID)
				if size, ok := m.closedSizes[path]; ok {
					fs.lastSize, fs.hasSize = size, true
				}
				m.files[path] = fs
			}
			if fs != nil {
				c.filePath, c.file = path, fs
			}
		}
		if fs != nil {
			fs.used = m.events
		}
	}

	if m.prev >= 0 {
		tk := transKey(m.prev, s)
		gap := e.StartNs - m.prevEndNs
		if gap < 0 {
			gap = 0
		}
		t := m.runCache.trans
		if t == nil || tk != m.runCache.transKey {
			if t = m.trans[tk]; t != nil {
				m.runCache.transKey, m.runCache.trans = tk, t
			}
		}
		m.scoreBaselines(s, t, fs, path, gap, hasOffset, e.Size)
		if t == nil {
			t = &transition{}
			m.trans[tk] = t
			m.runCache.transKey, m.runCache.trans = tk, t
		}
		t.Count++
		m.noteSuccessor(m.syms[m.prev], s, t)
		if !switched && len(m.lanes) > 1 {
			t.ProcCount++
			m.syms[m.prev].noteProcSuccessor(s, t.ProcCount, false)
		}
		t.Gap.Add(float64(gap))
		m.lastGap, m.haveGap = gap, true
		if path != "" {
			t.Files.observe(path, m.prevPath, sym.LastPath)
		}
		if hasOffset && fs != nil {
			certain, hit := t.Offsets.observe(e.Offset, fs.end, fs.fresh, m.opt.OffsetBound)
			// Only the table's certain answers are scored: an unsure one
			// gives way to contiguous access on a tie anyway, and the
			// misses of a table still learning its loop must not keep it
			// from being trusted once it knows the loop.
			if certain && t.Count > 1 && !m.opt.NoFallback {
				t.OffArb.record(hit, transform{}.apply(fs.end, fs.fresh) == e.Offset)
			}
		}
	} else if m.startSym < 0 {
		m.startSym = s
	}

	sym.Count++
	sym.Duration.Add(float64(max(e.EndNs-e.StartNs, 0)))
	sym.Sizes.observe(e.Size, m.opt.SizeBound)
	sym.SizeStat.Add(float64(e.Size))
	sym.LastSize = e.Size

	if fs != nil {
		if e.FileID != 0 {
			fs.id = e.FileID
		}
		switch {
		case hasOffset:
			if m.offAsked == fs {
				fs.nextOffArb.record(m.offAskedOff == e.Offset, m.offAskedBase == e.Offset)
				m.offAsked = nil
			}
			contiguous := transform{}.apply(fs.end, fs.fresh)
			if fs.fresh {
				m.freshSize, m.hasFreshSize = e.Size, true
			}
			moved := movedBytes(e)
			fs.end = e.Offset + moved
			fs.fresh = false
			fs.lastSize, fs.hasSize = e.Size, true
			if fs.stream == nil {
				fs.stream = pattern.NewStream(m.opt.PatternWindow)
			}
			wasCertain := fs.stream.Certain()
			fs.stream.Add(e.Offset, moved)
			if wasCertain && !m.opt.NoFallback {
				// The access continued the pattern when the stream is
				// still matched after it.
				fs.streamArb.record(fs.stream.Certain(), e.Offset == contiguous)
			}
		case e.Offset != tracefmt.NoOffset && isSeek(e.Op):
			// A seek's event carries the position it set: the next call
			// on the file starts there (a file read again after rewind).
			fs.end, fs.fresh = e.Offset, false
		case isClose(e.Op):
			if fs.hasSize {
				m.rememberSize(path, fs.lastSize)
			}
			delete(m.files, path)
			if m.offAsked == fs {
				m.offAsked = nil
			}
			if m.runCache.filePath == path {
				m.runCache.file = nil
			}
		case isOpen(e.Op):
			fs.end, fs.fresh = 0, true
		}
	}
	if isData {
		m.data++
	}
	if path != "" {
		sym.LastPath = path
		m.prevPath = path
		m.procPrevPath = path
	}
	m.score(s)
	m.main.Append(s)
	m.prev = s
	m.prevEndNs = e.EndNs
}

// step is one symbol of a predicted sequence.
type step struct {
	sym  int
	prob float64
}

// simFile is the predicted state of a file while Predict walks ahead.
type simFile struct {
	path    string
	end     int64
	fresh   bool
	dataOps int // predicted data operations on the file so far
}

// walker follows a predicted symbol sequence and fills in the details of
// each operation, carrying file positions forward.
type walker struct {
	m        *Model
	prev     int
	prevPath string
	delay    float64 // ns
	// single is set for a one-step walk, which needs no simulated state:
	// the hot path of Predict(1) then allocates nothing but its result.
	single bool
	one    simFile
	files  []simFile
	seen   []int // symbols predicted so far
}

func (w *walker) file(path string) *simFile {
	if w.single {
		w.one = simFile{path: path, fresh: true}
		if fs := w.m.files[path]; fs != nil {
			w.one.end, w.one.fresh = fs.end, fs.fresh
		}
		return &w.one
	}
	for i := range w.files {
		if w.files[i].path == path {
			return &w.files[i]
		}
	}
	f := simFile{path: path, fresh: true}
	if fs := w.m.files[path]; fs != nil {
		f.end, f.fresh = fs.end, fs.fresh
	}
	w.files = append(w.files, f)
	return &w.files[len(w.files)-1]
}

// occurrences counts how often the symbol, and the transition into it,
// already appear among the predicted steps: the local grammars then look
// that many occurrences further ahead.
func (w *walker) occurrences(s int) (symAhead, transAhead int) {
	prev := w.m.prev
	for _, x := range w.seen {
		if x == s {
			symAhead++
			if prev == w.prev {
				transAhead++
			}
		}
		prev = x
	}
	return
}

// next builds the prediction of symbol s following the walk so far.
func (w *walker) next(s int, prob float64) Prediction {
	m := w.m
	sym := m.syms[s]
	symAhead, transAhead := w.occurrences(s)
	var t *transition
	if w.prev >= 0 {
		t = m.trans[transKey(w.prev, s)]
	}
	if len(w.seen) > 0 {
		w.delay += m.syms[w.prev].Duration.Weighted
	}
	path := sym.LastPath
	var fallback Field
	first := len(w.seen) == 0 && w.prev == m.prev
	if first && m.lastGapBetter() {
		// The last gap has been closer than the delays of the model's
		// first candidates.
		w.delay += float64(m.lastGap)
		fallback |= FieldDelay
	} else if t != nil {
		w.delay += m.delayOf(t, &fallback)
	}
	if t != nil {
		if t.Count > 0 && (t.Files.Counts != [3]uint64{}) {
			if !m.opt.NoFallback && t.FileArb.useBase() && w.prevPath != "" {
				path = w.prevPath
				fallback |= FieldFile
			} else {
				path = t.Files.predict(w.prevPath, sym.LastPath)
			}
		}
	}
	if !m.opt.NoFallback && w.prevPath != "" && path != w.prevPath {
		if ((t == nil || t.Files.Counts == [3]uint64{}) && m.newTransFile.useBase()) || (first && m.topFile.useBase()) {
			path = w.prevPath
			fallback |= FieldFile
		}
	}
	p := Prediction{
		Op:          sym.Op,
		Path:        path,
		Offset:      tracefmt.NoOffset,
		Delay:       time.Duration(w.delay),
		Probability: prob,
		Ctx:         sym.Ctx,
	}
	p.Size, _ = m.ownSize(sym, symAhead)
	if path != "" {
		if fs := m.files[path]; fs != nil {
			p.FileID = fs.id
			// Unlike contiguous offsets, the last size is a weak rule:
			// it is taken only once it has been right more often.
			if !m.opt.NoFallback && sym.SizeArb.useBase() && fs.hasSize && tracefmt.IsData(sym.Op) && p.Size != fs.lastSize {
				p.Size = fs.lastSize
				fallback |= FieldSize
			}
		}
	}
	if tracefmt.IsData(sym.Op) && path != "" {
		f := w.file(path)
		var certain, fromStream bool
		if t != nil {
			var seen uint64
			p.Offset, certain, seen = t.Offsets.predict(f.end, f.fresh, transAhead)
			// With several threads, a transition seen once may have been
			// another thread's call through the same call site, on its
			// own file (fio's random reader's first read after its
			// open, named for the checkpoint file's first write): one
			// occurrence on another file does not make the table
			// certain, as it does not let OffArb score it. (On the same
			// file it may: fio repeats its random offsets from run to
			// run, which a loaded model knows, past the first.) Nor, at
			// the first data call on a newly opened file, does a move
			// the table saw only once, however often the transition
			// came: which of two threads first reaches a shared call
			// after its open is the scheduler's choice (a loaded model's read at the
			// random reader's first block, seen before the sequential
			// reader's read at 0 in the earlier run, named for the
			// sequential reader's first read when it came first). On a
			// tie with contiguous access such a move yields; OffArb
			// still scores it.
			certain = certain && (len(m.lanes) < 2 || ((t.Count > 1 || t.Files.LastPath == path) && (!f.fresh || seen > 1)))
		} else {
			p.Offset = transform{}.apply(f.end, f.fresh)
		}
		fs := m.files[path]
		if !certain {
			if fs != nil && fs.stream != nil && fs.stream.Certain() {
				if next := fs.stream.Predict(f.dataOps + 1); len(next) > f.dataOps {
					p.Offset, fromStream = next[f.dataOps], true
				}
			}
		}
		// The baseline replaces whichever table gave the offset when it
		// has been right more often there, certain or not (a table can
		// be sure of a rule the program keeps breaking), and on a tie
		// when the table is unsure.
		if !m.opt.NoFallback {
			if c := (transform{}).apply(f.end, f.fresh); c != p.Offset {
				// On a tie the table's certain answer stands, unless the
				// process has several threads and the file's own access
				// pattern is certain of contiguous access: the table is
				// the transition's, which threads reading other files
				// through the same call share (a random reader beside a
				// sequential one, in fio). With one thread the table
				// knows the moves the file's latest run does not show
				// (HDF5's header rewritten after its data).
				if (fromStream && fs.streamArb.useBase()) || (!fromStream && t != nil && t.OffArb.preferBase(certain && !(len(m.lanes) > 1 && fileContiguous(fs, f, c)))) {
					p.Offset = c
					fallback |= FieldOffset
				}
			}
		}
		f.end, f.fresh = p.Offset+p.Size, false
		f.dataOps++
	} else if path != "" && (isOpen(sym.Op) || isClose(sym.Op)) {
		f := w.file(path)
		f.end, f.fresh = 0, true
	}
	if !w.single {
		w.seen = append(w.seen, s)
	}
	w.prev = s
	if path != "" {
		w.prevPath = path
	}
	p.Fallback = fallback
	return p
}

// fileContiguous tells whether the access pattern of file fs is certain
// and puts the next access of the walk's f at c, where the previous one
// ended.
func fileContiguous(fs *fileState, f *simFile, c int64) bool {
	if fs == nil || fs.stream == nil || !fs.stream.Certain() {
		return false
	}
	next := fs.stream.Predict(f.dataOps + 1)
	return len(next) > f.dataOps && next[f.dataOps] == c
}

// tableSize is the size the symbol's size table predicts for the
// occurrence `ahead` after the next one.
func (s *symbol) tableSize(ahead int) (size int64, ok bool) {
	size, _, ok = s.Sizes.next(ahead)
	if ok && s.Sizes.Over {
		size = s.overflowSize()
	}
	return size, ok
}

// ownSize is the size the model's own knowledge of the symbol predicts:
// its size table's, or its latest size again where that has been right
// more often after a differing guess (a context whose sizes drift, such
// as a step number printed with one more digit from step 1000 on, which
// a local grammar of a long run of one value keeps predicting).
// repeat tells whether the latest size was taken.
func (m *Model) ownSize(s *symbol, ahead int) (size int64, repeat bool) {
	size, ok := s.tableSize(ahead)
	if !ok {
		return 0, false
	}
	if !m.opt.NoFallback && s.RepeatArb.useBase() {
		return s.LastSize, true
	}
	return size, false
}

// overflowSize predicts the size of a context whose sizes vary too much for
// a local grammar: the most frequent size when it accounts for at least
// half of the occurrences, else the mean.
func (s *symbol) overflowSize() int64 {
	if i := s.Sizes.mostFrequent(); i >= 0 && 2*s.Sizes.Counts[i] >= s.Sizes.N {
		return s.Sizes.Values[i]
	}
	return int64(s.SizeStat.Mean + 0.5)
}

func (m *Model) walker(steps int) walker {
	return walker{m: m, prev: m.prev, prevPath: m.prevPath, single: steps == 1}
}

// Predict returns the next k operations, most likely path first: element i
// is the operation expected i+1 calls from now. In a process with several
// threads, Predict(1) is the most likely next call of any thread, and
// longer predictions follow the thread of the latest event. It returns fewer when the
// grammar has no prediction that far; when it has none at all, a single
// guess (see guess), and nothing before the first event of a model that
// never saw one.
func (m *Model) Predict(k int) []Prediction {
	if k <= 0 {
		return nil
	}
	if k == 1 && len(m.lanes) > 1 {
		if c := m.laneCandidates(m.predictOne); len(c) > 0 {
			return c[:1]
		}
		return nil
	}
	return m.predict(k)
}

func (m *Model) predictOne() []Prediction { return m.predict(1) }

// predict is Predict within the current lane.
func (m *Model) predict(k int) []Prediction {
	var steps []step
	switch {
	case m.prev < 0:
		if m.startSym < 0 {
			return nil
		}
		steps = []step{{m.startSym, 1}}
	case m.contextBaseline():
		return m.baseline(k)
	case k == 1:
		c := m.main.Candidates()
		if len(c) == 0 {
			return m.guess()
		}
		var total float64
		for _, x := range c {
			total += x.Weight
		}
		prob := 1.0
		if total > 0 {
			prob = c[0].Weight / total
		}
		steps = []step{{c[0].Symbol, prob}}
	default:
		for _, st := range m.main.Lookahead(k) {
			steps = append(steps, step{st.Symbol, st.Prob})
		}
		if len(steps) == 0 {
			return m.guess()
		}
	}
	w := m.walker(len(steps))
	out := make([]Prediction, 0, len(steps))
	for _, st := range steps {
		if st.sym < 0 || st.sym >= len(m.syms) {
			break
		}
		out = append(out, w.next(st.sym, st.prob))
	}
	if len(out) > 0 {
		m.pending, m.pendingGuess = steps[0].sym, false
	}
	return out
}

// guess is the prediction when the grammar has none (a context never seen
// before, or one whose continuation is unknown): the context baseline, the
// call that most often followed the previous one, or the previous call
// again when none followed it yet, on the same file, where the previous
// call on that file ended. Its probability is the share of earlier guesses
// that named the right context (with Laplace's rule, so the first guess
// has 1/2).
func (m *Model) guess() []Prediction {
	if m.prev < 0 {
		return nil
	}
	if m.opt.NoFallback {
		return m.repeatGuess()
	}
	out := m.baseline(1)
	if m.syms[m.prev].Next == 0 && len(out) == 1 {
		// The previous call again, on the file it touched: a call never
		// followed by another has no transition tables to name its file.
		p := &out[0]
		p.Path = m.prevPath
		p.FileID, p.Offset = 0, tracefmt.NoOffset
		if fs := m.files[m.prevPath]; fs != nil && m.prevPath != "" {
			p.FileID = fs.id
			if tracefmt.IsData(p.Op) {
				p.Offset = transform{}.apply(fs.end, fs.fresh)
			}
		}
	}
	for i := range out {
		out[i].Probability = float64(m.guessHits+1) / float64(m.guesses+2)
	}
	return out
}

// repeatGuess is the guess of the model without fallbacks, as it was
// before the baselines: the previous call repeats, on the same file, where
// the previous call on that file ended.
func (m *Model) repeatGuess() []Prediction {
	sym := m.syms[m.prev]
	p := Prediction{
		Op:          sym.Op,
		Ctx:         sym.Ctx,
		Path:        m.prevPath,
		Offset:      tracefmt.NoOffset,
		Probability: float64(m.guessHits+1) / float64(m.guesses+2),
	}
	if fs := m.files[m.prevPath]; fs != nil && m.prevPath != "" {
		p.FileID = fs.id
		p.Offset = transform{}.apply(fs.end, fs.fresh)
	}
	if size, ok := sym.tableSize(0); ok {
		p.Size = size
	}
	if t := m.trans[transKey(m.prev, m.prev)]; t != nil {
		p.Delay = time.Duration(t.Gap.Weighted)
	}
	m.pending, m.pendingGuess = m.prev, true
	return []Prediction{p}
}

// contextBaseline tells whether the next context should come from the
// context baseline: the grammar has been wrong more often than the
// baseline after the previous symbol.
func (m *Model) contextBaseline() bool {
	return !m.opt.NoFallback && m.prev >= 0 && m.syms[m.prev].CtxArb.useBase()
}

// baseline predicts k steps from the context baseline: each symbol's most
// frequent successor in turn. The tables fill in the other fields as for
// the grammar's steps.
func (m *Model) baseline(k int) []Prediction {
	w := m.walker(k)
	out := make([]Prediction, 0, k)
	s := m.prev
	for range k {
		from := m.syms[s]
		next := m.successor(s)
		prob := 1.0
		if from.Count > 0 && from.NextN > 0 {
			prob = min(1, float64(from.NextN)/float64(from.Count))
		}
		p := w.next(next, prob)
		p.Fallback |= FieldContext
		out = append(out, p)
		s = next
	}
	// The first step's symbol is known: no dictionary lookup of its call.
	m.pending, m.pendingGuess = m.successor(m.prev), true
	return out
}

// Candidates returns every operation the grammar considers possible next,
// most likely first, with Probability the candidate's share of the
// grammar's weights (the paper gives each of k candidates 1/k instead).
// When the grammar has no prediction it returns the guess Predict makes
// then. Like Predict, it counts towards the accuracy in Summary.
func (m *Model) Candidates() []Prediction {
	if len(m.lanes) > 1 {
		return m.laneCandidates(m.candidates)
	}
	return m.candidates()
}

// candidates is Candidates within the current lane.
func (m *Model) candidates() []Prediction {
	if m.prev < 0 || m.contextBaseline() {
		return m.predict(1)
	}
	c := m.main.Candidates()
	if len(c) == 0 {
		return m.guess()
	}
	var total float64
	for _, x := range c {
		total += x.Weight
	}
	out := make([]Prediction, 0, len(c))
	for _, x := range c {
		if x.Symbol < 0 || x.Symbol >= len(m.syms) {
			continue
		}
		prob := 1 / float64(len(c))
		if total > 0 {
			prob = x.Weight / total
		}
		w := m.walker(1)
		out = append(out, w.next(x.Symbol, prob))
	}
	if len(out) > 0 {
		m.pending, m.pendingGuess = c[0].Symbol, false
	}
	return out
}

// Phase returns how many operations remain before the current I/O phase
// ends, following the grammar's most likely path until a transition whose
// expected idle time reaches Options.PhaseGap. ok is false when the grammar
// predicts no such end within Options.PhaseHorizon operations.
func (m *Model) Phase() (remaining int, ok bool) {
	if m.prev < 0 {
		return 0, false
	}
	prev := m.prev
	gap := float64(m.opt.PhaseGap)
	for i, st := range m.main.Lookahead(m.opt.PhaseHorizon) {
		if t := m.trans[transKey(prev, st.Symbol)]; t != nil && t.Gap.Weighted >= gap {
			return i, true
		}
		prev = st.Symbol
	}
	return 0, false
}

// GrammarSize is the size of the main grammar: the summed length of its
// rules, in symbols.
func (m *Model) GrammarSize() int {
	m.store(m.cur)
	n := 0
	for i := range m.lanes {
		n += m.lanes[i].main.Grammar().Size()
	}
	return n
}

// Contexts is the number of distinct context symbols seen.
func (m *Model) Contexts() int { return len(m.syms) }

// MemoryBytes estimates the heap the model holds.
func (m *Model) MemoryBytes() int {
	m.store(m.cur)
	n := 256 + 48*len(m.laneOf)
	for i := range m.lanes {
		n += 96 + len(m.lanes[i].prevPath) + m.lanes[i].main.MemoryBytes()
	}
	for _, s := range m.syms {
		n += 160 + len(s.Op) + len(s.LastPath) + s.Sizes.memoryBytes(8) + 48 // dictionary entry
	}
	for _, t := range m.trans {
		n += 200 + len(t.Files.LastPath) + t.Offsets.Seq.memoryBytes(16)
	}
	for p, f := range m.files {
		n += 96 + len(p)
		if f.stream != nil {
			n += 128 + 64*m.opt.PatternWindow
		}
	}
	return n
}

// Summary describes the model for trace footers and reports.
func (m *Model) Summary() map[string]any {
	s := map[string]any{
		"events":       m.events,
		"ignored":      m.ignored,
		"data_events":  m.data,
		"contexts":     len(m.syms),
		"transitions":  len(m.trans),
		"grammar_size": m.GrammarSize(),
		"memory_bytes": m.MemoryBytes(),
		"scored":       m.scored,
		"guesses":      m.guesses,
	}
	if m.scored > 0 {
		s["accuracy"] = float64(m.hits) / float64(m.scored)
	}
	if m.selfSteps > 0 {
		s["context_score"] = m.selfScore / float64(m.selfSteps)
	}
	return s
}

// NextOffset predicts where the next data call on the file at path will
// start, whichever call it is: the offset of the most likely candidate on
// that file when the grammar has one, else the file's access pattern when
// it is certain, else where the latest call on the file ended (0 for a file
// not open). Prefetchers that know which file they serve want this even
// when the next context is unknown.
//
// A candidate's offset is right for its own call, and the tables' arbiters
// judge it there; but the next call on the file may be another one. Where
// the file's calls follow each other in an order no table foresees (fio's
// mix of reads and writes, each continuing its own run of blocks), the
// candidate names the wrong call and its offset misses where contiguous
// access, right whenever the same call repeats, does not. So each answer
// from the candidates is scored against contiguous access at the file's
// next data call, and while contiguous access has been right more often
// on the file, it is the answer (only for a process that asks).
func (m *Model) NextOffset(path string) int64 {
	best, found := 0.0, false
	var off int64
	if m.prev >= 0 {
		for _, c := range m.Candidates() {
			if c.Path == path && c.Offset != tracefmt.NoOffset && (!found || c.Probability > best) {
				best, off, found = c.Probability, c.Offset, true
			}
		}
	}
	fs := m.files[path]
	if found {
		if fs == nil || m.opt.NoFallback {
			return off
		}
		c := transform{}.apply(fs.end, fs.fresh)
		m.offAsked = nil
		if off == c {
			return off
		}
		m.offAsked, m.offAskedOff, m.offAskedBase = fs, off, c
		if fs.nextOffArb.useBase() {
			return c
		}
		return off
	}
	if fs == nil {
		return 0
	}
	if fs.stream != nil && fs.stream.Certain() && (m.opt.NoFallback || !fs.streamArb.useBase()) {
		if next := fs.stream.Predict(1); len(next) > 0 {
			return next[0]
		}
	}
	return transform{}.apply(fs.end, fs.fresh)
}
