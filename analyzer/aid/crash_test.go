package aid

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// The helper process: learns the whole simulated center into the
// knowledge base named by AID_CRASH_DIR; with AID_CRASH_PAUSE it stops
// (after writing a marker) just before switching the manifest.
func TestMain(m *testing.M) {
	if dir := os.Getenv("AID_CRASH_DIR"); dir != "" {
		if os.Getenv("AID_CRASH_PAUSE") != "" {
			beforeManifest = func() {
				os.WriteFile(filepath.Join(dir, "..", "marker"), nil, 0o644)
				time.Sleep(time.Hour)
			}
		}
		sl := simulate(nilTB{})
		_, err := Learn(t0ctx(), dir, LearnInput{Source: sl.log, SourceName: "sim", Jobs: sl.jobs, Now: time.Unix(0, 0)})
		if err != nil {
			os.Exit(3)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func helper(t *testing.T, dir string, pause bool) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run", "^$")
	cmd.Env = append(os.Environ(), "AID_CRASH_DIR="+dir)
	if pause {
		cmd.Env = append(cmd.Env, "AID_CRASH_PAUSE=1")
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd
}

// TestKilledLearnLeavesPreviousState proves the crash safety of the
// knowledge base: a learn killed with SIGKILL after writing its new files
// but before switching the manifest leaves the previous generation
// readable and unchanged, and the next learn completes and removes the
// dead one's files. Kills at random moments leave a readable generation.
func TestKilledLearnLeavesPreviousState(t *testing.T) {
	sl := simulate(t)
	root := t.TempDir()
	dir := filepath.Join(root, "kb")
	first := learn(t, dir, sl, time.Time{}, sl.res.Truth.Start.Add(24*time.Hour))
	want, _ := json.Marshal(first.Knowledge)

	cmd := helper(t, dir, true)
	marker := filepath.Join(root, "marker")
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(marker); err == nil {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the helper never reached the manifest switch")
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "state.2.json")); err != nil {
		t.Fatalf("the killed learn had not written its new state: %v", err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	kb, err := OpenKB(dir)
	if err != nil {
		t.Fatal(err)
	}
	if kb.Manifest.Generation != first.Generation {
		t.Fatalf("generation %d after the kill, want %d", kb.Manifest.Generation, first.Generation)
	}
	if _, err := kb.State(); err != nil {
		t.Fatal(err)
	}
	k, err := kb.Knowledge()
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := json.Marshal(k); string(got) != string(want) {
		t.Error("the knowledge after the kill is not the previous one")
	}
	next := learn(t, dir, sl, time.Time{}, time.Time{})
	if next.Generation != first.Generation+1 {
		t.Errorf("the next learn wrote generation %d", next.Generation)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		switch e.Name() {
		case manifestName, lockName, aggDir, "state.2.json", "apps.2.json":
		default:
			t.Errorf("file %s left behind", e.Name())
		}
	}

	// Kills at moments spread over a learn.
	for i, d := range []time.Duration{30, 120, 250, 400, 700} {
		dir := filepath.Join(root, "r", string(rune('a'+i)))
		learn(t, dir, sl, time.Time{}, sl.res.Truth.Start.Add(24*time.Hour))
		cmd := helper(t, dir, false)
		time.Sleep(d * time.Millisecond)
		cmd.Process.Kill()
		cmd.Wait()
		kb, err := OpenKB(dir)
		if err != nil {
			t.Fatalf("kill after %v: %v", d*time.Millisecond, err)
		}
		if _, err := kb.State(); err != nil {
			t.Fatalf("kill after %v: %v", d*time.Millisecond, err)
		}
		if _, err := kb.Knowledge(); err != nil {
			t.Fatalf("kill after %v: %v", d*time.Millisecond, err)
		}
		for _, day := range mustState(t, kb).Days {
			if _, _, _, _, err := readAgg(filepath.Join(dir, aggDir, day.File)); err != nil {
				t.Fatalf("kill after %v: %v", d*time.Millisecond, err)
			}
		}
	}
}

func mustState(t *testing.T, kb *KB) *State {
	s, err := kb.State()
	if err != nil {
		t.Fatal(err)
	}
	return s
}
