package dftracer

import (
	"errors"
	"fmt"
	"io"
	"math"
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
//     imply, NoOffset where they do not tell it;
//   - a footer at the end of its last event.
//
// DFTracer does not record errno: a failed call has its return value
// only.
var Format = tracefmt.Format{
	Name:      "dftracer",
	Suffixes:  []string{".pfw", ".pfw.gz"},
	Sniff:     Sniff,
	Processes: processes,
	Open:      openStream,
}

func init() { tracefmt.RegisterFormat(Format) }

// meta is what a first pass over a file learns: its processes, their
// metadata, and the hashes' strings.
type meta struct {
	pids   []int64 // processes with I/O events, in order of appearance
	procs  map[int64]*procMeta
	files  map[string]string // file hash -> name
	hosts  map[string]string
	strs   map[string]string
	events int
}

type procMeta struct {
	first     int64 // ts of the first event, µs
	host      string
	hostHash  string
	cmdHash   string
	execHash  string
	ppid      int64
	rank      *int
	version   string
	ioEvents  int
	sized     int // I/O events with a size or a return value
	named     int // I/O events that name their file
	lastEndUs int64
}

func (m *meta) proc(pid int64) *procMeta {
	p := m.procs[pid]
	if p == nil {
		p = &procMeta{first: math.MaxInt64}
		m.procs[pid] = p
	}
	return p
}

// ioCategory reports whether a category is one of the I/O calls iopred
// records.
func ioCategory(cat string) bool {
	return strings.EqualFold(cat, "POSIX") || strings.EqualFold(cat, "STDIO")
}

// scan reads a file once for its metadata.
func scan(path string) (*meta, error) {
	r, err := openLines(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return scanLines(r)
}

// scanLines reads a trace's lines for its metadata; the meta holds what
// came before a fault.
func scanLines(r *lineReader) (*meta, error) {
	m := &meta{procs: map[int64]*procMeta{}, files: map[string]string{}, hosts: map[string]string{}, strs: map[string]string{}}
	seen := map[int64]bool{}
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
		pid := e.Pid.v
		switch e.Ph {
		case "M":
			name, _ := e.str("name")
			value, _ := e.str("value")
			switch e.Name {
			case "FH":
				m.files[value] = name
			case "HH":
				m.hosts[value] = name
				if p := m.proc(pid); p.host == "" {
					p.host = name
				}
			case "SH":
				m.strs[value] = name
			case "PR":
				if name == "rank" {
					if n, err := strconv.Atoi(value); err == nil {
						m.proc(pid).rank = &n
					}
				}
			case "process_name":
				if n, ok := strings.CutPrefix(name, "Rank "); ok {
					if r, err := strconv.Atoi(n); err == nil && m.proc(pid).rank == nil {
						m.proc(pid).rank = &r
					}
				}
			}
			continue
		}
		if !e.Ts.set {
			continue
		}
		p := m.proc(pid)
		p.first = min(p.first, e.Ts.v)
		if h, ok := e.str("hhash"); ok && p.hostHash == "" {
			p.hostHash = h
		}
		if h, ok := e.str("hostname"); ok && p.host == "" {
			p.host = h
		}
		if e.Name == "start" && e.Cat == "dftracer" {
			p.cmdHash, _ = e.str("cmd_hash")
			p.execHash, _ = e.str("exec_hash")
			if s, ok := e.str("cmd"); ok {
				p.cmdHash, m.strs["cmd:"+s] = "cmd:"+s, s
			}
			p.ppid, _ = e.num("ppid")
			p.version, _ = e.str("version")
		}
		if ioCategory(e.Cat) {
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
			if !seen[pid] {
				seen[pid] = true
				m.pids = append(m.pids, pid)
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
			h.Args = strings.Fields(cmd)
			h.Program = h.Args[0]
		}
		// The executable the trace's metadata names wins over the command
		// line's first word (a Python pool's workers share a command line
		// whose words say little about what ran).
		if exe := m.strs[p.execHash]; exe != "" {
			h.Program = exe
		}
		h.PPID, h.Rank = int(p.ppid), p.rank
		if p.version != "" {
			h.Source = "dftracer " + p.version
		}
		s.endNs = p.lastEndUs*1000 - s.anchor
		var lacks []string
		if p.ioEvents > 0 && p.sized == 0 {
			lacks = append(lacks, "sizes")
		}
		if p.ioEvents > 0 && p.named == 0 {
			lacks = append(lacks, "file paths")
		}
		if len(lacks) > 0 {
			h.Notes = append(h.Notes, fmt.Sprintf("DFTracer recorded no %s for the %d I/O calls of process %d (traced without "+
				"DFTRACER_INC_METADATA=1): bytes, offsets and files are unknown, not zero", strings.Join(lacks, " and "), p.ioEvents, pid))
		}
	}
	h.StartUnixNs, h.StartMonoNs = s.anchor, s.anchor
	return tracefmt.NewRecordStream(h, s.record, r.Close)
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
	if e.Ph != "X" || e.Pid.v != s.pid || !ioCategory(e.Cat) || e.Name == "" {
		return
	}
	ev := &tracefmt.Event{Op: e.Name, Offset: tracefmt.NoOffset}
	if p := s.pathOf(e); p != "" {
		ev.FileID = s.file(p)
	}
	ev.StartNs = e.Ts.v*1000 - s.anchor
	ev.EndNs = ev.StartNs + max(e.Dur.v, 0)*1000
	if e.Tid.set {
		if e.Tid.v == int64(int32(e.Tid.v)) {
			ev.Tid = int32(e.Tid.v)
		} else {
			t, ok := s.tids[e.Tid.v]
			if !ok {
				t = int32(len(s.tids) + 1)
				s.tids[e.Tid.v] = t
			}
			ev.Tid = t
		}
	}
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
