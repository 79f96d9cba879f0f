package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"iopred/tracefmt"
	"iopred/tracefmt/spill"
)

// childScanEvery is how often a process that has forked looks for the
// spills of descendants that ended (spill.c), to convert them into
// traces while it runs; it looks once more when it exits.
const childScanEvery = 2 * time.Second

// convertChildren turns the spill of every ended descendant of this
// process in the trace directory into an ordinary trace, and removes the
// spill. A spill of a process still running is left for a later scan; one
// left at the end is read as a trace by iopred itself.
func (s *session) convertChildren() {
	s.lastChildScan = time.Now()
	dir := s.dir
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	host := "." + s.host + "."
	me := os.Getpid()
	for _, e := range ents {
		name := e.Name()
		if !strings.HasSuffix(name, spill.Suffix) || !strings.Contains(name, host) {
			continue
		}
		path := filepath.Join(dir, name)
		head, err := readPrivateUpTo(path, spill.HeaderSize)
		if err != nil {
			continue
		}
		h, err := spill.ParseHeader(head, path)
		if err != nil || h.Root != me || h.Host != s.host || !processGone(h.PID) {
			continue
		}
		data, err := readPrivate(path)
		if err == nil {
			err = s.convertSpill(path, data)
		}
		if err != nil && !s.childWarned {
			s.childWarned = true
			fmt.Fprintf(os.Stderr, "iopred: a forked child's records: %v\n", err)
		}
	}
}

// convertSpill writes one spill's trace beside it, then removes it.
func (s *session) convertSpill(path string, data []byte) error {
	sp, fault := spill.Parse(data, path)
	if sp == nil {
		return fault
	}
	if sp.Header.State == 2 && !movedData(sp) {
		// A child that only prepared an exec (a shell's redirections, the
		// descriptors a launcher closes): the program it exec'd has its
		// own trace, as a fork and exec always had; its set-up alone would
		// double the traces of every shell script.
		return syscall.Unlink(path)
	}
	base := strings.TrimSuffix(filepath.Base(path), spill.Suffix)
	if anon != nil {
		base = anon.TraceName(base, tracefmt.Header{Program: sp.Header.Program, Host: sp.Header.Host})
	}
	var f *traceFile
	var err error
	for i := 0; i < 100; i++ {
		name := base
		if i > 0 {
			name += "." + strconv.Itoa(i)
		}
		f, err = createTraceFile(filepath.Join(filepath.Dir(path), name+tracefmt.FileSuffix))
		if !errors.Is(err, os.ErrExist) {
			break
		}
	}
	if err != nil {
		return err
	}
	opts := spill.Options{
		Symbolize: func(pc uint64) tracefmt.Frame { return s.sym.frame(uintptr(pc), currentEpoch()) },
		Args:      os.Args,
		Library:   "iopred " + Version,
	}
	if anon == nil {
		err = spill.Convert(sp, f, opts)
	} else {
		// The names are hashed on a second pass: a child's spill is small.
		var plain bytes.Buffer
		if err = spill.Convert(sp, &plain, opts); err == nil {
			err = anonCopy(f, plain.Bytes(), path)
		}
	}
	syscall.Close(f.fd)
	if err != nil {
		// A trace cut short (the directory is full) must not stand beside
		// the spill that still holds everything.
		syscall.Unlink(f.path)
		return err
	}
	return syscall.Unlink(path)
}

// processGone tells whether pid has ended: it no longer exists, or it is
// a zombie its parent has not reaped yet.
func processGone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	stat, err := readPrivateUpTo("/proc/"+strconv.Itoa(pid)+"/stat", 4096)
	if err != nil {
		return errors.Is(err, os.ErrNotExist)
	}
	// pid (comm) state ...: comm may hold spaces and parentheses.
	i := strings.LastIndexByte(string(stat), ')')
	return i >= 0 && i+2 < len(stat) && (stat[i+2] == 'Z' || stat[i+2] == 'X')
}

// readPrivateUpTo reads at most limit bytes of a file (all of it when limit
// is negative) through a descriptor out of the program's way.
func readPrivateUpTo(path string, limit int64) ([]byte, error) {
	f, err := openPrivateFile(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = f
	if limit >= 0 {
		r = io.LimitReader(f, limit)
	}
	return io.ReadAll(r)
}

// movedData tells whether any call of a spill moved bytes.
func movedData(sp *spill.Spill) bool {
	for i := range sp.Events {
		if sp.Events[i].Kind == spill.KindEvent && sp.Events[i].Bytes > 0 {
			return true
		}
	}
	return false
}
