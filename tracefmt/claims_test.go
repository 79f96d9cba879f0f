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

// TestFormatOf proves that FormatOf names a registered format by a file's
// suffix or content, for the file and for a process of it, and names
// nothing for an iopred trace or an unclaimed file; and that Formats
// lists the registered format.
func TestFormatOf(t *testing.T) {
	dir := t.TempDir()
	byName := filepath.Join(dir, "a.lines")
	byContent := filepath.Join(dir, "b.txt")
	other := filepath.Join(dir, "c.txt")
	native := filepath.Join(dir, "d"+FileSuffix)
	for p, data := range map[string]string{byName: "p1 write 0 1\n", byContent: "#lines\np1 write 0 1\n", other: "hello\n", native: ""} {
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ path, want string }{{byName, "lines-test"}, {byName + "#p1", "lines-test"},
		{byContent, "lines-test"}, {other, ""}, {native, ""}} {
		if got, err := FormatOf(c.path); err != nil || got != c.want {
			t.Errorf("FormatOf(%s) = %q, %v; want %q", filepath.Base(c.path), got, err, c.want)
		}
	}
	found := false
	for _, n := range Formats() {
		found = found || n == "lines-test"
	}
	if !found {
		t.Errorf("Formats() = %v, without the test format", Formats())
	}
}
