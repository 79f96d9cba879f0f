package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"iopred/internal/ordered"
	"iopred/internal/safefile"
	"iopred/tracefmt"
	"iopred/tracefmt/darshan"
	_ "iopred/tracefmt/dftracer" // registers DFTracer's .pfw and .pfw.gz with tracefmt
	_ "iopred/tracefmt/spill"    // registers libiopred's .iopspill files of forked children
)

func init() {
	register(&command{
		name:  "import",
		usage: "FORMAT INPUT... -o DIR [--jobs N]",
		summary: "convert other tools' traces (darshan: a Darshan log, one trace per rank; dftracer: .pfw/.pfw.gz files) " +
			"into iopred traces in DIR",
		run: runImport,
	})
}

// runImport writes one iopred trace per process of each input: DIR/<input
// name without its suffix>[.r<rank>|.shared].iopred.zst. Every command
// reads the inputs directly too; importing keeps a converted copy, which
// reads faster and can be merged with other traces.
func runImport(args []string, stdout, stderr io.Writer) error {
	c := commands["import"]
	fs := newFlagSet(c, stderr)
	out := fs.String("o", "", "write the traces into `DIR` (created if missing)")
	jobs := jobsFlag(fs)
	rest, err := parseFlagsAnywhere(fs, args)
	if err != nil {
		return err
	}
	if len(rest) < 2 || *out == "" {
		return errUsage
	}
	if err := checkJobs(*jobs); err != nil {
		return err
	}
	format, inputs := rest[0], rest[1:]
	if !slices.Contains(tracefmt.Formats(), format) {
		return fmt.Errorf("unknown format %q (known: %s)", format, strings.Join(tracefmt.Formats(), ", "))
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	// The inputs are checked first, in order; those before the first that
	// fails are imported, as one after another would import them.
	type task struct{ input, name string }
	var tasks []task
	var firstOf []int // the first task of each input checked
	var checkErr error
check:
	for _, in := range inputs {
		names, err := tracefmt.Discover(in)
		if err != nil {
			checkErr = err
			break
		}
		for _, name := range names {
			got, err := tracefmt.FormatOf(name)
			if err != nil {
				checkErr = err
				break check
			}
			if got != format {
				what := "an iopred trace"
				if got != "" {
					what = "a " + got + " file"
				}
				checkErr = fmt.Errorf("%s: %s, not %s", name, what, format)
				break check
			}
		}
		firstOf = append(firstOf, len(tasks))
		for _, name := range names {
			tasks = append(tasks, task{in, name})
		}
	}
	firstOf = append(firstOf, len(tasks))
	type imported struct {
		n   importCounts
		err error
	}
	var readErrs []error
	// The traces of one log share its cut: one warning, counted, rather
	// than one per rank.
	var warnings []string
	warned := map[string]int{}
	k := 0 // the input being reported
	startInput := func() {
		if format == "darshan" {
			// The log's own warnings: modules not decoded, out of memory.
			if l, _ := darshan.Open(inputs[k]); l != nil {
				for _, w := range l.Warnings {
					fmt.Fprintf(stderr, "iopred import: %s: %s\n", inputs[k], w)
				}
			}
		}
	}
	endInput := func() {
		for _, w := range warnings {
			if n := warned[w]; n > 1 {
				fmt.Fprintf(stderr, "iopred import: warning: %s (in %d of %d traces; the imported traces stay marked partial)\n", w, n, firstOf[k+1]-firstOf[k])
			} else {
				fmt.Fprintf(stderr, "iopred import: warning: %s (the imported trace stays marked partial)\n", w)
			}
		}
		warnings, warned = nil, map[string]int{}
	}
	// Inputs without traces are reported (their log's warnings) too.
	for k+1 < len(firstOf) && firstOf[k] == firstOf[k+1] {
		startInput()
		k++
	}
	// Two inputs of the same name write the same trace, the later one's
	// last: in parallel, the order of their writes would be a race.
	dests := map[string]bool{}
	for _, t := range tasks {
		d := importName(t.name)
		if dests[d] {
			*jobs = 1
		}
		dests[d] = true
	}
	ordered.Each(len(tasks), *jobs, func(i int) imported {
		n, err := importTrace(tasks[i].name, filepath.Join(*out, importName(tasks[i].name)))
		return imported{n, err}
	}, func(i int, r imported) {
		if i == firstOf[k] {
			startInput()
		}
		dest := filepath.Join(*out, importName(tasks[i].name))
		var te *tracefmt.TruncatedError
		switch {
		case errors.As(r.err, &te):
			if warned[r.err.Error()] == 0 {
				warnings = append(warnings, r.err.Error())
			}
			warned[r.err.Error()]++
		case r.err != nil:
			readErrs = append(readErrs, r.err)
		}
		if r.n.written && r.n.regions > 0 {
			fmt.Fprintf(stdout, "%s: %d events, %d counter records, %d regions\n", dest, r.n.events, r.n.counters, r.n.regions)
		} else if r.n.written {
			fmt.Fprintf(stdout, "%s: %d events, %d counter records\n", dest, r.n.events, r.n.counters)
		}
		if i+1 == firstOf[k+1] {
			endInput()
			k++
			for k+1 < len(firstOf) && firstOf[k] == firstOf[k+1] {
				startInput()
				k++
			}
		}
	})
	if checkErr != nil {
		return checkErr
	}
	return errors.Join(readErrs...)
}

// importName is the trace name of one process of an input: the input's
// name without its format's suffix, the process after a dot.
func importName(name string) string {
	base, proc, _ := strings.Cut(filepath.Base(name), "#")
	for _, s := range []string{".pfw.gz", ".pfw", ".darshan", ".gz", ".json"} {
		if strings.HasSuffix(base, s) {
			base = strings.TrimSuffix(base, s)
			break
		}
	}
	if proc != "" {
		base += "." + proc
	}
	return base + tracefmt.FileSuffix
}

type importCounts struct {
	written          bool
	events, counters int
	regions          int // spans of the application's own work
}

// importTrace copies the records of one trace into an iopred trace at
// dest. A source that ends early (cut, or short of records) still gives
// every record read, and a trace without footer, as a killed process
// leaves one; the error says why.
func importTrace(name, dest string) (n importCounts, err error) {
	s, err := tracefmt.Open(name)
	if err != nil {
		return n, err
	}
	defer s.Close()
	f, err := safefile.Create(dest, 0o666)
	if err != nil {
		return n, err
	}
	defer f.Close()
	w, err := tracefmt.NewWriter(f, s.Header(), tracefmt.WriterOptions{})
	if err != nil {
		return n, err
	}
	n.written = true
	readErr := s.Each(func(rec tracefmt.Record) error {
		switch {
		case rec.Context != nil:
			return w.Context(*rec.Context)
		case rec.File != nil:
			return w.File(*rec.File)
		case rec.Counters != nil:
			n.counters++
			return w.Counters(rec.Counters)
		case rec.Event != nil:
			n.events++
			return w.Event(rec.Event)
		case rec.Proc != nil:
			return w.Proc(*rec.Proc)
		case rec.Region != nil:
			n.regions++
			return w.Region(rec.Region)
		case rec.Footer != nil:
			return w.Close(*rec.Footer)
		}
		return nil
	})
	if err := w.Flush(); err != nil && readErr == nil {
		readErr = err
	}
	// What was read before a fault is kept, as the source held it.
	if err := f.Commit(); err != nil && readErr == nil {
		readErr = err
	}
	return n, readErr
}
