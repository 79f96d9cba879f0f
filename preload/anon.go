package main

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"iopred/analyzer/job"
	"iopred/internal/safefile"
	"iopred/tracefmt"
	"iopred/tracefmt/anonymize"
)

// anon hashes the names the process's files hold (the trace's paths,
// arguments, host, program and module paths, the job summary's program
// and paths) when IOPRED_ANONYMIZE=1; nil otherwise. The model keeps the
// real paths: the prediction API answers the program with them.
var anon *anonymize.Anonymizer

// startAnonymizing reads IOPRED_ANONYMIZE and the key. A trace is not
// written at all when the key cannot be had: it would hold the names.
func startAnonymizing() error {
	switch v := os.Getenv("IOPRED_ANONYMIZE"); v {
	case "", "0":
		return nil
	case "1":
	default:
		// The safe side: a user who set it meant to hide the names.
		fmt.Fprintf(os.Stderr, "iopred: IOPRED_ANONYMIZE=%s is not 0 or 1; anonymizing\n", v)
	}
	path, err := anonymize.DefaultKeyPath()
	if err != nil {
		return fmt.Errorf("IOPRED_ANONYMIZE: %w", err)
	}
	key, err := anonymize.LoadKeyWith(path, anonymize.KeyIO{Create: safefile.Options{Open: privateOpen}, Read: readPrivate})
	if err != nil {
		return fmt.Errorf("IOPRED_ANONYMIZE: %w", err)
	}
	anon = anonymize.New(key)
	return nil
}

func anonPath(p string) string {
	if anon == nil {
		return p
	}
	return anon.Path(p)
}

func anonContext(c tracefmt.Context) tracefmt.Context {
	if anon == nil {
		return c
	}
	return anon.Context(c)
}

func anonHeader(h tracefmt.Header) tracefmt.Header {
	if anon == nil {
		return h
	}
	return anon.Header(h)
}

// anonSummary hashes the job summary's names as the traces' are.
func anonSummary(s *job.Summary) {
	if anon == nil {
		return
	}
	s.Program = anon.Path(s.Program)
	for i := range s.Patterns {
		s.Patterns[i].Path = anon.Path(s.Patterns[i].Path)
	}
}

// anonCopy rewrites a whole trace (a converted spill) with its names
// hashed.
func anonCopy(dst io.Writer, trace []byte, name string) error {
	r, err := tracefmt.NewReader(bytes.NewReader(trace), name)
	if err != nil {
		return err
	}
	w, err := tracefmt.NewWriter(dst, anon.Header(r.Header()), tracefmt.WriterOptions{})
	if err != nil {
		return err
	}
	if err := anon.Copy(w, r); err != nil {
		return err
	}
	return w.Flush()
}
