package safefile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// plant makes dir/name a symlink to a victim file holding "victim" and
// returns the victim's path.
func plant(t *testing.T, dir, name string) string {
	t.Helper()
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("victim"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
	return victim
}

func checkVictim(t *testing.T, victim string) {
	t.Helper()
	b, err := os.ReadFile(victim)
	if err != nil || string(b) != "victim" {
		t.Fatalf("victim changed: %q, %v", b, err)
	}
}

// A link planted at the final name is replaced, never written through.
func TestWriteFileReplacesPlantedLink(t *testing.T) {
	dir := t.TempDir()
	victim := plant(t, dir, "out")
	if err := WriteFile(filepath.Join(dir, "out"), []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	checkVictim(t, victim)
	st, err := os.Lstat(filepath.Join(dir, "out"))
	if err != nil || !st.Mode().IsRegular() {
		t.Fatalf("out is not a regular file: %v %v", st, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "out")); string(b) != "new" {
		t.Fatalf("out holds %q", b)
	}
	leftovers(t, dir)
}

// A link planted at the temporary name (the attack on "<path>.<pid>.tmp")
// is refused by O_EXCL|O_NOFOLLOW: an opener that is always handed that
// name fails instead of following it.
func TestPlantedTempNameRefused(t *testing.T) {
	dir := t.TempDir()
	victim := plant(t, dir, "guessed.tmp")
	guessed := filepath.Join(dir, "guessed.tmp")
	open := func(name string, flag int, perm os.FileMode) (*os.File, error) {
		return os.OpenFile(guessed, flag, perm)
	}
	err := WriteFileWith(filepath.Join(dir, "out"), []byte("new"), 0o600, Options{Open: open})
	if !errors.Is(err, fs.ErrExist) {
		t.Fatalf("err = %v, want exist", err)
	}
	checkVictim(t, victim)
	if _, err := os.Lstat(filepath.Join(dir, "out")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("out written: %v", err)
	}
}

// Temporary names are not guessable: two names for one path differ.
func TestTempNamesDiffer(t *testing.T) {
	a, b := TempName("/d/model"), TempName("/d/model")
	if a == b || !strings.HasPrefix(filepath.Base(a), TempPrefix+"model.") {
		t.Fatalf("temp names %s %s", a, b)
	}
}

// CreateNew refuses a planted link, dangling or not, and an existing file.
func TestCreateNewRefuses(t *testing.T) {
	dir := t.TempDir()
	victim := plant(t, dir, "trace")
	if err := os.Symlink(filepath.Join(dir, "nowhere"), filepath.Join(dir, "dangling")); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"trace", "dangling"} {
		if f, err := CreateNew(filepath.Join(dir, name), 0o600); !errors.Is(err, fs.ErrExist) {
			f.Close()
			t.Errorf("%s: err = %v, want exist", name, err)
		}
	}
	checkVictim(t, victim)
	if _, err := os.Lstat(filepath.Join(dir, "nowhere")); err == nil {
		t.Error("the dangling link's target was created")
	}
}

// WriteNew leaves an existing file (or link) alone and reports it.
func TestWriteNew(t *testing.T) {
	dir := t.TempDir()
	victim := plant(t, dir, "key")
	if err := WriteNew(filepath.Join(dir, "key"), []byte("k"), 0o600, Options{}); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("err = %v", err)
	}
	checkVictim(t, victim)
	if err := WriteNew(filepath.Join(dir, "k2"), []byte("k"), 0o600, Options{}); err != nil {
		t.Fatal(err)
	}
	leftovers(t, dir)
}

// Close without Commit leaves the old content and no temporary.
func TestAbandon(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "report.html")
	os.WriteFile(path, []byte("old"), 0o644)
	f, err := Create(path, 0o666)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("half"))
	f.Close()
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Fatalf("old content lost: %q", b)
	}
	leftovers(t, dir)
}

// The mode is perm less the umask: 0600 stays private under 022 and 002,
// 0640 gives the group read, and a command's 0666 follows the umask.
func TestModesUnderUmask(t *testing.T) {
	cases := []struct {
		umask      int
		perm, want os.FileMode
	}{
		{0o022, 0o600, 0o600}, {0o002, 0o600, 0o600},
		{0o022, 0o640, 0o640}, {0o002, 0o640, 0o640},
		{0o022, 0o666, 0o644}, {0o002, 0o666, 0o664},
	}
	dir := t.TempDir()
	for _, c := range cases {
		old := syscall.Umask(c.umask)
		path := filepath.Join(dir, "f")
		err := WriteFile(path, []byte("x"), c.perm)
		newPath := filepath.Join(dir, "n")
		f, nerr := CreateNew(newPath, c.perm)
		syscall.Umask(old)
		if err != nil || nerr != nil {
			t.Fatal(err, nerr)
		}
		f.Close()
		for _, p := range []string{path, newPath} {
			st, _ := os.Stat(p)
			if st.Mode().Perm() != c.want {
				t.Errorf("umask %03o perm %03o: %s mode %03o, want %03o", c.umask, c.perm, filepath.Base(p), st.Mode().Perm(), c.want)
			}
		}
		os.Remove(newPath)
	}
}

// OpenLock neither follows a link nor truncates.
func TestOpenLock(t *testing.T) {
	dir := t.TempDir()
	victim := plant(t, dir, "lock")
	if f, err := OpenLock(filepath.Join(dir, "lock"), 0o600); err == nil {
		f.Close()
		t.Fatal("opened a lock through a link")
	}
	checkVictim(t, victim)
	p := filepath.Join(dir, "lock2")
	os.WriteFile(p, []byte("pid"), 0o600)
	f, err := OpenLock(p, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if b, _ := os.ReadFile(p); string(b) != "pid" {
		t.Fatalf("lock truncated: %q", b)
	}
}

func leftovers(t *testing.T, dir string) {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), TempPrefix) {
			t.Errorf("temporary left: %s", e.Name())
		}
	}
}
