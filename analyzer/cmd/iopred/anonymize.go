package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"iopred/analyzer/job"
	"iopred/internal/safefile"
	"iopred/tracefmt"
	"iopred/tracefmt/anonymize"
)

func init() {
	register(&command{
		name:  "anonymize",
		usage: "DIR|TRACE... -o OUT [--key FILE]",
		summary: "copy traces into OUT with paths, arguments, host and program names replaced by keyed hashes " +
			"that keep equality (the analyses give the same figures)",
		run: runAnonymize,
	})
}

// runAnonymize writes one anonymized iopred trace per process of the
// inputs (iopred traces, spills, Darshan logs, DFTracer traces) into OUT.
func runAnonymize(args []string, stdout, stderr io.Writer) error {
	c := commands["anonymize"]
	fs := newFlagSet(c, stderr)
	out := fs.String("o", "", "write the anonymized traces into `DIR` (created if missing)")
	keyFlag := fs.String("key", "", "the key `file` (created 0600 with a random key if missing); default $"+anonymize.KeyEnv+", else ~/.config/iopred/anonymize.key. Keep it: the same key gives the same hashes, for traces anonymized later too")
	rest, err := parseFlagsAnywhere(fs, args)
	if err != nil {
		return err
	}
	if len(rest) == 0 || *out == "" {
		return errUsage
	}
	keyPath := *keyFlag
	if keyPath == "" {
		if keyPath, err = anonymize.DefaultKeyPath(); err != nil {
			return err
		}
	}
	key, err := anonymize.LoadKey(keyPath)
	if err != nil {
		return err
	}
	a := anonymize.New(key)
	names, err := tracefmt.Discover(rest...)
	if err != nil {
		return err
	}
	if len(names) == 0 {
		return fmt.Errorf("no traces in %s", strings.Join(rest, " "))
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	var errs []error
	for _, name := range names {
		dest, events, err := anonymizeTrace(a, name, *out)
		var te *tracefmt.TruncatedError
		switch {
		case errors.As(err, &te):
			fmt.Fprintf(stderr, "iopred anonymize: warning: %v\n", err)
		case err != nil:
			errs = append(errs, err)
		}
		if dest != "" {
			fmt.Fprintf(stdout, "%s: %d events\n", dest, events)
		}
	}
	var summaries int
	for _, in := range rest {
		if m, _ := filepath.Glob(filepath.Join(in, "*"+job.FileSuffix)); len(m) > 0 {
			summaries += len(m)
		}
	}
	if summaries > 0 {
		fmt.Fprintf(stderr, "iopred anonymize: %d job summaries (*%s) not copied: iopred summary computes the same job view from the anonymized traces\n", summaries, job.FileSuffix)
	}
	fmt.Fprintf(stderr, "key: %s\n", keyPath)
	return errors.Join(errs...)
}

// anonymizeTrace copies one process's trace into dir, anonymized. What
// was read before a fault is kept, as import keeps it.
func anonymizeTrace(a *anonymize.Anonymizer, name, dir string) (dest string, events int, err error) {
	s, err := tracefmt.Open(name)
	if err != nil {
		return "", 0, err
	}
	defer s.Close()
	h := s.Header()
	base := filepath.Base(name)
	if strings.HasSuffix(base, ".iopspill") {
		base = strings.TrimSuffix(base, ".iopspill")
	} else if f, _ := tracefmt.FormatOf(name); f != "" {
		base = importName(name)
	}
	dest = filepath.Join(dir, a.TraceName(base, h))
	if !strings.HasSuffix(dest, tracefmt.FileSuffix) {
		dest += tracefmt.FileSuffix
	}
	f, err := safefile.Create(dest, 0o666)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	w, err := tracefmt.NewWriter(f, a.Header(h), tracefmt.WriterOptions{})
	if err != nil {
		return "", 0, err
	}
	counting := countingStream{Stream: s, events: &events}
	readErr := a.Copy(w, counting)
	if err := w.Flush(); err != nil && readErr == nil {
		readErr = err
	}
	if err := f.Commit(); err != nil && readErr == nil {
		readErr = err
	}
	return dest, events, readErr
}

// countingStream counts the events a Stream yields.
type countingStream struct {
	tracefmt.Stream
	events *int
}

func (c countingStream) Each(fn func(tracefmt.Record) error) error {
	return c.Stream.Each(func(r tracefmt.Record) error {
		if r.Event != nil {
			*c.events++
		}
		return fn(r)
	})
}
