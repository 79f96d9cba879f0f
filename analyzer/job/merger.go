package job

import (
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"strings"

	"iopred/internal/msgcheck"
	"iopred/tracefmt"
)

// rankTree merges rank partials along MergeTree's binomial tree as they
// come, in any order: a block of ranks [a, a+s), s a power of two and a a
// multiple of s, merges with its sibling as soon as both are complete, as
// MergeTree merges them. It holds the blocks still waiting for a sibling:
// a few when the ranks come in order, so memory does not grow with the
// ranks.
type rankTree struct {
	blocks map[int]*Partial // by first rank
}

// add puts a complete aligned block in the tree.
func (t *rankTree) add(p *Partial) error {
	if t.blocks == nil {
		t.blocks = map[int]*Partial{}
	}
	for {
		a, s := p.FirstRank, p.Ranks
		if s < 1 || bits.OnesCount(uint(s)) != 1 || a%s != 0 {
			return fmt.Errorf("job: ranks %s are not a block of the merge tree", p.rankRange())
		}
		left := (a/s)%2 == 0
		sib := a - s
		if left {
			sib = a + s
		}
		q := t.blocks[sib]
		if q == nil || q.Ranks != s {
			if other := t.blocks[a]; other != nil {
				return fmt.Errorf("job: ranks %s given twice", other.rankRange())
			}
			t.blocks[a] = p
			return nil
		}
		delete(t.blocks, sib)
		var err error
		if left {
			p, err = Merge(p, q)
		} else {
			p, err = Merge(q, p)
		}
		if err != nil {
			return err
		}
	}
}

// finish fills the ranks below n that no block covers with ranks without
// I/O and returns the merge of ranks 0..n-1, MergeTree's result.
func (t *rankTree) finish(n int) (*Partial, error) {
	var gaps []int
	next := 0
	for _, a := range sortedRanks(t.blocks) {
		for r := next; r < a; r++ {
			gaps = append(gaps, r)
		}
		next = a + t.blocks[a].Ranks
	}
	for r := next; r < n; r++ {
		gaps = append(gaps, r)
	}
	for _, r := range gaps {
		if err := t.add(emptyPartial(r)); err != nil {
			return nil, err
		}
	}
	keys := sortedRanks(t.blocks)
	if len(keys) == 0 {
		return nil, errors.New("job: no partials to merge")
	}
	// What is left tiles 0..n-1 in blocks of decreasing sizes: the tree
	// merges each into the merge of the ones after it.
	acc := t.blocks[keys[len(keys)-1]]
	if acc.FirstRank+acc.Ranks != n {
		return nil, fmt.Errorf("job: the merged ranks end at %d, not %d", acc.FirstRank+acc.Ranks-1, n-1)
	}
	for i := len(keys) - 2; i >= 0; i-- {
		var err error
		if acc, err = Merge(t.blocks[keys[i]], acc); err != nil {
			return nil, err
		}
	}
	t.blocks = nil
	return acc, nil
}

func sortedRanks(m map[int]*Partial) []int {
	ks := make([]int, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// emptyPartial is a rank without I/O (a rank that left no trace).
func emptyPartial(r int) *Partial {
	return &Partial{FirstRank: r, Ranks: 1, Accuracy: []float32{-1}}
}

// traceInfo is what the merge keeps of each trace once its partial is in
// the tree: enough to say what the sequential merge says about it.
type traceInfo struct {
	rank    int
	usedMPI bool
	partial bool // the trace gave a partial
	err     error
}

// candidate is a trace's partial for a rank that may have other traces.
type candidate struct {
	p       *Partial
	usedMPI bool
}

// merger merges the traces' partials in the order of the traces, as soon
// as each rank's own is known: FromTraces's result, in memory bounded by
// the tree's waiting blocks and the ranks whose traces are not all read.
type merger struct {
	processes bool        // trace i is rank i (Options.Processes)
	counts    map[int]int // traces of each rank (rankCounts); nil: until the end
	first     int
	infos     []traceInfo
	pending   map[int][]candidate // ranks with traces still to come
	tree      rankTree
	err       error // the first error of the tree
}

func newMerger(first int, processes bool, counts map[int]int) *merger {
	return &merger{first: first, processes: processes, counts: counts, pending: map[int][]candidate{}}
}

// add takes the next trace's result.
func (m *merger) add(res rankResult) {
	i := m.first + len(m.infos)
	m.infos = append(m.infos, traceInfo{rank: res.rank, usedMPI: res.usedMPI, partial: res.p != nil, err: res.err})
	if m.processes {
		p := res.p
		if p == nil {
			p = emptyPartial(i)
		}
		m.insert(p)
		return
	}
	if res.p == nil || res.rank < 0 || res.rank >= MaxRanks {
		return
	}
	m.pending[res.rank] = append(m.pending[res.rank], candidate{res.p, res.usedMPI})
	if m.counts != nil && len(m.pending[res.rank]) >= m.counts[res.rank] {
		m.settle(res.rank)
	}
}

// settle chooses rank r's partial among its traces' as fromRankResults
// does (the one that called MPI; two that agree are an error, which
// finish reports) and puts it in the tree.
func (m *merger) settle(r int) {
	cs := m.pending[r]
	delete(m.pending, r)
	chosen := cs[0]
	for _, c := range cs[1:] {
		switch {
		case chosen.usedMPI && !c.usedMPI:
		case c.usedMPI && !chosen.usedMPI:
			chosen = c
		default:
			return
		}
	}
	m.insert(chosen.p)
}

func (m *merger) insert(p *Partial) {
	if m.err == nil {
		m.err = m.tree.add(p)
	}
}

// absorb takes the state of the share that follows m's.
func (m *merger) absorb(o *merger) {
	if o.err != nil && m.err == nil {
		m.err = o.err
	}
	m.infos = append(m.infos, o.infos...)
	for _, a := range sortedRanks(o.tree.blocks) {
		m.insert(o.tree.blocks[a])
	}
	ranks := make([]int, 0, len(o.pending))
	for r := range o.pending {
		ranks = append(ranks, r)
	}
	slices.Sort(ranks)
	for _, r := range ranks {
		m.pending[r] = append(m.pending[r], o.pending[r]...)
		if m.counts != nil && len(m.pending[r]) >= m.counts[r] {
			m.settle(r)
		}
	}
}

// finish returns the job summary of the n = len(paths) traces: their
// warnings and first error as fromRankResults gives them.
func (m *merger) finish(paths []string) (*Summary, []string, error) {
	if m.first != 0 || len(m.infos) != len(paths) {
		return nil, nil, fmt.Errorf("job: the shares cover traces %d to %d of %d", m.first, m.first+len(m.infos)-1, len(paths))
	}
	if m.processes {
		return m.finishProcesses(paths)
	}
	var warnings []string
	var firstErr error
	where := map[int]string{}
	mpi := map[int]bool{}
	top := -1
	for i, path := range paths {
		t := m.infos[i]
		if t.err != nil {
			warnings = append(warnings, t.err.Error())
			var te *tracefmt.TruncatedError
			if !errors.As(t.err, &te) && firstErr == nil {
				firstErr = t.err
			}
		}
		if !t.partial || t.rank < 0 {
			continue
		}
		// A rank may have traced more than one process (mpirun running a
		// script that starts the program): the job's is the one that
		// called MPI.
		if other, dup := where[t.rank]; dup {
			switch {
			case mpi[t.rank] && !t.usedMPI:
				continue
			case t.usedMPI && !mpi[t.rank]:
			default:
				return nil, warnings, fmt.Errorf("%s and %s are both rank %d: give the traces of one job", other, path, t.rank)
			}
		}
		where[t.rank], mpi[t.rank] = path, t.usedMPI
		top = max(top, t.rank)
	}
	if top < 0 {
		return nil, warnings, errors.New("job: no trace has a rank: not an MPI job (set IOPRED_RANK to give one)")
	}
	if top >= MaxRanks {
		return nil, warnings, fmt.Errorf("job: rank %d is past the bound of %d ranks", top, MaxRanks)
	}
	var missing []string
	for r := range top + 1 {
		if _, ok := where[r]; !ok {
			missing = append(missing, fmt.Sprint(r))
		}
	}
	if len(missing) > 0 {
		warnings = append(warnings, fmt.Sprintf("no trace of rank %s: counted as ranks without I/O", strings.Join(missing, ", ")))
	}
	for _, r := range sortedCandidates(m.pending) {
		m.settle(r)
	}
	if m.err != nil {
		return nil, warnings, m.err
	}
	merged, err := m.tree.finish(top + 1)
	if err != nil {
		return nil, warnings, err
	}
	return Summarize(merged), warnings, firstErr
}

func sortedCandidates(m map[int][]candidate) []int {
	ks := make([]int, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// finishProcesses is finish for traces without ranks, trace i taken for
// rank i.
func (m *merger) finishProcesses(paths []string) (*Summary, []string, error) {
	if len(paths) == 0 {
		return nil, nil, errors.New("job: no trace")
	}
	if len(paths) > MaxRanks {
		return nil, nil, fmt.Errorf("job: %d processes, more than %d", len(paths), MaxRanks)
	}
	var warnings []string
	var firstErr error
	for _, t := range m.infos {
		if t.err != nil {
			warnings = append(warnings, t.err.Error())
			var te *tracefmt.TruncatedError
			if !errors.As(t.err, &te) && firstErr == nil {
				firstErr = t.err
			}
		}
	}
	if m.err != nil {
		return nil, warnings, m.err
	}
	merged, err := m.tree.finish(len(paths))
	if err != nil {
		return nil, warnings, err
	}
	return Summarize(merged), warnings, firstErr
}

// The wire form of a share's merger (MessagePack).
type (
	wireMerger struct {
		First     int           `msgpack:"f"`
		Processes bool          `msgpack:"proc"`
		Infos     []wireInfo    `msgpack:"i"`
		Blocks    [][]byte      `msgpack:"b"` // by first rank
		Pending   []wirePending `msgpack:"p"` // by rank
		Err       string        `msgpack:"e"`
	}
	wireInfo struct {
		Rank    int  `msgpack:"r"`
		UsedMPI bool `msgpack:"m"`
		Partial bool `msgpack:"p"`
		// Err is the reading's error message; Truncated, when the error
		// was a truncation, its details (what the merge tells from other
		// errors).
		Err       string                   `msgpack:"e"`
		Truncated *tracefmt.TruncatedError `msgpack:"t"`
	}
	wirePending struct {
		Rank    int      `msgpack:"r"`
		Parts   [][]byte `msgpack:"p"`
		UsedMPI []bool   `msgpack:"m"`
	}
)

// wireError is an error read back from another process: its message, and
// the truncation it was, if any.
type wireError struct {
	msg       string
	truncated *tracefmt.TruncatedError
}

func (e *wireError) Error() string { return e.msg }

func (e *wireError) Unwrap() error {
	if e.truncated == nil {
		return nil
	}
	return e.truncated
}

func (m *merger) encode() ([]byte, error) {
	w := wireMerger{First: m.first, Processes: m.processes}
	if m.err != nil {
		w.Err = m.err.Error()
	}
	for _, t := range m.infos {
		x := wireInfo{Rank: t.rank, UsedMPI: t.usedMPI, Partial: t.partial}
		if t.err != nil {
			x.Err = t.err.Error()
			var te *tracefmt.TruncatedError
			if errors.As(t.err, &te) {
				x.Truncated = te
			}
		}
		w.Infos = append(w.Infos, x)
	}
	for _, a := range sortedRanks(m.tree.blocks) {
		b, err := m.tree.blocks[a].Encode()
		if err != nil {
			return nil, err
		}
		w.Blocks = append(w.Blocks, b)
	}
	for _, r := range sortedCandidates(m.pending) {
		x := wirePending{Rank: r}
		for _, c := range m.pending[r] {
			b, err := c.p.Encode()
			if err != nil {
				return nil, err
			}
			x.Parts, x.UsedMPI = append(x.Parts, b), append(x.UsedMPI, c.usedMPI)
		}
		w.Pending = append(w.Pending, x)
	}
	return msgcheck.Marshal(&w)
}

func decodeMerger(b []byte, counts map[int]int) (*merger, error) {
	var w wireMerger
	if err := msgcheck.Unmarshal(b, &w); err != nil {
		return nil, fmt.Errorf("job: results: %w", err)
	}
	if w.First < 0 {
		return nil, fmt.Errorf("job: results: first trace %d", w.First)
	}
	m := newMerger(w.First, w.Processes, counts)
	if w.Err != "" {
		m.err = errors.New(w.Err)
	}
	for _, x := range w.Infos {
		t := traceInfo{rank: x.Rank, usedMPI: x.UsedMPI, partial: x.Partial}
		if x.Err != "" || x.Truncated != nil {
			t.err = &wireError{msg: x.Err, truncated: x.Truncated}
		}
		m.infos = append(m.infos, t)
	}
	m.tree.blocks = map[int]*Partial{}
	for _, b := range w.Blocks {
		p, err := Decode(b)
		if err != nil {
			return nil, err
		}
		if m.tree.blocks[p.FirstRank] != nil {
			return nil, fmt.Errorf("job: results: ranks from %d given twice", p.FirstRank)
		}
		m.tree.blocks[p.FirstRank] = p
	}
	for _, x := range w.Pending {
		if len(x.Parts) != len(x.UsedMPI) || len(x.Parts) == 0 || x.Rank < 0 || x.Rank >= MaxRanks {
			return nil, fmt.Errorf("job: results: rank %d's pending partials malformed", x.Rank)
		}
		for i, b := range x.Parts {
			p, err := Decode(b)
			if err != nil {
				return nil, err
			}
			if p.FirstRank != x.Rank || p.Ranks != 1 {
				return nil, fmt.Errorf("job: results: a partial of ranks %s pending for rank %d", p.rankRange(), x.Rank)
			}
			m.pending[x.Rank] = append(m.pending[x.Rank], candidate{p, x.UsedMPI[i]})
		}
	}
	return m, nil
}
