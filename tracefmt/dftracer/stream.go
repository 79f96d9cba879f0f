package dftracer

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"iopred/tracefmt"
)

// Format is how tracefmt reads a DFTracer trace: a file of one process is
// one trace; a file whose calls come from several processes is one trace
// per process ("<file>#pid<N>"). Each holds
//
//   - an event for each POSIX and STDIO call, the operation as DFTracer
//     names it ("read", "pwrite64", "fopen", "__xstat64", ...), times
//     counted from the process's first event (the header's StartUnixNs and
//     StartMonoNs hold its wall-clock time, so that the files of one job
//     share a clock); the bytes from "ret" (fread and fwrite: "ret" items of
//     "size" bytes), the size asked from "count" (times "size"); the offset
//     from "offset" where the call takes one, and for read, write, fread
//     and fwrite from the file position that the process's opens, seeks
//     and earlier transfers on the descriptor (or, for streams, the file)
//     imply, NoOffset where they do not tell it (a descriptor a forked
//     child inherited: its position is shared with the parent);
//   - a region (tracefmt.Region) for each event of another category than
//     POSIX, STDIO and DFTracer's own: its name, category, thread, times
//     and scalar arguments;
//   - a fork record (tracefmt.Proc) where the process forked a child; a
//     forked child's header names its parent (PPID) and fork time
//     (ForkUnixNs), and has the program, command line, host and rank of
//     its parent where it recorded none of its own;
//   - notes in the header when DFTracer recorded no sizes or paths
//     (DFTRACER_INC_METADATA unset), or forked children without thread
//     ids (DFTRACER_DISABLE_TIDS), which leaves them inseparable;
//   - a footer at the end of its last event.
//
// The process is named after the executable the trace's metadata names
// (its "exec_hash"), else after the one in DFTracer 1.x's file name
// (<prefix>-<executable>-<pid>-preload.pfw). A thread that a forked child
// starts has no record linking it to the child: it stays with the pid
// DFTracer wrote. DFTracer does not record errno: a failed call has its
// return value only.
var Format = tracefmt.Format{
	Name:      "dftracer",
	Suffixes:  []string{".pfw", ".pfw.gz"},
	Sniff:     Sniff,
	Processes: processes,
	Open:      openStream,
}

func init() { tracefmt.RegisterFormat(Format) }

// thread is a (pid, tid) pair as DFTracer wrote it. DFTracer 1.x keeps
// the pid it read when it started, so a child forked without exec writes
// its parent's pid; its thread id, the child's own, tells it apart.
type thread struct{ pid, tid int64 }

// forkCall is a fork as the trace recorded it: in the parent (ret, the
// child's pid) or in the child (ret 0, from the thread that is the child).
type forkCall struct {
	by  thread
	ret int64 // -1 when not recorded
	ts  int64 // µs
	// first says the call is the first its thread recorded, as a child's
	// record of its own fork is.
	first bool
}

// meta is what a first pass over a file learns: its processes, their
// metadata, and the hashes' strings.
type meta struct {
	pids   []int64 // processes with calls or regions, in order of appearance
	procs  map[int64]*procMeta
	files  map[string]string // file hash -> name
	hosts  map[string]string
	strs   map[string]string
	events int
	// children are the processes forked without exec whose calls carry
	// another process's pid: child pid -> the pid the trace wrote.
	children map[int64]bool
	// threads are the pairs met, in order, with what each said; folded
	// into procs by the process each belongs to once the file is read.
	threads []thread
	byPair  map[thread]*procMeta
	forks   []forkCall
}

type procMeta struct {
	first     int64 // ts of the first event, µs
	host      string
	hostHash  string
	cmdHash   string
	execHash  string
	ppid      int64
	hasPPID   bool
	forkUs    int64 // when the process was forked without exec, µs; 0 if not
	rank      *int
	version   string
	ioEvents  int
	regions   int
	sized     int // I/O events with a size or a return value
	named     int // I/O events that name their file
	lastEndUs int64
	mixed     int // forked children whose calls this process's pid and tid 0 hide
	skipped   int // aggregated and counter records, which are not calls
	calls     int // complete events of the pair, of any category
}

func newProcMeta() *procMeta { return &procMeta{first: math.MaxInt64} }

// fold adds what another pair of the same process said.
func (p *procMeta) fold(q *procMeta) {
	p.first = min(p.first, q.first)
	p.lastEndUs = max(p.lastEndUs, q.lastEndUs)
	p.ioEvents += q.ioEvents
	p.regions += q.regions
	p.sized += q.sized
	p.named += q.named
	p.skipped += q.skipped
	for _, f := range []struct{ dst, src *string }{{&p.host, &q.host}, {&p.hostHash, &q.hostHash},
		{&p.cmdHash, &q.cmdHash}, {&p.execHash, &q.execHash}, {&p.version, &q.version}} {
		if *f.dst == "" {
			*f.dst = *f.src
		}
	}
	if !p.hasPPID && q.hasPPID {
		p.ppid, p.hasPPID = q.ppid, true
	}
	if p.rank == nil {
		p.rank = q.rank
	}
}

func (m *meta) pair(pid, tid int64) *procMeta {
	k := thread{pid, tid}
	p := m.byPair[k]
	if p == nil {
		p = newProcMeta()
		m.byPair[k] = p
		m.threads = append(m.threads, k)
	}
	return p
}

// owner returns the process a call of the pair (pid, tid) belongs to: the
// thread's own pid when the thread is the main thread of a forked child,
// else the pid the trace wrote. A thread that a forked child started
// later has no record linking it to the child, and stays with pid.
func (m *meta) owner(pid, tid int64) int64 {
	if tid != 0 && tid != pid && m.children[tid] {
		return tid
	}
	return pid
}

// ioCategory reports whether a category is one of the I/O calls iopred
// records.
func ioCategory(cat string) bool {
	return strings.EqualFold(cat, "POSIX") || strings.EqualFold(cat, "STDIO")
}

// regionCategory reports whether an event of the category is the
// application's own work: neither an I/O call nor DFTracer's own
// bookkeeping.
func regionCategory(cat string) bool {
	return !ioCategory(cat) && !strings.EqualFold(cat, "dftracer")
}

// scan reads a file once for its metadata.
func scan(path string) (*meta, error) {
	r, err := openLines(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	m, err := scanLines(r)
	if m != nil {
		m.nameFromFile(path)
	}
	return m, err
}

// scanLines reads a trace's lines for its metadata; the meta holds what
// came before a fault.
func scanLines(r *lineReader) (*meta, error) {
	m := &meta{procs: map[int64]*procMeta{}, files: map[string]string{}, hosts: map[string]string{}, strs: map[string]string{},
		byPair: map[thread]*procMeta{}}
	var active []thread // pairs with calls or regions, in order
	seen := map[thread]bool{}
	defer func() { m.resolve(active) }()
	for {
		line, err := r.next()
		if err == io.EOF {
			return m, nil
		}
		if err != nil {
			return m, err
		}
		e, err := r.parse(line)
		if err != nil {
			return m, err
		}
		m.events++
		pid, tid := e.Pid.v, e.Tid.v
		switch e.Ph {
		case "M":
			name, _ := e.str("name")
			value, _ := e.str("value")
			switch e.Name {
			case "FH":
				m.files[value] = name
			case "HH":
				m.hosts[value] = name
				if p := m.pair(pid, tid); p.host == "" {
					p.host = name
				}
			case "SH":
				m.strs[value] = name
			case "PR":
				if name == "rank" {
					if n, err := strconv.Atoi(value); err == nil {
						m.pair(pid, tid).rank = &n
					}
				}
			case "process_name":
				if n, ok := strings.CutPrefix(name, "Rank "); ok {
					if r, err := strconv.Atoi(n); err == nil && m.pair(pid, tid).rank == nil {
						m.pair(pid, tid).rank = &r
					}
				}
			}
			continue
		case "X":
		default:
			// Counters and aggregated records: not calls.
			m.pair(pid, tid).skipped++
			continue
		}
		if !e.Ts.set {
			continue
		}
		p := m.pair(pid, tid)
		p.first = min(p.first, e.Ts.v)
		if h, ok := e.str("hhash"); ok && p.hostHash == "" {
			p.hostHash = h
		}
		if h, ok := e.str("hostname"); ok && p.host == "" {
			p.host = h
		}
		if e.Name == "start" && strings.EqualFold(e.Cat, "dftracer") {
			p.cmdHash, _ = e.str("cmd_hash")
			p.execHash, _ = e.str("exec_hash")
			if s, ok := e.str("cmd"); ok {
				p.cmdHash, m.strs["cmd:"+s] = "cmd:"+s, s
			}
			p.ppid, p.hasPPID = e.num("ppid")
			p.version, _ = e.str("version")
		}
		if e.Name == "fork" && ioCategory(e.Cat) {
			ret, ok := e.num("ret")
			if !ok {
				ret = -1
			}
			if ret >= -1 {
				m.forks = append(m.forks, forkCall{by: thread{pid, tid}, ret: ret, ts: e.Ts.v, first: p.calls == 0})
			}
		}
		p.calls++
		switch {
		case ioCategory(e.Cat):
			p.ioEvents++
			p.lastEndUs = max(p.lastEndUs, e.Ts.v+max(e.Dur.v, 0))
			if _, ok := e.num("ret"); ok {
				p.sized++
			} else if _, ok := e.num("size"); ok {
				p.sized++
			} else if _, ok := e.num("count"); ok {
				p.sized++
			}
			if _, ok := e.str("fhash"); ok {
				p.named++
			} else if _, ok := e.str("fname"); ok {
				p.named++
			}
		case regionCategory(e.Cat) && e.Name != "":
			p.regions++
			p.lastEndUs = max(p.lastEndUs, e.Ts.v+max(e.Dur.v, 0))
		default:
			continue
		}
		if k := (thread{pid, tid}); !seen[k] {
			seen[k] = true
			active = append(active, k)
		}
	}
}

// resolve finds the forked children among the threads and folds what
// each pair said into the process it belongs to; active are the pairs
// with calls or regions, in order of appearance.
func (m *meta) resolve(active []thread) {
	m.children = map[int64]bool{}
	m.inferForks()
	for _, f := range m.forks {
		switch {
		case f.ret > 0:
			m.children[f.ret] = true
		case f.ret == 0 && f.by.tid != 0 && f.by.tid != f.by.pid:
			m.children[f.by.tid] = true // the child's own record of its fork
		}
	}
	for _, k := range m.threads {
		pid := m.owner(k.pid, k.tid)
		p := m.procs[pid]
		if p == nil {
			p = newProcMeta()
			m.procs[pid] = p
		}
		p.fold(m.byPair[k])
	}
	// A child learns its parent and fork time from the parent's record of
	// the fork, else from its own; it inherits what it did not record
	// itself (DFTracer 1.x writes the host, command line and rank once,
	// in the parent).
	parent := map[int64]int64{}
	for _, f := range m.forks {
		if f.by.tid == 0 {
			if p := m.procs[f.by.pid]; p != nil && f.ret != 0 {
				p.mixed++ // no thread ids: the children's calls are the parent's
			}
			continue
		}
		if f.ret < 0 {
			continue
		}
		child, by := f.ret, m.owner(f.by.pid, f.by.tid)
		if f.ret == 0 {
			child, by = m.owner(f.by.pid, f.by.tid), f.by.pid
		}
		if child == by || child <= 0 {
			continue
		}
		if _, ok := parent[child]; ok && f.ret == 0 {
			continue // the parent's record wins
		}
		parent[child] = by
		if c := m.procs[child]; c != nil {
			c.forkUs = f.ts
		}
	}
	for child, by := range parent {
		c := m.procs[child]
		if c == nil {
			continue
		}
		if _, own := m.byPair[thread{child, child}]; !own || !c.hasPPID {
			c.ppid, c.hasPPID = by, true
		}
		for up, hops := by, 0; hops < 64; hops++ {
			if q := m.procs[up]; q != nil {
				inherit := *q
				inherit.ioEvents, inherit.regions, inherit.sized, inherit.named, inherit.skipped = 0, 0, 0, 0, 0
				inherit.first, inherit.lastEndUs, inherit.hasPPID = math.MaxInt64, 0, false
				c.fold(&inherit)
			}
			next, ok := parent[up]
			if !ok {
				break
			}
			up = next
		}
	}
	seen := map[int64]bool{}
	for _, k := range active {
		if pid := m.owner(k.pid, k.tid); !seen[pid] {
			seen[pid] = true
			m.pids = append(m.pids, pid)
		}
	}
}

// inferForks fills in the forks whose return value DFTracer did not
// record (traced without DFTRACER_INC_METADATA=1). Parent and child each
// record the call, with the same start time (taken before the fork): of
// the pair, the child's is the first call its thread recorded. The
// child's record then gets ret 0 and the parent's the child's pid.
func (m *meta) inferForks() {
	byStart := map[[2]int64][]int{} // (recorded pid, ts) -> forks without ret
	for i, f := range m.forks {
		if f.ret == -1 && f.by.tid != 0 {
			k := [2]int64{f.by.pid, f.ts}
			byStart[k] = append(byStart[k], i)
		}
	}
	for _, idx := range byStart {
		if len(idx) != 2 {
			continue // not one parent and one child: nothing is sure
		}
		a, b := &m.forks[idx[0]], &m.forks[idx[1]]
		if a.by.tid == b.by.tid {
			continue
		}
		switch {
		case a.first && !b.first:
		case b.first && !a.first:
			a, b = b, a
		case b.by.tid == b.by.pid: // both new: the thread that is the process forked
		case a.by.tid == a.by.pid:
			a, b = b, a
		default:
			continue
		}
		a.ret, b.ret = 0, a.by.tid
	}
}

// dftracer1Name matches the file names DFTracer 1.x gives its traces:
// <prefix>-<executable>-<pid>-<preload|app>.pfw[.gz].
var dftracer1Name = regexp.MustCompile(`-([^-/]+)-([0-9]+)-(preload|app)\.pfw(\.gz)?$`)

// nameFromFile names the file's process after the executable in the file
// name when the trace's metadata does not name one (DFTracer traced
// without DFTRACER_INC_METADATA=1 keeps no command line).
func (m *meta) nameFromFile(path string) {
	sub := dftracer1Name.FindStringSubmatch(filepath.Base(path))
	if sub == nil {
		return
	}
	pid, err := strconv.ParseInt(sub[2], 10, 64)
	if err != nil {
		return
	}
	if p := m.procs[pid]; p != nil && p.execHash == "" && p.cmdHash == "" {
		p.execHash = "file:" + sub[1]
		m.strs[p.execHash] = sub[1]
		for child := range m.children {
			if c := m.procs[child]; c != nil && c.execHash == "" && c.cmdHash == "" {
				c.execHash = p.execHash
			}
		}
	}
}

// The last file scanned stays in memory: Discover and Open both need it.
var cache tracefmt.FileCache[*meta]

func load(path string) (*meta, error) { return cache.Get(path, scan) }

func processes(path string) ([]string, error) {
	m, err := load(path)
	if m == nil {
		return nil, err
	}
	if len(m.pids) <= 1 {
		return nil, nil
	}
	names := make([]string, len(m.pids))
	for i, p := range m.pids {
		names[i] = "pid" + strconv.FormatInt(p, 10)
	}
	return names, nil
}

func openStream(path, proc string) (tracefmt.Stream, error) {
	m, err := load(path)
	if m == nil {
		return nil, err
	}
	pid := int64(-1)
	switch {
	case proc != "":
		n, perr := strconv.ParseInt(strings.TrimPrefix(proc, "pid"), 10, 64)
		if perr != nil || !strings.HasPrefix(proc, "pid") || m.procs[n] == nil {
			return nil, fmt.Errorf("%s: no process %q in this DFTracer trace", path, proc)
		}
		pid = n
	case len(m.pids) > 1:
		return nil, fmt.Errorf("%s: a DFTracer trace of %d processes: name one as %s#pid%d", path, len(m.pids), path, m.pids[0])
	case len(m.pids) == 1:
		pid = m.pids[0]
	default:
		for p := range m.procs {
			pid = max(pid, p) // a trace without I/O: its process, if it names one
		}
	}
	r, err := openLines(path)
	if err != nil {
		return nil, err
	}
	return newStream(m, r, pid), nil
}

// newStream reads the process pid's records from r, in a second pass
// over the lines scanLines read: it meets the first pass's fault, if any,
// at the same line, and ends there.
func newStream(m *meta, r *lineReader, pid int64) tracefmt.Stream {
	s := &stream{m: m, r: r, pid: pid, files: map[string]uint32{}, tids: map[int64]int32{},
		fds: map[int64]int64{}, streams: map[string]*position{}}
	p := m.procs[pid]
	h := tracefmt.Header{Version: tracefmt.FormatVersion, PID: int(max(pid, 0)), Source: "dftracer"}
	if p != nil {
		s.anchor = p.first * 1000
		if p.first == math.MaxInt64 {
			s.anchor = 0
		}
		h.Host = p.host
		if h.Host == "" {
			h.Host = m.hosts[p.hostHash]
		}
		if cmd := m.strs[p.cmdHash]; cmd != "" {
			h.Args = commandWords(cmd)
			if len(h.Args) > 0 {
				h.Program = h.Args[0]
			}
		}
		// The executable the trace's metadata names wins over the command
		// line's first word (a Python pool's workers share a command line
		// whose words say little about what ran).
		if exe := m.strs[p.execHash]; exe != "" {
			h.Program = exe
		}
		h.PPID, h.Rank = int(p.ppid), p.rank
		if p.forkUs > 0 {
			h.ForkUnixNs = p.forkUs * 1000
		}
		if p.version != "" {
			h.Source = "dftracer " + p.version
		}
		s.endNs = p.lastEndUs*1000 - s.anchor
		h.Notes = notes(p)
	}
	h.StartUnixNs, h.StartMonoNs = s.anchor, s.anchor
	return tracefmt.NewRecordStream(h, s.record, r.Close)
}

// commandWords splits a command line as DFTracer keeps it: its words
// joined by ";" (DFTracer replaces the NULs of /proc/PID/cmdline), or by
// spaces in traces written by hand or by older versions.
func commandWords(cmd string) []string {
	if strings.Contains(cmd, ";") {
		var words []string
		for _, w := range strings.Split(cmd, ";") {
			if w != "" {
				words = append(words, w)
			}
		}
		return words
	}
	return strings.Fields(cmd)
}

// notes say what the trace of a process lacks, in words the same for
// every process, so that a job's summary says each once.
func notes(p *procMeta) []string {
	var out, lacks []string
	if p.ioEvents > 0 && p.sized == 0 {
		lacks = append(lacks, "sizes")
	}
	if p.ioEvents > 0 && p.named == 0 {
		lacks = append(lacks, "file paths")
	}
	if len(lacks) > 0 {
		out = append(out, fmt.Sprintf("DFTracer recorded no %s for the I/O calls (traced without DFTRACER_INC_METADATA=1): "+
			"bytes, offsets and files are unknown, not zero", strings.Join(lacks, " and ")))
	}
	if p.mixed > 0 {
		out = append(out, "DFTracer recorded processes forked without exec under their parent's pid and without thread ids "+
			"(DFTRACER_DISABLE_TIDS): their calls are read as the parent's, and offsets implied by descriptors may mix")
	}
	if p.skipped > 0 {
		out = append(out, "DFTracer's counter and aggregated records are not calls and are not read")
	}
	return out
}

// position is a file position the stream knows, for the stream calls.
type position struct {
	off  int64
	open int // handles open on the path; more than one: unknown
	ok   bool
}

// stream produces one process's records in a second pass.
type stream struct {
	m       *meta
	r       *lineReader
	pid     int64
	anchor  int64 // ns
	endNs   int64
	scanErr error
	files   map[string]uint32
	tids    map[int64]int32
	fds     map[int64]int64 // descriptor -> position
	streams map[string]*position
	queue   []tracefmt.Record
	events  uint64
	bytes   uint64
	done    bool
}

func (s *stream) record() (tracefmt.Record, error) {
	for len(s.queue) == 0 {
		if s.done {
			if s.scanErr != nil {
				return tracefmt.Record{}, s.endError(s.scanErr)
			}
			return tracefmt.Record{}, io.EOF
		}
		line, err := s.r.next()
		if err == io.EOF {
			s.done = true
			if s.scanErr == nil {
				s.queue = append(s.queue, tracefmt.Record{Kind: tracefmt.KindFooter,
					Footer: &tracefmt.Footer{Reason: "exit", EndNs: s.endNs, Events: s.events, Bytes: s.bytes}})
			}
			continue
		}
		if err == nil {
			var e *event
			if e, err = s.r.parse(line); err == nil {
				s.convert(e)
				continue
			}
		}
		s.done, s.scanErr = true, err
	}
	rec := s.queue[0]
	s.queue = s.queue[1:]
	return rec, nil
}

// endError turns a cut into the truncation every analysis understands.
func (s *stream) endError(err error) error {
	var le *LineError
	if errors.As(err, &le) && errors.Is(err, errCut) {
		return &tracefmt.TruncatedError{File: le.File, Offset: -1, Reason: fmt.Sprintf("line %d: %v", le.Line, le.Err)}
	}
	return err
}

// tid returns the thread of an event as iopred keeps it (32 bits): the
// thread id itself when it fits, else a number of its own.
func (s *stream) tid(e *event) int32 {
	if !e.Tid.set {
		return 0
	}
	if e.Tid.v == int64(int32(e.Tid.v)) {
		return int32(e.Tid.v)
	}
	t, ok := s.tids[e.Tid.v]
	if !ok {
		t = int32(len(s.tids) + 1)
		s.tids[e.Tid.v] = t
	}
	return t
}

// regionArgsSkipped are DFTracer's bookkeeping among an event's
// arguments: the host hash and the nesting it keeps for its own analyses.
var regionArgsSkipped = map[string]bool{"hhash": true, "level": true, "p_idx": true, "id": true}

// maxRegionArgs bounds the arguments a region keeps.
const maxRegionArgs = 32

// region queues an application-level event as a region.
func (s *stream) region(e *event) {
	g := &tracefmt.Region{Name: e.Name, Category: e.Cat, Tid: s.tid(e)}
	g.StartNs = e.Ts.v*1000 - s.anchor
	g.EndNs = g.StartNs + max(e.Dur.v, 0)*1000
	for k, raw := range e.Args {
		if regionArgsSkipped[k] || len(g.Args) >= maxRegionArgs {
			continue
		}
		v, ok := e.str(k)
		if !ok {
			if t := strings.TrimSpace(string(raw)); t == "true" || t == "false" {
				v, ok = t, true
			} else if json.Valid(raw) && len(raw) <= 256 && t != "null" {
				v, ok = t, true // an array or object, as its JSON
			}
		}
		if ok {
			if g.Args == nil {
				g.Args = map[string]string{}
			}
			g.Args[k] = v
		}
	}
	s.queue = append(s.queue, tracefmt.Record{Kind: tracefmt.KindRegion, Region: g})
}

// file returns the trace's id of a path, defining it the first time.
func (s *stream) file(path string) uint32 {
	if id, ok := s.files[path]; ok {
		return id
	}
	id := uint32(len(s.files) + 1)
	s.files[path] = id
	s.queue = append(s.queue, tracefmt.Record{Kind: tracefmt.KindFile, File: &tracefmt.File{ID: id, Path: path}})
	return id
}

// pathOf returns the file an event names, "" when none.
func (s *stream) pathOf(e *event) string {
	if p, ok := e.str("fname"); ok {
		return p
	}
	if h, ok := e.str("fhash"); ok {
		if p, ok := s.m.files[h]; ok {
			return p
		}
		return "<dftracer file hash " + h + ">"
	}
	return ""
}

// The POSIX and stdio calls that move data, open, seek, or close.
var (
	posixData = map[string]bool{"read": true, "write": true, "pread": true, "pwrite": true, "pread64": true,
		"pwrite64": true, "readv": true, "writev": true, "preadv": true, "pwritev": true}
	posixOpen = map[string]bool{"open": true, "open64": true, "openat": true, "openat64": true, "creat": true, "creat64": true}
	posixSeek = map[string]bool{"lseek": true, "lseek64": true}
)

const oAppend = 0x400 // O_APPEND on Linux

// convert queues the iopred event of a DFTracer event of the stream's
// process, if it is an I/O call.
func (s *stream) convert(e *event) {
	if e.Ph != "X" || e.Name == "" || s.m.owner(e.Pid.v, e.Tid.v) != s.pid {
		return
	}
	switch {
	case e.Name == "fork" && ioCategory(e.Cat):
		// The parent's record names the child, which has a trace of its
		// own; the child's record (ret 0) is its start.
		if ret, ok := e.num("ret"); ok && ret > 0 {
			s.queue = append(s.queue, tracefmt.Record{Kind: tracefmt.KindProc,
				Proc: &tracefmt.Proc{Op: "fork", TimeNs: e.Ts.v*1000 - s.anchor + max(e.Dur.v, 0)*1000, Child: int(ret)}})
		}
		return
	case regionCategory(e.Cat):
		s.region(e)
		return
	case !ioCategory(e.Cat):
		return
	}
	ev := &tracefmt.Event{Op: e.Name, Offset: tracefmt.NoOffset}
	if p := s.pathOf(e); p != "" {
		ev.FileID = s.file(p)
	}
	ev.StartNs = e.Ts.v*1000 - s.anchor
	ev.EndNs = ev.StartNs + max(e.Dur.v, 0)*1000
	ev.Tid = s.tid(e)
	ret, hasRet := e.num("ret")
	ev.Ret = ret
	fd, hasFd := e.num("fd")
	path := s.pathOf(e)
	switch name := e.Name; {
	case posixData[name]:
		count, _ := e.num("count")
		ev.Size = count
		if !hasRet {
			ev.Ret = count
		}
		ev.Bytes = max(ev.Ret, 0)
		if off, ok := e.num("offset"); ok && strings.HasPrefix(name, "p") {
			ev.Offset = off
		} else if pos, ok := s.fds[fd]; ok && hasFd {
			ev.Offset = pos
			s.fds[fd] = pos + ev.Bytes
		}
	case posixOpen[name]:
		flags, _ := e.num("flags")
		ev.Aux = flags
		if hasRet && ret >= 0 {
			delete(s.fds, ret)
			if flags&oAppend == 0 {
				s.fds[ret] = 0
			}
		}
	case posixSeek[name]:
		whence, _ := e.num("whence")
		ev.Aux = whence
		if hasRet && ret >= 0 {
			ev.Offset = ret
			if hasFd {
				s.fds[fd] = ret
			}
		} else if hasFd {
			delete(s.fds, fd)
		}
	case name == "close":
		if hasFd {
			delete(s.fds, fd)
		}
	case name == "fread" || name == "fwrite":
		size, _ := e.num("size")
		count, _ := e.num("count")
		ev.Size = size * count
		if !hasRet {
			ev.Ret = count
		}
		ev.Bytes = max(ev.Ret, 0) * size
		if p := s.streams[path]; p != nil && p.ok && p.open == 1 {
			ev.Offset = p.off
			p.off += ev.Bytes
		}
	case name == "fopen" || name == "fopen64" || name == "fdopen":
		p := s.streams[path]
		if p == nil {
			p = &position{}
			s.streams[path] = p
		}
		p.open++
		mode, _ := e.str("mode")
		p.off, p.ok = 0, name != "fdopen" && !strings.HasPrefix(mode, "a")
	case name == "fclose":
		if p := s.streams[path]; p != nil {
			if p.open--; p.open <= 0 {
				delete(s.streams, path)
			}
		}
	case name == "fseek" || name == "fseeko" || name == "fseeko64":
		whence, _ := e.num("whence")
		off, _ := e.num("offset")
		ev.Aux = whence
		if p := s.streams[path]; p != nil {
			switch {
			case hasRet && ret != 0:
			case whence == 0:
				p.off, p.ok = off, true
			case whence == 1 && p.ok:
				p.off += off
			default:
				p.ok = false
			}
			if p.ok {
				ev.Offset = p.off
			}
		}
	case name == "ftell" || name == "ftello":
		if p := s.streams[path]; p != nil && hasRet && ret >= 0 {
			p.off, p.ok = ret, true
		}
	}
	if tracefmt.IsData(ev.Op) && ev.Bytes > 0 {
		s.bytes += uint64(ev.Bytes)
	}
	s.events++
	s.queue = append(s.queue, tracefmt.Record{Kind: tracefmt.KindEvent, Event: ev})
}
