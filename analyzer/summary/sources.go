package summary

import (
	"io"
	"sync"
	"sync/atomic"

	"iopred/analyzer/job"
	"iopred/tracefmt"
)

// recordSource is what the summary reads of one trace: its header, its
// records in order, and the file and context tables as they stand after
// the last record returned.
type recordSource interface {
	Header() tracefmt.Header
	Next() (tracefmt.Record, error)
	Files() map[uint32]tracefmt.File
	Contexts() map[uint64]tracefmt.Context
	Close() error
}

// batchRecords is how many records a reading goroutine hands over at once:
// enough to make the hand-over cheap, few enough (about a megabyte of
// events) that the goroutines' batches bound the memory.
const batchRecords = 4096

// batchesAhead is how many batches of one trace may wait for the summary.
const batchesAhead = 2

// tracesAhead is how many traces per reading goroutine may be read ahead
// of the summary (taken and not yet summarised).
const tracesAhead = 2

// batch is a run of one trace's records, or its end: the error that ended
// it (io.EOF at a clean end). Its events are in events, which the
// reader's shared event is copied to: the summary is done with a batch
// when it asks for the next, and the batch's memory goes back to
// batchPool.
type batch struct {
	recs   []tracefmt.Record
	events []tracefmt.Event
	err    error
}

// batchPool holds the record and event arrays of batches the summary is
// done with, so that reading a trace allocates nothing per event.
var batchPool sync.Pool // *batch

func newBatch() *batch {
	if b, ok := batchPool.Get().(*batch); ok {
		return b
	}
	return &batch{recs: make([]tracefmt.Record, 0, batchRecords), events: make([]tracefmt.Event, 0, batchRecords)}
}

// recycle gives b's arrays back to batchPool, emptied.
func (b *batch) recycle() {
	if b == nil || cap(b.recs) != batchRecords || cap(b.events) != batchRecords {
		return
	}
	clear(b.recs)
	b.recs, b.events, b.err = b.recs[:0], b.events[:0], nil
	batchPool.Put(b)
}

// opened is a trace as its reading goroutine opened it.
type opened struct {
	hdr     tracefmt.Header
	err     error
	batches chan *batch
}

// sources reads the traces for Summarize: in the calling goroutine when
// jobs <= 1, else on jobs goroutines that decode traces ahead of the
// summary, in order, each handing its records over in batches through a
// bounded channel. Traces are taken in the order given and each channel
// holds at most batchesAhead batches, so memory is bounded by the
// goroutines, not by the traces; the trace the summary waits for always
// has a goroutine reading it, so the pipeline cannot stall.
type sources struct {
	traces []string
	jobOpt job.Options
	// readers are the traces' job partials, built from the same records
	// as the summary (each trace is decoded once for both); readers[i]
	// is set before trace i's last record is handed over.
	readers []*job.TraceReader
	mu      sync.Mutex    // guards readers: the reading goroutines set them
	slots   []chan opened // per trace, its opened value once
	// ahead holds a token for each trace taken by a reading goroutine and
	// not yet done with by the summary: small traces fit in their
	// channels, and without the bound the goroutines would read them all
	// ahead of the summary.
	ahead chan struct{}
	done  chan struct{}
	wg    sync.WaitGroup
}

func newSources(traces []string, jobs int, jobOpt job.Options) *sources {
	s := &sources{traces: traces, jobOpt: jobOpt, readers: make([]*job.TraceReader, len(traces))}
	if jobs <= 1 || len(traces) <= 1 {
		return s
	}
	s.slots = make([]chan opened, len(traces))
	for i := range s.slots {
		s.slots[i] = make(chan opened, 1)
	}
	s.done = make(chan struct{})
	s.ahead = make(chan struct{}, tracesAhead*jobs)
	var next atomic.Int64
	for range min(jobs, len(traces)) {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			for {
				select {
				case s.ahead <- struct{}{}:
				case <-s.done:
					return
				}
				i := int(next.Add(1) - 1)
				if i >= len(traces) {
					return
				}
				if !s.read(i) {
					return
				}
			}
		}()
	}
	return s
}

// read decodes trace i into its channel; false when the summary stopped.
func (s *sources) read(i int) bool {
	r, err := s.openTrace(i)
	if err != nil {
		s.slots[i] <- opened{err: err}
		return true
	}
	defer r.Close()
	out := make(chan *batch, batchesAhead)
	s.slots[i] <- opened{hdr: r.Header(), batches: out}
	b := newBatch()
	for {
		rec, err := r.Next()
		if err == nil {
			if rec.Event != nil {
				// The reader's event is shared: the batch keeps a copy.
				b.events = append(b.events, *rec.Event)
				rec.Event = &b.events[len(b.events)-1]
			}
			b.recs = append(b.recs, rec)
			if len(b.recs) < batchRecords {
				continue
			}
		}
		b.err = err
		select {
		case out <- b:
		case <-s.done:
			return false
		}
		if err != nil {
			return true
		}
		b = newBatch()
	}
}

// openTrace opens trace i with its job partial fed from its records.
func (s *sources) openTrace(i int) (*feedingSource, error) {
	r, err := tracefmt.Open(s.traces[i])
	if err != nil {
		s.mu.Lock()
		s.readers[i] = job.OpenFailed(s.traces[i], err)
		s.mu.Unlock()
		return nil, err
	}
	if tr, ok := r.(*tracefmt.Reader); ok {
		// The summary and the job partial are done with each event before
		// they read the next (Observer says so to the analyses that watch).
		tr.ReuseEvents()
	}
	t := job.NewTraceReader(s.traces[i], r.Header(), s.jobOpt)
	s.mu.Lock()
	s.readers[i] = t
	s.mu.Unlock()
	return &feedingSource{Stream: r, job: t}, nil
}

// feedingSource is a trace whose records also go to its job partial.
type feedingSource struct {
	tracefmt.Stream
	job   *job.TraceReader
	ended bool
}

func (f *feedingSource) Next() (tracefmt.Record, error) {
	rec, err := f.Stream.Next()
	switch {
	case err == nil:
		f.job.Add(rec)
	case !f.ended:
		f.ended = true
		if err == io.EOF {
			f.job.End(nil)
		} else {
			f.job.End(err)
		}
	}
	return rec, err
}

// open returns the function that opens trace i.
func (s *sources) open(i int) func() (recordSource, error) {
	if s.slots == nil {
		return func() (recordSource, error) {
			r, err := s.openTrace(i)
			if err != nil {
				return nil, err
			}
			return r, nil
		}
	}
	return func() (recordSource, error) {
		o := <-s.slots[i]
		if o.err != nil {
			return nil, o.err
		}
		return &pipedSource{hdr: o.hdr, in: o.batches, files: map[uint32]tracefmt.File{},
			contexts: map[uint64]tracefmt.Context{}}, nil
	}
}

// take returns trace i's job partial reader, whose trace the summary has
// read, and forgets it: a reading goroutine may take another trace.
func (s *sources) take(i int) *job.TraceReader {
	s.mu.Lock()
	t := s.readers[i]
	s.readers[i] = nil
	s.mu.Unlock()
	if s.ahead != nil {
		<-s.ahead
	}
	return t
}

// stop ends the reading goroutines (the summary may stop early) and waits
// for them.
func (s *sources) stop() {
	if s.done == nil {
		return
	}
	close(s.done)
	s.wg.Wait()
}

// pipedSource is a trace read by another goroutine. It keeps its own file
// and context tables from the records it returns, so that they stand as
// the Reader's did when it returned the same record.
type pipedSource struct {
	hdr      tracefmt.Header
	in       chan *batch
	cur      *batch
	pos      int
	err      error
	files    map[uint32]tracefmt.File
	contexts map[uint64]tracefmt.Context
}

func (p *pipedSource) Header() tracefmt.Header               { return p.hdr }
func (p *pipedSource) Files() map[uint32]tracefmt.File       { return p.files }
func (p *pipedSource) Contexts() map[uint64]tracefmt.Context { return p.contexts }

// Close lets the reading goroutine go on to its next trace.
func (p *pipedSource) Close() error {
	for p.err == nil {
		if _, err := p.Next(); err != nil {
			break
		}
	}
	return nil
}

func (p *pipedSource) Next() (tracefmt.Record, error) {
	for p.cur == nil || p.pos >= len(p.cur.recs) {
		if p.err != nil {
			return tracefmt.Record{}, p.err
		}
		if p.cur != nil && p.cur.err != nil {
			p.err = p.cur.err
			p.cur.recycle()
			p.cur = nil
			return tracefmt.Record{}, p.err
		}
		// Every record of the current batch was returned, and the
		// summary is done with its events.
		p.cur.recycle()
		p.cur, p.pos = <-p.in, 0
	}
	rec := p.cur.recs[p.pos]
	p.cur.recs[p.pos] = tracefmt.Record{}
	p.pos++
	switch {
	case rec.File != nil:
		p.files[rec.File.ID] = *rec.File
	case rec.Context != nil:
		p.contexts[rec.Context.ID] = *rec.Context
	}
	return rec, nil
}
