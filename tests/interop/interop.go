// Package interop locates the other tools' real files kept beside it
// (FTIO, Darshan, LMT, Lustre, job logs) for the tests of the readers. See
// README.md in this directory for what each file is and where it is from.
package interop

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Dir is this directory.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

// Path returns the path of a file or folder given relative to this
// directory ("lmt/snx11025_2018-01-28.sqlite3"), and fails the test when it
// is missing: these files are part of the repository.
func Path(t testing.TB, rel string) string {
	t.Helper()
	p := filepath.Join(Dir(), filepath.FromSlash(rel))
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("interop file missing from the repository: %v", err)
	}
	return p
}
