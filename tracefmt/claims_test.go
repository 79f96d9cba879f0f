package tracefmt

import (
	"os"
	"path/filepath"
	"testing"
)

// TestIsFTIOFileLeavesRegisteredFormats proves that a file a registered
// format claims by its name is not taken for FTIO input even when it
// starts like FTIO's JSON (DFTracer's lines do), nor is a process of a
// multi-process file, while a plain JSON file still is.
func TestIsFTIOFileLeavesRegisteredFormats(t *testing.T) {
	dir := t.TempDir()
	claimed := filepath.Join(dir, "run.lines")
	plain := filepath.Join(dir, "run.json")
	for _, p := range []string{claimed, plain} {
		if err := os.WriteFile(p, []byte(`{"name":"read"}`+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		path string
		want FTIOFormat
	}{{claimed, ""}, {claimed + "#p1", ""}, {plain, FTIOJSON}} {
		got, err := IsFTIOFile(c.path)
		if err != nil || got != c.want {
			t.Errorf("IsFTIOFile(%s) = %q, %v; want %q", filepath.Base(c.path), got, err, c.want)
		}
	}
}
