package tracefmt

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestFileCache proves that FileCache loads a file once while it stays
// the same, again when it changes or another file is asked for, and keeps
// the load's error with its value.
func TestFileCache(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	for _, p := range []string{a, b} {
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	loads := 0
	load := func(p string) (int, error) {
		loads++
		if p == b {
			return 7, errors.New("bad b")
		}
		return loads, nil
	}
	var c FileCache[int]
	if v, err := c.Get(a, load); v != 1 || err != nil {
		t.Errorf("first get: %d, %v", v, err)
	}
	if v, _ := c.Get(a, load); v != 1 || loads != 1 {
		t.Errorf("second get: %d after %d loads", v, loads)
	}
	if v, err := c.Get(b, load); v != 7 || err == nil || loads != 2 {
		t.Errorf("other file: %d, %v after %d loads", v, err, loads)
	}
	if _, err := c.Get(b, load); err == nil || loads != 2 {
		t.Errorf("the error is not kept: %v after %d loads", err, loads)
	}
	if err := os.WriteFile(a, []byte("longer"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(a, time.Now(), time.Now().Add(time.Second))
	if v, _ := c.Get(a, load); v != 3 {
		t.Errorf("changed file: %d, want a new load", v)
	}
	if _, err := c.Get(filepath.Join(dir, "missing"), load); err == nil || loads != 3 {
		t.Errorf("missing file: %v after %d loads", err, loads)
	}
}
