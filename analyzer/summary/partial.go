package summary

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"iopred/analyzer/job"
	"iopred/analyzer/pathfilter"
	"iopred/internal/msgcheck"
	"iopred/tracefmt"
)

// Partial is the summary of a contiguous share of a job's traces (Read):
// per process, per file and per context, the counts of that share alone.
// Counts add up, sets of processes join, and what the sequential summary
// takes from the first trace that has it (a context's frames, the source
// job, the order of the notes) comes from the earliest share that has it,
// so that Combine gives the summary of all the traces, byte for byte.
// Encode and DecodePartial carry it between processes.
type Partial struct {
	first int
	procs []Process
	err   error // the first error that was not a truncation
	s     *summarizer
	job   *job.Results
}

// merge adds the share after p's to p.
func (p *Partial) merge(o *Partial) {
	p.procs = append(p.procs, o.procs...)
	if p.err == nil {
		p.err = o.err
	}
	a, b := p.s, o.s
	for path, g := range b.files {
		f := a.files[path]
		if f == nil {
			a.files[path] = g
			continue
		}
		for op, n := range g.Calls {
			f.Calls[op] += n
		}
		f.Events += g.Events
		f.BytesRead += g.BytesRead
		f.BytesWritten += g.BytesWritten
		f.IONs += g.IONs
		for l, v := range g.Layers {
			f.Layers.add(tracefmt.Layer(l), v.Calls, v.BytesRead, v.BytesWritten)
		}
		maps.Copy(f.procs, g.procs)
		f.shared = max(f.shared, g.shared)
		if len(g.traced) > 0 && f.traced == nil {
			f.traced = map[tracefmt.Layer]bool{}
		}
		maps.Copy(f.traced, g.traced)
	}
	for id, d := range b.ctxs {
		c := a.ctxs[id]
		if c == nil {
			a.ctxs[id] = d
			continue
		}
		c.Events += d.Events
		c.IONs += d.IONs
		c.Bytes += d.Bytes
		for op, n := range d.Calls {
			c.Calls[op] += n
		}
		maps.Copy(c.procs, d.procs)
	}
	// The tally counts each excluded path once, over every share.
	a.tally.Events += b.tally.Events
	a.tally.Bytes += b.tally.Bytes
	a.tally.IONs += b.tally.IONs
	for path, x := range b.excluded {
		if _, seen := a.excluded[path]; seen || !x {
			continue
		}
		a.excluded[path] = true
		if r, ok := a.filter.Match(path); ok {
			a.tally.Add(r)
		}
	}
	for k, r := range b.regions {
		q := a.regions[k]
		if q == nil {
			if a.regions == nil {
				a.regions = map[[2]string]*regionAcc{}
			}
			a.regions[k] = r
			continue
		}
		q.Count += r.Count
		q.TotalNs += r.TotalNs
		q.MaxNs = max(q.MaxNs, r.MaxNs)
		maps.Copy(q.procs, r.procs)
		if r.seen {
			if !q.seen || r.first < q.first {
				q.first = r.first
			}
			if !q.seen || r.lastEnd > q.lastEnd {
				q.lastEnd = r.lastEnd
			}
			q.seen = true
		}
	}
	a.cnt.merge(&b.cnt)
	if a.source == nil {
		a.source = b.source
	} else if a.source.Partial == "" {
		a.source.Partial = b.firstPartial
	}
	if a.firstPartial == "" {
		a.firstPartial = b.firstPartial
	}
	for _, n := range b.notes {
		if !slices.Contains(a.notes, n) {
			a.notes = append(a.notes, n)
		}
	}
}

// merge adds the counters of a later share.
func (a *countersAcc) merge(b *countersAcc) {
	a.records += b.records
	a.events += b.events
	if a.source == "" {
		a.source = b.source
	}
	for l, m := range b.modules {
		if a.modules == nil {
			a.modules = map[tracefmt.Layer]*moduleAcc{}
			a.byTrace = map[int]map[string]*fileCounters{}
		}
		n := a.modules[l]
		if n == nil {
			a.modules[l] = m
			continue
		}
		n.records += m.records
		maps.Copy(n.paths, m.paths)
		addCounters(&n.Counters, &m.Counters)
	}
	for proc, files := range b.byTrace {
		if a.byTrace == nil {
			a.byTrace = map[int]map[string]*fileCounters{}
		}
		a.byTrace[proc] = files // the shares' traces are disjoint
	}
	for path, l := range b.lustre {
		if a.lustre == nil {
			a.lustre = map[string]*LustreLayout{}
		}
		if a.lustre[path] == nil {
			a.lustre[path] = l
		}
	}
}

// The wire forms of a Partial's parts (MessagePack): maps become lists
// sorted by key, so that a partial encodes the same way every time.
type (
	wirePartial struct {
		First     int        `msgpack:"first"`
		Processes []Process  `msgpack:"procs"`
		Err       string     `msgpack:"err"`
		Files     []wireFile `msgpack:"files"`
		Contexts  []wireCtx  `msgpack:"ctxs"`
		// Excluded are the paths the filter left out; Tally the calls on
		// them (its path counts are recomputed from Excluded).
		Excluded     []string         `msgpack:"excl"`
		Tally        pathfilter.Tally `msgpack:"tally"`
		Counters     wireCounters     `msgpack:"cnt"`
		Source       *SourceJob       `msgpack:"src"`
		FirstPartial string           `msgpack:"partial"`
		Notes        []string         `msgpack:"notes"`
		Job          []byte           `msgpack:"job"`
		Regions      []wireRegion     `msgpack:"regions"`
	}
	wireRegion struct {
		RegionStats
		Procs          []int `msgpack:"procs"`
		First, LastEnd int64
		Seen           bool
	}
	wireFile struct {
		FileStats
		Procs  []int            `msgpack:"procs"`
		Shared int              `msgpack:"shared"`
		Traced []tracefmt.Layer `msgpack:"traced"`
	}
	wireCtx struct {
		ContextStats
		Procs []int `msgpack:"procs"`
	}
	wireCounters struct {
		Records int                      `msgpack:"records"`
		Events  uint64                   `msgpack:"events"`
		Source  string                   `msgpack:"source"`
		Modules []wireModule             `msgpack:"modules"`
		ByTrace []wireTraceFiles         `msgpack:"by_trace"`
		Lustre  map[string]*LustreLayout `msgpack:"lustre"`
	}
	wireModule struct {
		Counters tracefmt.Counters `msgpack:"c"`
		Records  int               `msgpack:"records"`
		Paths    []string          `msgpack:"paths"`
	}
	wireTraceFiles struct {
		Proc  int                `msgpack:"proc"`
		Files []wireFileCounters `msgpack:"files"`
	}
	wireFileCounters struct {
		Path   string              `msgpack:"path"`
		Procs  int                 `msgpack:"procs"`
		Layers []tracefmt.Counters `msgpack:"layers"`
	}
)

func sortedKeys[K int | int64 | uint64 | string | tracefmt.Layer, V any](m map[K]V) []K {
	ks := slices.Collect(maps.Keys(m))
	slices.Sort(ks)
	return ks
}

// Encode serialises the partial (MessagePack).
func (p *Partial) Encode() ([]byte, error) {
	s := p.s
	w := wirePartial{First: p.first, Processes: p.procs, Tally: s.tally, Source: s.source, FirstPartial: s.firstPartial, Notes: s.notes}
	if p.err != nil {
		w.Err = p.err.Error()
	}
	for _, path := range sortedKeys(s.files) {
		f := s.files[path]
		w.Files = append(w.Files, wireFile{FileStats: f.FileStats, Procs: sortedKeys(f.procs), Shared: f.shared, Traced: sortedKeys(f.traced)})
	}
	for _, id := range sortedKeys(s.ctxs) {
		c := s.ctxs[id]
		w.Contexts = append(w.Contexts, wireCtx{ContextStats: c.ContextStats, Procs: sortedKeys(c.procs)})
	}
	for _, path := range sortedKeys(s.excluded) {
		if s.excluded[path] {
			w.Excluded = append(w.Excluded, path)
		}
	}
	keys := slices.Collect(maps.Keys(s.regions))
	slices.SortFunc(keys, func(a, b [2]string) int {
		if c := strings.Compare(a[0], b[0]); c != 0 {
			return c
		}
		return strings.Compare(a[1], b[1])
	})
	for _, k := range keys {
		r := s.regions[k]
		w.Regions = append(w.Regions, wireRegion{RegionStats: r.RegionStats, Procs: sortedKeys(r.procs), First: r.first, LastEnd: r.lastEnd, Seen: r.seen})
	}
	c := &s.cnt
	w.Counters = wireCounters{Records: c.records, Events: c.events, Source: c.source, Lustre: c.lustre}
	for _, l := range sortedKeys(c.modules) {
		m := c.modules[l]
		mc := m.Counters
		mc.Layer = l
		w.Counters.Modules = append(w.Counters.Modules, wireModule{Counters: mc, Records: m.records, Paths: sortedKeys(m.paths)})
	}
	for _, proc := range sortedKeys(c.byTrace) {
		t := wireTraceFiles{Proc: proc}
		for _, path := range sortedKeys(c.byTrace[proc]) {
			fc := c.byTrace[proc][path]
			x := wireFileCounters{Path: path, Procs: fc.procs}
			for _, l := range sortedKeys(fc.layers) {
				x.Layers = append(x.Layers, *fc.layers[l])
			}
			t.Files = append(t.Files, x)
		}
		w.Counters.ByTrace = append(w.Counters.ByTrace, t)
	}
	var err error
	if w.Job, err = p.job.Encode(); err != nil {
		return nil, err
	}
	return msgcheck.Marshal(&w)
}

// DecodePartial reads a partial Encode wrote, with opt (the options every
// share was read with): another process's message, checked before use.
func DecodePartial(b []byte, opt Options) (*Partial, error) {
	var w wirePartial
	if err := msgcheck.Unmarshal(b, &w); err != nil {
		return nil, fmt.Errorf("summary: partial: %w", err)
	}
	if w.First < 0 {
		return nil, fmt.Errorf("summary: partial: first trace %d", w.First)
	}
	inShare := func(procs []int) error {
		for _, i := range procs {
			if i < w.First || i >= w.First+len(w.Processes) {
				return fmt.Errorf("summary: partial: trace %d outside the share's %d traces from %d", i, len(w.Processes), w.First)
			}
		}
		return nil
	}
	s := &summarizer{files: map[string]*fileAcc{}, ctxs: map[uint64]*ctxAcc{}, excluded: map[string]bool{},
		tally: w.Tally, source: w.Source, firstPartial: w.FirstPartial, notes: w.Notes}
	if !opt.AllPaths {
		s.filter = pathfilter.Default()
	}
	for _, f := range w.Files {
		if err := inShare(f.Procs); err != nil {
			return nil, err
		}
		if f.Calls == nil {
			f.Calls = map[string]uint64{}
		}
		a := &fileAcc{FileStats: f.FileStats, procs: map[int]bool{}, shared: f.Shared}
		for _, i := range f.Procs {
			a.procs[i] = true
		}
		if len(f.Traced) > 0 {
			a.traced = map[tracefmt.Layer]bool{}
			for _, l := range f.Traced {
				a.traced[l] = true
			}
		}
		s.files[f.Path] = a
	}
	for _, c := range w.Contexts {
		if err := inShare(c.Procs); err != nil {
			return nil, err
		}
		if c.Calls == nil {
			c.Calls = map[string]uint64{}
		}
		a := &ctxAcc{ContextStats: c.ContextStats, procs: map[int]bool{}}
		for _, i := range c.Procs {
			a.procs[i] = true
		}
		s.ctxs[c.ID] = a
	}
	// The tally's path counts are the excluded paths'; a later share's
	// merge adds the paths it alone saw.
	s.tally.Files, s.tally.ByKind = 0, nil
	for _, path := range w.Excluded {
		s.excluded[path] = true
		if s.filter == nil {
			return nil, fmt.Errorf("summary: partial: excluded path %q with every path kept", path)
		}
		if r, ok := s.filter.Match(path); ok {
			s.tally.Add(r)
		}
	}
	for _, r := range w.Regions {
		if err := inShare(r.Procs); err != nil {
			return nil, err
		}
		if s.regions == nil {
			s.regions = map[[2]string]*regionAcc{}
		}
		a := &regionAcc{RegionStats: r.RegionStats, procs: map[int]bool{}, first: r.First, lastEnd: r.LastEnd, seen: r.Seen}
		for _, i := range r.Procs {
			a.procs[i] = true
		}
		s.regions[[2]string{r.Category, r.Name}] = a
	}
	c := &s.cnt
	c.records, c.events, c.source, c.lustre = w.Counters.Records, w.Counters.Events, w.Counters.Source, w.Counters.Lustre
	for _, m := range w.Counters.Modules {
		if c.modules == nil {
			c.modules = map[tracefmt.Layer]*moduleAcc{}
			c.byTrace = map[int]map[string]*fileCounters{}
		}
		a := &moduleAcc{Counters: m.Counters, records: m.Records, paths: map[string]bool{}}
		a.Counters.Layer = ""
		for _, path := range m.Paths {
			a.paths[path] = true
		}
		c.modules[m.Counters.Layer] = a
	}
	for _, t := range w.Counters.ByTrace {
		if err := inShare([]int{t.Proc}); err != nil {
			return nil, err
		}
		if c.byTrace == nil {
			c.byTrace = map[int]map[string]*fileCounters{}
		}
		files := map[string]*fileCounters{}
		for _, f := range t.Files {
			fc := &fileCounters{procs: f.Procs, layers: map[tracefmt.Layer]*tracefmt.Counters{}}
			for i := range f.Layers {
				fc.layers[f.Layers[i].Layer] = &f.Layers[i]
			}
			files[f.Path] = fc
		}
		c.byTrace[t.Proc] = files
	}
	p := &Partial{first: w.First, procs: w.Processes, s: s}
	if w.Err != "" {
		p.err = errors.New(w.Err)
	}
	jr, err := job.DecodeResults(w.Job)
	if err != nil {
		return nil, err
	}
	if jr.First() != w.First {
		return nil, fmt.Errorf("summary: partial: its job view starts at trace %d, not %d", jr.First(), w.First)
	}
	p.job = jr
	return p, nil
}
