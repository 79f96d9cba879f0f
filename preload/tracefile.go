package main

/*
#include "iop.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"os"

	"syscall"
)

// traceFile is the trace's descriptor, kept out of the application's way:
// it lives at a high descriptor number, so the numbers the application
// gets from open stay as they would be without iopred, and every write
// first checks that the descriptor still is the trace (a program may close
// or reuse descriptors it does not know about), reopening it if not.
type traceFile struct {
	path     string
	fd       int
	dev, ino uint64
}

// highFD is where the trace's descriptor goes; the C constructor chose
// it and grew the descriptor table to hold it while that was cheap.
func highFD() int { return int(C.iop_cfg.trace_fd_min) }

func createTraceFile(path string) (*traceFile, error) {
	fd, err := syscall.Open(path, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL|syscall.O_CLOEXEC, 0o644)
	if err != nil {
		return nil, &os.PathError{Op: "create", Path: path, Err: err}
	}
	t := &traceFile{path: path}
	return t, t.adopt(fd)
}

// adopt moves fd to a high number and remembers which file it is.
func (t *traceFile) adopt(fd int) error {
	high, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_DUPFD_CLOEXEC, uintptr(highFD()))
	if errno == 0 {
		syscall.Close(fd)
		fd = int(high)
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		syscall.Close(fd)
		return err
	}
	t.fd, t.dev, t.ino = fd, st.Dev, st.Ino
	return nil
}

func (t *traceFile) ensure() error {
	var st syscall.Stat_t
	if err := syscall.Fstat(t.fd, &st); err == nil && st.Dev == t.dev && st.Ino == t.ino {
		return nil
	}
	// The program closed or replaced our descriptor: it is not ours to
	// close any more; open the trace again.
	fd, err := syscall.Open(t.path, syscall.O_WRONLY|syscall.O_APPEND|syscall.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("trace %s lost and cannot be reopened: %w", t.path, err)
	}
	return t.adopt(fd)
}

// Write writes all of p, as one frame must be written whole.
func (t *traceFile) Write(p []byte) (int, error) {
	if err := t.ensure(); err != nil {
		return 0, err
	}
	n := 0
	for n < len(p) {
		m, err := syscall.Write(t.fd, p[n:])
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return n, &os.PathError{Op: "write", Path: t.path, Err: err}
		}
		n += m
	}
	return n, nil
}
