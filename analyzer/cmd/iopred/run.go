package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

func init() {
	c := &command{
		name:    "run",
		usage:   "[--dir DIR] [--lib PATH] [--depth N] [--all-fds] -- PROGRAM [ARGS...]",
		summary: "run a program under libiopred.so (sets LD_PRELOAD and IOPRED_DIR, then execs it)",
	}
	c.run = func(args []string, stdout, stderr io.Writer) error {
		fs := newFlagSet(c, stderr)
		dir := fs.String("dir", "", "directory for the traces (default: IOPRED_DIR, else the current directory)")
		lib := fs.String("lib", "", "path of libiopred.so (default: IOPRED_LIB, else next to this command, else ../lib)")
		depth := fs.Int("depth", -1, "call-stack depth of context symbols (0 turns capture off; default 16)")
		allFDs := fs.Bool("all-fds", false, "also record pipes, sockets and terminals")
		if err := fs.Parse(args); err != nil {
			return err
		}
		prog := fs.Args()
		if len(prog) == 0 {
			return errUsage
		}
		libPath, err := findLibrary(*lib)
		if err != nil {
			return err
		}
		env := os.Environ()
		env = setEnv(env, "LD_PRELOAD", prependList(os.Getenv("LD_PRELOAD"), libPath))
		if *dir != "" {
			abs, err := filepath.Abs(*dir)
			if err != nil {
				return err
			}
			// The traces hold command lines and paths: their directory is
			// private, as the library makes it (group-readable on request).
			mode := os.FileMode(0o700)
			if os.Getenv("IOPRED_GROUP_READABLE") == "1" {
				mode = 0o750
			}
			if err := os.MkdirAll(abs, mode); err != nil {
				return err
			}
			env = setEnv(env, "IOPRED_DIR", abs)
		}
		if *depth >= 0 {
			env = setEnv(env, "IOPRED_CONTEXT_DEPTH", fmt.Sprint(*depth))
		}
		if *allFDs {
			env = setEnv(env, "IOPRED_ALL_FDS", "1")
		}
		path, err := exec.LookPath(prog[0])
		if err != nil {
			return err
		}
		// exec replaces iopred: the program keeps its pid, signals and exit
		// status, as if it had been started directly.
		return syscall.Exec(path, prog, env)
	}
	register(c)
}

// findLibrary locates libiopred.so.
func findLibrary(flagValue string) (string, error) {
	candidates := []string{flagValue, os.Getenv("IOPRED_LIB")}
	if self, err := os.Executable(); err == nil {
		if real, err := filepath.EvalSymlinks(self); err == nil {
			self = real
		}
		d := filepath.Dir(self)
		candidates = append(candidates, filepath.Join(d, "libiopred.so"), filepath.Join(d, "..", "lib", "libiopred.so"))
	}
	for _, c := range candidates {
		if c == "" {
			continue
		}
		if st, err := os.Stat(c); err == nil && !st.IsDir() {
			return filepath.Abs(c)
		}
	}
	return "", errors.New("libiopred.so not found: give --lib or set IOPRED_LIB")
}

func prependList(list, item string) string {
	if list == "" {
		return item
	}
	return item + ":" + list
}

func setEnv(env []string, key, value string) []string {
	prefix := key + "="
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, prefix) {
			out = append(out, kv)
		}
	}
	return append(out, prefix+value)
}
