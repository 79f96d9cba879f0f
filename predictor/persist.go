package predictor

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"iopred/internal/msgcheck"
	"iopred/predictor/sequitur"
)

// modelFormat and modelVersion open every saved model, so that Load can
// tell a model from other msgpack data and refuse a newer layout.
const (
	modelFormat  = "iopred-model"
	modelVersion = 1
	// maxBound limits the table bounds a saved model may ask for, so that
	// a corrupt file cannot make the tables unbounded.
	maxBound = 4096
)

// savedTransition is a transition with its endpoints, as saved.
type savedTransition struct {
	From int        `msgpack:"a"`
	To   int        `msgpack:"b"`
	T    transition `msgpack:"t"`
}

// savedLane is one thread's grammar, as saved.
type savedLane struct {
	Main  *sequitur.Predictor `msgpack:"main"`
	Start int                 `msgpack:"start"`
}

// savedModel is the msgpack layout of a model. The run-time state (open
// files, the previous event) is not saved: it belongs to the run that
// wrote it.
type savedModel struct {
	Format       string            `msgpack:"format"`
	Version      int               `msgpack:"version"`
	SizeBound    int               `msgpack:"size_bound"`
	OffsetBound  int               `msgpack:"offset_bound"`
	Window       int               `msgpack:"pattern_window"`
	MaxOpenFiles int               `msgpack:"max_open_files"`
	PhaseGapNs   int64             `msgpack:"phase_gap_ns"`
	PhaseHorizon int               `msgpack:"phase_horizon"`
	MaxThreads   int               `msgpack:"max_threads"`
	Events       uint64            `msgpack:"events"`
	Ignored      uint64            `msgpack:"ignored"`
	Data         uint64            `msgpack:"data"`
	Scored       uint64            `msgpack:"scored"`
	Hits         uint64            `msgpack:"hits"`
	Guesses      uint64            `msgpack:"guesses"`
	GuessHits    uint64            `msgpack:"guess_hits"`
	Symbols      []*symbol         `msgpack:"symbols"`
	Transitions  []savedTransition `msgpack:"transitions"`
	Lanes        []savedLane       `msgpack:"lanes"`
}

// Save writes the model in msgpack.
func (m *Model) Save(w io.Writer) error {
	s := savedModel{
		Format:       modelFormat,
		Version:      modelVersion,
		SizeBound:    m.opt.SizeBound,
		OffsetBound:  m.opt.OffsetBound,
		Window:       m.opt.PatternWindow,
		MaxOpenFiles: m.opt.MaxOpenFiles,
		PhaseGapNs:   int64(m.opt.PhaseGap),
		PhaseHorizon: m.opt.PhaseHorizon,
		MaxThreads:   m.opt.MaxThreads,
		Events:       m.events,
		Ignored:      m.ignored,
		Data:         m.data,
		Scored:       m.scored,
		Hits:         m.hits,
		Guesses:      m.guesses,
		GuessHits:    m.guessHits,
		Symbols:      m.syms,
	}
	m.store(m.cur)
	for _, l := range m.lanes {
		s.Lanes = append(s.Lanes, savedLane{Main: l.main, Start: l.startSym})
	}
	s.Transitions = make([]savedTransition, 0, len(m.trans))
	for k, t := range m.trans {
		s.Transitions = append(s.Transitions, savedTransition{From: int(k >> 32), To: int(uint32(k)), T: *t})
	}
	bw := bufio.NewWriter(w)
	if err := msgpack.NewEncoder(bw).Encode(&s); err != nil {
		return fmt.Errorf("predictor: save: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("predictor: save: %w", err)
	}
	return nil
}

// Load reads a model written by Save. The model starts a new run: its next
// Predict, before any Observe, predicts the run's first operation.
// Malformed input gives an error, never a panic.
func Load(r io.Reader) (m *Model, err error) {
	defer func() {
		// The decoders validate what they read; this guard turns any
		// inconsistency they missed into an error rather than a crash of
		// the program that hosts the model.
		if p := recover(); p != nil {
			m, err = nil, fmt.Errorf("predictor: load: malformed model: %v", p)
		}
	}()
	// Read whole: a model is small, and its lengths are checked against
	// its size before the decoder allocates by them (see msgcheck).
	doc, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("predictor: load: %w", err)
	}
	if err := msgcheck.Check(doc); err != nil {
		return nil, fmt.Errorf("predictor: load: %w", err)
	}
	var s savedModel
	if err := msgpack.NewDecoder(bytes.NewReader(doc)).Decode(&s); err != nil {
		return nil, fmt.Errorf("predictor: load: %w", err)
	}
	if s.Format != modelFormat {
		return nil, errors.New("predictor: load: not an iopred model (format field missing or wrong)")
	}
	if s.Version != modelVersion {
		return nil, fmt.Errorf("predictor: load: model version %d, this build reads version %d", s.Version, modelVersion)
	}
	for _, b := range []struct {
		name  string
		value int64
		limit int64
	}{
		{"size_bound", int64(s.SizeBound), maxBound},
		{"offset_bound", int64(s.OffsetBound), maxBound},
		{"pattern_window", int64(s.Window), maxBound},
		{"max_open_files", int64(s.MaxOpenFiles), 1 << 20},
		{"phase_horizon", int64(s.PhaseHorizon), 1 << 20},
		{"max_threads", int64(s.MaxThreads), 1 << 10},
	} {
		if b.value < 0 || b.value > b.limit {
			return nil, fmt.Errorf("predictor: load: field %s: %d is outside 0..%d", b.name, b.value, b.limit)
		}
	}
	opt := Options{
		SizeBound:     s.SizeBound,
		OffsetBound:   s.OffsetBound,
		PatternWindow: s.Window,
		MaxOpenFiles:  s.MaxOpenFiles,
		PhaseGap:      time.Duration(s.PhaseGapNs),
		PhaseHorizon:  s.PhaseHorizon,
		MaxThreads:    s.MaxThreads,
	}.withDefaults()
	if len(s.Lanes) == 0 || len(s.Lanes) > opt.MaxThreads {
		return nil, fmt.Errorf("predictor: load: field lanes: %d grammars, want 1 to %d", len(s.Lanes), opt.MaxThreads)
	}
	m = &Model{
		opt:       opt,
		dict:      make(map[symKey]int, len(s.Symbols)),
		syms:      s.Symbols,
		trans:     make(map[uint64]*transition, len(s.Transitions)),
		events:    s.Events,
		ignored:   s.Ignored,
		data:      s.Data,
		scored:    s.Scored,
		hits:      s.Hits,
		guesses:   s.Guesses,
		guessHits: s.GuessHits,
	}
	for i, l := range s.Lanes {
		if l.Main == nil {
			return nil, fmt.Errorf("predictor: load: lanes[%d]: missing grammar", i)
		}
		if l.Start < -1 || l.Start >= len(s.Symbols) {
			return nil, fmt.Errorf("predictor: load: lanes[%d]: start symbol %d out of range", i, l.Start)
		}
		m.lanes = append(m.lanes, lane{main: l.Main, startSym: l.Start, prev: -1})
	}
	for i, sym := range s.Symbols {
		if sym == nil {
			return nil, fmt.Errorf("predictor: load: symbols[%d]: missing", i)
		}
		if !sym.Sizes.valid(opt.SizeBound) || !sym.SizeStat.valid() || !sym.Duration.valid() {
			return nil, fmt.Errorf("predictor: load: symbols[%d]: inconsistent tables", i)
		}
		k := symKey{sym.Ctx, sym.Op}
		if _, dup := m.dict[k]; dup {
			return nil, fmt.Errorf("predictor: load: symbols[%d]: context %d %s defined twice", i, sym.Ctx, sym.Op)
		}
		m.dict[k] = i
	}
	for i := range s.Transitions {
		st := &s.Transitions[i]
		if st.From < 0 || st.From >= len(s.Symbols) || st.To < 0 || st.To >= len(s.Symbols) {
			return nil, fmt.Errorf("predictor: load: transitions[%d]: symbol out of range", i)
		}
		if !st.T.Offsets.Seq.valid(opt.OffsetBound) || !st.T.Gap.valid() || st.T.Files.LastKind > fileOther {
			return nil, fmt.Errorf("predictor: load: transitions[%d]: inconsistent tables", i)
		}
		t := st.T
		m.trans[transKey(st.From, st.To)] = &t
	}
	m.resetRun()
	m.load(0)
	return m, nil
}
