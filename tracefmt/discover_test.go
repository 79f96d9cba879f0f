package tracefmt

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestDiscover(t *testing.T) {
	// Directories expand to their trace files, sorted; files stay as given
	// and in order; a directory without traces or a missing path is an error.
	dir := t.TempDir()
	for _, n := range []string{"b.2" + FileSuffix, "a.1" + FileSuffix, "notes.txt", "c.zst"} {
		os.WriteFile(filepath.Join(dir, n), nil, 0o644)
	}
	os.Mkdir(filepath.Join(dir, "sub"+FileSuffix), 0o755)
	empty := t.TempDir()
	lone := filepath.Join(empty, "x.bin")
	os.WriteFile(lone, nil, 0o644)
	got, err := Discover(lone, dir)
	want := []string{lone, filepath.Join(dir, "a.1"+FileSuffix), filepath.Join(dir, "b.2"+FileSuffix)}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("Discover = %v, %v; want %v", got, err, want)
	}
	if _, err := Discover(empty); err == nil {
		t.Error("a directory without traces gave no error")
	}
	if _, err := Discover(filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing path gave no error")
	}
}

func TestOps(t *testing.T) {
	// The layer and data-movement classes of the calls iopred records.
	cases := []struct {
		op          string
		layer       Layer
		read, write bool
	}{
		{"pwrite64", LayerPOSIX, false, true},
		{"preadv2", LayerPOSIX, true, false},
		{"copy_file_range", LayerPOSIX, true, false},
		{"lseek", LayerPOSIX, false, false},
		{"fwrite", LayerStdio, false, true},
		{"fgets", LayerStdio, true, false},
		{"fseeko64", LayerStdio, false, false},
		{"MPI_File_write_at_all", LayerMPIIO, false, true},
		{"MPI_File_iread", LayerMPIIO, true, false},
		{"MPI_File_open", LayerMPIIO, false, false},
	}
	for _, c := range cases {
		if LayerOf(c.op) != c.layer || IsRead(c.op) != c.read || IsWrite(c.op) != c.write || IsData(c.op) != (c.read || c.write) {
			t.Errorf("%s: layer %s read %v write %v", c.op, LayerOf(c.op), IsRead(c.op), IsWrite(c.op))
		}
	}
}

func TestIsCollective(t *testing.T) {
	// The collective MPI calls are the ones every rank makes together:
	// the _all/_ordered data calls and the file-wide operations; the
	// independent calls, completions and non-MPI calls are not.
	cases := map[string]bool{
		"MPI_File_write_at_all":      true,
		"MPI_File_read_all_begin":    true,
		"MPI_File_write_ordered_end": true,
		"MPI_File_iwrite_all":        true,
		"MPI_File_open":              true,
		"MPI_File_set_view":          true,
		"MPI_File_seek_shared":       true,
		"MPI_Finalize":               true,
		"MPI_File_write_at":          false,
		"MPI_File_write_shared":      false,
		"MPI_File_seek":              false,
		"MPI_File_delete":            false,
		"MPI_Waitall":                false,
		"MPI_Testall":                false,
		"write_all":                  false,
		"pwrite":                     false,
	}
	for op, want := range cases {
		if got := IsCollective(op); got != want {
			t.Errorf("IsCollective(%q) = %v, want %v", op, got, want)
		}
	}
}
