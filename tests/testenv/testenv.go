// Package testenv is what the integration tests under tests/ share: where
// the built library is, the tools .ci/run installs, compiling a test
// program and running a program with a deadline.
package testenv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// RepoRoot is the repository's top directory.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

var (
	buildOnce sync.Once
	buildErr  error
)

// Library returns the path of build/libiopred.so, running make in the
// repository first when the library or the command is missing.
func Library(t testing.TB) string {
	t.Helper()
	root := RepoRoot()
	lib := filepath.Join(root, "build", "libiopred.so")
	buildOnce.Do(func() {
		_, errLib := os.Stat(lib)
		_, errCmd := os.Stat(filepath.Join(root, "build", "iopred"))
		if errLib == nil && errCmd == nil {
			return
		}
		cmd := exec.Command("make")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("make: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return lib
}

// Tool finds a program that .ci/run installs. A missing tool fails the
// test, unless IOPRED_SKIP_MISSING_TOOLS=1 (for a quick local loop only).
func Tool(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("IOPRED_SKIP_MISSING_TOOLS") == "1" {
			t.Skipf("%s not installed", name)
		}
		t.Fatalf("%s not installed (.ci/run installs it)", name)
	}
	return p
}

// CompileC builds a C program from the test's testdata directory into a
// temporary directory.
func CompileC(t testing.TB, src string, extra ...string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), strings.TrimSuffix(filepath.Base(src), filepath.Ext(src)))
	args := append([]string{"-O2", "-o", out, filepath.Join("testdata", src)}, extra...)
	if b, err := exec.Command(Tool(t, "gcc"), args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc %s: %v\n%s", src, err, b)
	}
	return out
}

// Result is what a program did: its output streams and exit status.
type Result struct {
	Stdout, Stderr string
	Code           int
}

// Run runs a program with extra environment in dir (the test's directory
// when empty), failing the test if it runs longer than two minutes.
func Run(t testing.TB, env []string, dir, prog string, args ...string) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Dir = dir
	// Children that outlive a killed program keep its pipes open: stop
	// waiting for them too, so a hang fails the test instead of stalling it.
	cmd.WaitDelay = 5 * time.Second
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%s %v: hung (killed after 120 s)", prog, args)
	}
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("%s %v: %v", prog, args, err)
	}
	return Result{out.String(), errb.String(), code}
}

// Traced runs a program under the library with its traces in traceDir.
func Traced(t testing.TB, traceDir string, env []string, dir, prog string, args ...string) Result {
	t.Helper()
	env = append([]string{"LD_PRELOAD=" + Library(t), "IOPRED_DIR=" + traceDir}, env...)
	return Run(t, env, dir, prog, args...)
}
