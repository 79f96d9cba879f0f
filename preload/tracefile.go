package main

/*
#include <stdlib.h>
#include "iop.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"unsafe"

	"iopred/internal/safefile"
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

func createTraceFile(path string) (*traceFile, error) {
	fd, err := openPrivate(path, safefile.NewFlags, fileMode())
	if err != nil {
		return nil, &os.PathError{Op: "create", Path: path, Err: err}
	}
	t := &traceFile{path: path}
	return t, t.adopt(fd)
}

// openPrivate opens a file for iopred itself, at a descriptor number out
// of the program's way, without racing the program's own opens for the
// lowest free number (see iop_open_private).
func openPrivate(path string, flags, mode int) (int, error) {
	cpath, err := goCString(path)
	if err != nil {
		return -1, err
	}
	fd := int(C.iop_open_private(cpath, C.int(flags), C.int(mode)))
	if fd < 0 {
		return -1, syscall.Errno(-fd)
	}
	return fd, nil
}

// goCString is path as a C string in Go's memory, for a C function that
// does not keep it. C.CString would call malloc, and this runs on Go's
// threads while the program runs: a program that forks with _Fork (which
// takes none of malloc's locks) while one of them is inside malloc leaves
// its child with a lock nobody releases, and a child that then calls
// malloc or fork waits for ever. A path holding a NUL byte is EINVAL.
func goCString(path string) (*C.char, error) {
	p, err := syscall.BytePtrFromString(path)
	if err != nil {
		return nil, err
	}
	return (*C.char)(unsafe.Pointer(p)), nil
}

// fileMode is the mode of every file the library writes (traces, models,
// job summaries): 0600, or 0640 with IOPRED_GROUP_READABLE=1.
func fileMode() int { return int(C.iop_cfg.file_mode) }

// dirMode is the mode of the directories the library creates.
func dirMode() os.FileMode { return os.FileMode(C.iop_cfg.dir_mode) }

// privateOpen is openPrivate for safefile: the temporary files of models and
// job summaries stay out of the program's descriptor numbers too.
func privateOpen(name string, flag int, perm os.FileMode) (*os.File, error) {
	fd, err := openPrivate(name, flag, int(perm.Perm()))
	if err != nil {
		return nil, &os.PathError{Op: "create", Path: name, Err: err}
	}
	return os.NewFile(uintptr(fd), name), nil
}

// writePrivate writes a whole file through descriptors of iopred's own,
// never through a link planted at its name or its temporary name, so that
// no reader sees it half written.
func writePrivate(path string, b []byte) error {
	return safefile.WriteFileWith(path, b, os.FileMode(fileMode()), safefile.Options{Open: privateOpen})
}

// openPrivateFile is openPrivate for reading, as an *os.File.
// It never follows a link at the last component: every file read this way
// (a model, a key, a spill) is one the library writes, and a link planted
// at its name would feed it another user's file.
func openPrivateFile(path string) (*os.File, error) {
	fd, err := openPrivate(path, syscall.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// adopt remembers which file fd is.
func (t *traceFile) adopt(fd int) error {
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
	// close any more; open the trace again, but never through a link or
	// into a file that is not the user's own.
	fd, err := openPrivate(t.path, syscall.O_WRONLY|syscall.O_APPEND|syscall.O_NOFOLLOW, 0)
	if err == nil {
		if err = syscall.Fstat(fd, &st); err == nil && (st.Mode&syscall.S_IFMT != syscall.S_IFREG || int(st.Uid) != os.Geteuid()) {
			err = errors.New("not a regular file of this user")
		}
		if err != nil {
			syscall.Close(fd)
		}
	}
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
