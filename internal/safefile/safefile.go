// Package safefile creates the files iopred writes so that no one else can
// choose what they overwrite: a new file is created with O_EXCL|O_NOFOLLOW
// (a planted symlink or an existing file makes the creation fail instead of
// being followed or truncated), under an unpredictable temporary name in the
// target's directory, and an existing file is replaced only by renaming that
// temporary over it, which replaces a link itself, never its target.
//
// A directory writable by others (a group project directory, a scratch area
// without the sticky bit) is then safe to write into: the worst a planted
// name can do is make a write fail.
package safefile

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// NewFlags are the flags of every file this package creates.
const NewFlags = os.O_WRONLY | os.O_CREATE | os.O_EXCL | syscall.O_NOFOLLOW | syscall.O_CLOEXEC

// TempPrefix starts the name of every temporary file, so that a directory's
// owner can recognise (and remove) those an interrupted writer left.
const TempPrefix = ".tmp."

// OpenFunc opens a file as os.OpenFile does. The preloaded library passes
// its own, which keeps the descriptor out of the traced program's way.
type OpenFunc func(name string, flag int, perm os.FileMode) (*os.File, error)

// Options change how a file is written. The zero value writes through
// os.OpenFile and does not sync.
type Options struct {
	// Open creates the temporary file; nil means os.OpenFile.
	Open OpenFunc
	// Sync flushes the file to stable storage before it is renamed into
	// place, and the directory after, for files that must survive a crash
	// whole (stores, knowledge bases).
	Sync bool
}

// File is a file being written under a temporary name. Commit puts it in
// place; Close without Commit removes it.
type File struct {
	*os.File
	path, tmp string
	sync      bool
	done      bool
}

// TempName returns an unpredictable temporary name beside path.
func TempName(path string) string {
	return filepath.Join(filepath.Dir(path), TempPrefix+filepath.Base(path)+"."+strings.ToLower(rand.Text()[:16]))
}

// Create starts writing path: a new temporary file with mode perm (less
// the umask) that Commit renames to path.
func Create(path string, perm os.FileMode) (*File, error) {
	return CreateWith(path, perm, Options{})
}

// CreateWith is Create with options.
func CreateWith(path string, perm os.FileMode, opt Options) (*File, error) {
	open := opt.Open
	if open == nil {
		open = os.OpenFile
	}
	if path == "" {
		return nil, &os.PathError{Op: "create", Path: path, Err: syscall.ENOENT}
	}
	var err error
	for range 10 {
		tmp := TempName(path)
		var f *os.File
		f, err = open(tmp, NewFlags, perm)
		if err == nil {
			return &File{File: f, path: path, tmp: tmp, sync: opt.Sync}, nil
		}
		if !errors.Is(err, fs.ErrExist) && !errors.Is(err, syscall.ELOOP) {
			break
		}
	}
	return nil, fmt.Errorf("create %s: %w", path, err)
}

// TempPath is the temporary file's name, for a writer that must open the
// file by name itself (SQLite): it writes there, and Commit renames it.
func (f *File) TempPath() string { return f.tmp }

// Name returns the final path, not the temporary one.
func (f *File) Name() string { return f.path }

// Commit closes the file and renames it to its path, atomically replacing
// what was there (a link is replaced, not followed).
func (f *File) Commit() error {
	if f.done {
		return fmt.Errorf("%s: already closed", f.path)
	}
	f.done = true
	var err error
	if f.sync {
		err = f.File.Sync()
	}
	err = errors.Join(err, f.File.Close())
	if err == nil {
		err = os.Rename(f.tmp, f.path)
	}
	if err != nil {
		os.Remove(f.tmp)
		return err
	}
	if f.sync {
		return SyncDir(filepath.Dir(f.path))
	}
	return nil
}

// Close abandons the file unless Commit put it in place: the temporary is
// removed and path left as it was. It is safe to defer after Commit.
func (f *File) Close() error {
	if f.done {
		return nil
	}
	f.done = true
	err := f.File.Close()
	os.Remove(f.tmp)
	return err
}

// WriteFile writes data to path through a temporary file renamed into
// place, as os.WriteFile does without its truncation of the old file.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	return WriteFileWith(path, data, perm, Options{})
}

// WriteFileWith is WriteFile with options.
func WriteFileWith(path string, data []byte, perm os.FileMode, opt Options) error {
	f, err := CreateWith(path, perm, opt)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Commit()
}

// WriteNew writes data to path only if nothing is there yet: the data is
// written under a temporary name, then linked to path, which fails with
// fs.ErrExist when path exists (even as a dangling link). Of several
// processes writing the same path at once, exactly one succeeds, and no
// reader ever sees the file half written.
func WriteNew(path string, data []byte, perm os.FileMode, opt Options) error {
	f, err := CreateWith(path, perm, opt)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if opt.Sync {
		if err := f.File.Sync(); err != nil {
			return err
		}
	}
	if err := os.Link(f.tmp, path); err != nil {
		return err
	}
	return nil
}

// CreateNew creates path itself, exclusively: for files that are written
// once under their final name and never replaced (traces). It fails with
// fs.ErrExist when anything, a link included, already has the name.
func CreateNew(path string, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(path, NewFlags, perm)
}

// OpenLock opens (creating it if needed) a lock file without following a
// link and without truncating it; it refuses anything but a regular file.
func OpenLock(path string, perm os.FileMode) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_CLOEXEC|syscall.O_NONBLOCK, perm)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = &os.PathError{Op: "open", Path: path, Err: errors.New("not a regular file")}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// SyncDir flushes a directory's entries (a rename into it) to stable
// storage; file systems that cannot sync a directory are not an error.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		return err
	}
	return nil
}
