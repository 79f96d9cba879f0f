package export

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"iopred/predictor"
	"iopred/tracefmt"
)

// PerfettoOptions tune Perfetto.
type PerfettoOptions struct {
	// Predict runs the predictor over each process's calls, as the library
	// runs it, and shows its guess of the next call as an instant event
	// at the end of the call it followed.
	Predict bool
	// Command is the command line, recorded in the trace's metadata.
	Command string
	// Jobs is how many traces are read and rendered at once, each on its
	// own goroutine; the document is the same whatever Jobs.
	Jobs int
}

// Perfetto writes the traces as one Chrome trace-event JSON document
// (https://docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU):
//
//   - each trace is a process (pid: its number in traces, from 1, since
//     the real pids of a job's nodes may collide), named by its rank,
//     program, pid and host; each thread is a track, named by its tid;
//   - each call is a complete slice ("X") named by the call, with the
//     file, offset, size, bytes, return value, errno, context, and the
//     MPI-IO call it happened in, as arguments, and dir ("read", "write")
//     when its bytes are the application's own (summing bytes by dir
//     counts each byte once, as `iopred summary` does); a POSIX call that
//     ROMIO issues inside an MPI-IO call nests in it on the same track;
//   - with opt.Predict, each call is followed by an instant event ("i")
//     with the predictor's guess of the next call and whether it was right;
//   - forks, execs and exits are instant events of the process;
//   - the regions of the application's own work that a DFTracer trace
//     records (functions, epochs, steps) are complete slices of their
//     thread, category "region,<source category>", with their arguments;
//     the calls made during one nest under it.
//
// Times are microseconds since the job's start (the earliest trace's), to
// the nanosecond. The document is written as it is read, one trace after
// another.
func Perfetto(w io.Writer, traces []string, opt PerfettoOptions) (Stats, error) {
	var st Stats
	start, err := jobStart(traces)
	if err != nil {
		return st, err
	}
	p := &perfetto{out: bufio.NewWriterSize(w, 256<<10), opt: opt, first: true}
	p.head(start)
	if err := p.traces(traces, 0, start, &st); err != nil {
		return st, err
	}
	p.str("\n]}\n")
	if p.err != nil {
		return st, p.err
	}
	return st, p.out.Flush()
}

// head writes what comes before the document's first event.
func (p *perfetto) head(start int64) {
	p.str(`{"displayTimeUnit":"ns","otherData":{"generator":"iopred export --format perfetto","job_start":`)
	p.quote(time.Unix(0, start).UTC().Format(time.RFC3339Nano))
	if p.opt.Command != "" {
		p.str(`,"command":`)
		p.quote(p.opt.Command)
	}
	p.str("},\n\"traceEvents\":[\n")
}

// traces writes the events of traces, which are those from number pid0
// of the job's (their pids follow pid0), on opt.Jobs goroutines.
func (p *perfetto) traces(traces []string, pid0 int, start int64, st *Stats) error {
	if p.opt.Jobs > 1 && len(traces) > 1 {
		return p.parallel(traces, pid0, start, st)
	}
	for i, t := range traces {
		if err := p.trace(pid0+i+1, t, start, st); err != nil {
			return err
		}
		if p.err != nil {
			return p.err
		}
	}
	return nil
}

// perfetto writes one document; err is the first write error.
type perfetto struct {
	out   *bufio.Writer
	opt   PerfettoOptions
	err   error
	first bool // the next event is the document's first (no comma before it)
	b     []byte
}

func (p *perfetto) str(s string) {
	if p.err == nil {
		_, p.err = p.out.WriteString(s)
	}
}

func (p *perfetto) quote(s string) {
	p.b = appendJSONString(p.b[:0], s)
	if p.err == nil {
		_, p.err = p.out.Write(p.b)
	}
}

// event writes one trace event from its JSON object.
func (p *perfetto) event(obj []byte) {
	if p.err != nil {
		return
	}
	if p.first {
		p.first = false
	} else {
		_, p.err = p.out.WriteString(",\n")
	}
	if p.err == nil {
		_, p.err = p.out.Write(obj)
	}
}

// pending is a prediction waiting for the call it predicted.
type pending struct {
	pred  predictor.Prediction
	atNs  int64 // since the job's start
	tid   int32
	valid bool
}

func (p *perfetto) trace(pid int, trace string, jobStart int64, st *Stats) error {
	r, err := tracefmt.Open(trace)
	if err != nil {
		return err
	}
	defer r.Close()
	st.Traces++
	h := r.Header()
	shift := int64(0) // from the trace's time anchor to the job's start
	if h.StartUnixNs > 0 && jobStart > 0 {
		shift = h.StartUnixNs - jobStart
	}
	p.metadata(pid, 0, "process_name", processName(h, trace))
	if h.Rank != nil {
		p.metadataInt(pid, 0, "process_sort_index", int64(*h.Rank))
	} else {
		p.metadataInt(pid, 0, "process_sort_index", int64(pid))
	}
	threads := map[int32]bool{}
	var model *predictor.Model
	if p.opt.Predict {
		model = predictor.New(predictor.Options{})
	}
	var guess pending
	var flow tracefmt.DataFlow
	readErr, writeErr := eachRecord(r, func(rec *tracefmt.Record) error {
		switch {
		case rec.Event != nil:
			e := rec.Event
			if !threads[e.Tid] {
				threads[e.Tid] = true
				name := "thread " + strconv.Itoa(int(e.Tid))
				if int(e.Tid) == h.PID {
					name = "main thread " + strconv.Itoa(int(e.Tid))
				}
				p.metadata(pid, e.Tid, "thread_name", name)
			}
			if guess.valid {
				p.prediction(pid, &guess, e, st)
			}
			dir := flow.Of(e)
			p.slice(pid, shift, e, dir)
			st.Events++
			st.addData(e, dir)
			if model != nil {
				model.Observe(e)
				if ps := model.Predict(1); len(ps) > 0 {
					guess = pending{pred: ps[0], atNs: shift + e.EndNs, tid: e.Tid, valid: true}
				} else {
					guess.valid = false
				}
			}
		case rec.Proc != nil:
			p.proc(pid, shift, rec.Proc)
		case rec.Region != nil:
			g := rec.Region
			if !threads[g.Tid] {
				threads[g.Tid] = true
				name := "thread " + strconv.Itoa(int(g.Tid))
				if int(g.Tid) == h.PID {
					name = "main thread " + strconv.Itoa(int(g.Tid))
				}
				p.metadata(pid, g.Tid, "thread_name", name)
			}
			p.region(pid, shift, g)
			st.Regions++
		case rec.Counters != nil:
			st.Skipped++
		}
		return p.err
	})
	if writeErr != nil {
		return writeErr
	}
	if guess.valid {
		p.prediction(pid, &guess, nil, st)
	}
	if readErr != nil {
		st.Problems = append(st.Problems, problem(trace, readErr))
	}
	return p.err
}

// processName names a trace's process as a person looks for it: by rank
// in a job, then program, pid and host.
func processName(h tracefmt.Header, trace string) string {
	prog := h.Program
	if prog == "" {
		prog = trace
	}
	name := fmt.Sprintf("%s (pid %d", prog, h.PID)
	if h.Host != "" {
		name += " on " + h.Host
	}
	name += ")"
	if h.Rank != nil {
		name = fmt.Sprintf("rank %d: %s", *h.Rank, name)
	}
	return name
}

func (p *perfetto) metadata(pid int, tid int32, what, name string) {
	b := append(p.b[:0], `{"ph":"M","pid":`...)
	b = strconv.AppendInt(b, int64(pid), 10)
	b = append(b, `,"tid":`...)
	b = strconv.AppendInt(b, int64(tid), 10)
	b = append(b, `,"name":"`...)
	b = append(b, what...)
	b = append(b, `","args":{"name":`...)
	b = appendJSONString(b, name)
	b = append(b, "}}"...)
	p.b = b
	p.event(b)
}

func (p *perfetto) metadataInt(pid int, tid int32, what string, v int64) {
	b := append(p.b[:0], `{"ph":"M","pid":`...)
	b = strconv.AppendInt(b, int64(pid), 10)
	b = append(b, `,"tid":`...)
	b = strconv.AppendInt(b, int64(tid), 10)
	b = append(b, `,"name":"`...)
	b = append(b, what...)
	b = append(b, `","args":{"sort_index":`...)
	b = strconv.AppendInt(b, v, 10)
	b = append(b, "}}"...)
	p.b = b
	p.event(b)
}

// appendMicros appends ns as microseconds with three decimals, exactly:
// slices that nest in nanoseconds nest in the document.
func appendMicros(b []byte, ns int64) []byte {
	if ns < 0 {
		b = append(b, '-')
		ns = -ns
	}
	b = strconv.AppendInt(b, ns/1000, 10)
	frac := ns % 1000
	if frac == 0 {
		return b
	}
	b = append(b, '.', byte('0'+frac/100), byte('0'+frac/10%10), byte('0'+frac%10))
	return b
}

func (p *perfetto) slice(pid int, shift int64, e *tracefmt.Event, dir tracefmt.Direction) {
	layer := e.Layer
	if layer == "" {
		layer = tracefmt.LayerOf(e.Op)
	}
	b := append(p.b[:0], `{"ph":"X","name":`...)
	b = appendJSONString(b, e.Op)
	b = append(b, `,"cat":"`...)
	b = append(b, layer...)
	b = append(b, `","pid":`...)
	b = strconv.AppendInt(b, int64(pid), 10)
	b = append(b, `,"tid":`...)
	b = strconv.AppendInt(b, int64(e.Tid), 10)
	b = append(b, `,"ts":`...)
	b = appendMicros(b, shift+e.StartNs)
	b = append(b, `,"dur":`...)
	b = appendMicros(b, max(e.EndNs-e.StartNs, 0))
	b = append(b, `,"args":{"file":`...)
	b = appendJSONString(b, e.Path)
	b = append(b, `,"offset":`...)
	if e.Offset == tracefmt.NoOffset {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendInt(b, e.Offset, 10)
	}
	b = append(b, `,"size":`...)
	b = strconv.AppendInt(b, e.Size, 10)
	b = append(b, `,"bytes":`...)
	b = strconv.AppendInt(b, e.Bytes, 10)
	b = append(b, `,"ret":`...)
	b = strconv.AppendInt(b, e.Ret, 10)
	switch dir {
	case tracefmt.Read:
		b = append(b, `,"dir":"read"`...)
	case tracefmt.Write:
		b = append(b, `,"dir":"write"`...)
	}
	if e.Errno != 0 {
		b = append(b, `,"errno":`...)
		b = strconv.AppendInt(b, int64(e.Errno), 10)
	}
	if e.Ctx != 0 {
		b = append(b, `,"ctx":`...)
		b = strconv.AppendUint(b, e.Ctx, 10)
	}
	if e.Seq != 0 {
		b = append(b, `,"seq":`...)
		b = strconv.AppendInt(b, e.Seq, 10)
	}
	if e.Parent != 0 {
		b = append(b, `,"parent":`...)
		b = strconv.AppendInt(b, e.Parent, 10)
	}
	b = append(b, "}}"...)
	p.b = b
	p.event(b)
}

// region writes a span of the application's own work as a complete slice
// of its thread, in the category its source gave it; the I/O calls made
// during it nest under it.
func (p *perfetto) region(pid int, shift int64, g *tracefmt.Region) {
	b := append(p.b[:0], `{"ph":"X","name":`...)
	b = appendJSONString(b, g.Name)
	b = append(b, `,"cat":`...)
	b = appendJSONString(b, "region,"+g.Category)
	b = append(b, `,"pid":`...)
	b = strconv.AppendInt(b, int64(pid), 10)
	b = append(b, `,"tid":`...)
	b = strconv.AppendInt(b, int64(g.Tid), 10)
	b = append(b, `,"ts":`...)
	b = appendMicros(b, shift+g.StartNs)
	b = append(b, `,"dur":`...)
	b = appendMicros(b, max(g.EndNs-g.StartNs, 0))
	b = append(b, `,"args":{`...)
	keys := make([]string, 0, len(g.Args))
	for k := range g.Args {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, k)
		b = append(b, ':')
		b = appendJSONString(b, g.Args[k])
	}
	b = append(b, "}}"...)
	p.b = b
	p.event(b)
}

// prediction writes the guess made after the previous call, scored
// against next (nil when the trace ended first).
func (p *perfetto) prediction(pid int, g *pending, next *tracefmt.Event, st *Stats) {
	g.valid = false
	st.Predictions++
	b := append(p.b[:0], `{"ph":"i","s":"t","name":`...)
	b = appendJSONString(b, "next: "+g.pred.Op)
	b = append(b, `,"cat":"prediction","pid":`...)
	b = strconv.AppendInt(b, int64(pid), 10)
	b = append(b, `,"tid":`...)
	b = strconv.AppendInt(b, int64(g.tid), 10)
	b = append(b, `,"ts":`...)
	b = appendMicros(b, g.atNs)
	b = append(b, `,"args":{"op":`...)
	b = appendJSONString(b, g.pred.Op)
	b = append(b, `,"file":`...)
	b = appendJSONString(b, g.pred.Path)
	b = append(b, `,"offset":`...)
	if g.pred.Offset == tracefmt.NoOffset {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendInt(b, g.pred.Offset, 10)
	}
	b = append(b, `,"size":`...)
	b = strconv.AppendInt(b, g.pred.Size, 10)
	b = append(b, `,"ctx":`...)
	b = strconv.AppendUint(b, g.pred.Ctx, 10)
	b = append(b, `,"probability":`...)
	b = strconv.AppendFloat(b, g.pred.Probability, 'g', 4, 64)
	b = append(b, `,"delay_us":`...)
	b = appendMicros(b, int64(g.pred.Delay))
	b = append(b, `,"outcome":`...)
	switch {
	case next == nil:
		b = append(b, `"the trace ended"`...)
	case next.Op == g.pred.Op && next.Ctx == g.pred.Ctx:
		st.Hits++
		b = append(b, `"hit"`...)
	default:
		b = appendJSONString(b, "miss: "+next.Op)
	}
	b = append(b, "}}"...)
	p.b = b
	p.event(b)
}

func (p *perfetto) proc(pid int, shift int64, pr *tracefmt.Proc) {
	name := pr.Op
	switch {
	case pr.Child != 0:
		name += " " + strconv.Itoa(pr.Child)
	case pr.Path != "":
		name += " " + pr.Path
	case pr.Op == "exit":
		name += " " + strconv.Itoa(pr.Status)
	}
	b := append(p.b[:0], `{"ph":"i","s":"p","cat":"process","name":`...)
	b = appendJSONString(b, name)
	b = append(b, `,"pid":`...)
	b = strconv.AppendInt(b, int64(pid), 10)
	b = append(b, `,"tid":0,"ts":`...)
	b = appendMicros(b, shift+pr.TimeNs)
	b = append(b, '}')
	p.b = b
	p.event(b)
}

// appendJSONString appends s as a JSON string. Paths are bytes, not
// always UTF-8: invalid bytes become U+FFFD so that the document stays
// JSON every reader accepts.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b = append(b, "\ufffd"...)
		} else {
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return append(b, '"')
}

// rendered is one trace's part of the document as its goroutine renders
// it: its text in chunks, then its figures and error.
type rendered struct {
	chunks chan []byte
	st     Stats
	err    error
}

// chunkWriter hands what a trace's renderer writes to the document's
// writer in chunks, until the document is abandoned.
type chunkWriter struct {
	out  chan<- []byte
	done <-chan struct{}
}

var errAbandoned = errors.New("export: the document was abandoned")

func (c *chunkWriter) Write(b []byte) (int, error) {
	select {
	case c.out <- append([]byte(nil), b...):
		return len(b), nil
	case <-c.done:
		return 0, errAbandoned
	}
}

// parallel renders the traces on opt.Jobs goroutines, each into chunks of
// at most 256 KiB that wait in a channel of two, and writes them to the
// document in trace order: the document and the figures are those of one
// trace after another, in memory bounded by the goroutines.
func (p *perfetto) parallel(traces []string, pid0 int, start int64, st *Stats) error {
	jobs := p.opt.Jobs
	slots := make([]chan *rendered, len(traces))
	for i := range slots {
		slots[i] = make(chan *rendered, 1)
	}
	done := make(chan struct{})
	ahead := make(chan struct{}, 2*jobs)
	var next atomic.Int64
	var wg sync.WaitGroup
	defer func() {
		close(done) // the goroutines stop at their next chunk
		wg.Wait()
	}()
	for range min(jobs, len(traces)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case ahead <- struct{}{}:
				case <-done:
					return
				}
				i := int(next.Add(1) - 1)
				if i >= len(traces) {
					return
				}
				r := &rendered{chunks: make(chan []byte, 2)}
				slots[i] <- r
				// Every event of a trace's part comes after another: the
				// document's first is found when the parts are joined.
				q := &perfetto{out: bufio.NewWriterSize(&chunkWriter{r.chunks, done}, 256<<10), opt: p.opt}
				r.err = q.trace(pid0+i+1, traces[i], start, &r.st)
				if r.err == nil {
					r.err = q.err
				}
				if err := q.out.Flush(); err != nil && r.err == nil {
					r.err = err
				}
				close(r.chunks)
			}
		}()
	}
	for i := range traces {
		r := <-slots[i]
		for c := range r.chunks {
			if p.first {
				c = bytes.TrimPrefix(c, []byte(",\n"))
				p.first = false
			}
			if p.err == nil {
				_, p.err = p.out.Write(c)
			}
		}
		<-ahead
		if r.err != nil && !errors.Is(r.err, errAbandoned) {
			return r.err
		}
		st.add(&r.st)
		if p.err != nil {
			return p.err
		}
	}
	return nil
}
