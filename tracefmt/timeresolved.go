package tracefmt

import (
	"errors"
	"fmt"
	"io"
	"strings"
)

// NoEventsError reports traces that hold per-file counters but not a single
// event: a Darshan log recorded without DXT, or its import. Their totals
// make a summary; the time-resolved analyses (period, patterns, replay,
// events) have nothing to work on.
type NoEventsError struct {
	Traces []string // the traces read, as named to CheckTimeResolved
	Source string   // the header's Source of the first, when set
	// Partial is what the source lacks when it was cut short (the first
	// header's Partial), and Traced the modules of call traces its
	// source holds (a Darshan log's DXT_POSIX, DXT_MPIIO): traces were
	// recorded, and lost.
	Partial string
	Traced  []string
}

func (e *NoEventsError) Error() string {
	// The processes of one file are named by the file.
	var files []string
	for _, t := range e.Traces {
		if p, proc := splitProcess(t); proc != "" {
			t = p
		}
		if len(files) == 0 || files[len(files)-1] != t {
			files = append(files, t)
		}
	}
	what := strings.Join(files, ", ")
	if len(files) > 3 {
		what = fmt.Sprintf("%s and %d more", strings.Join(files[:3], ", "), len(files)-3)
	}
	src := ""
	if e.Source != "" {
		src = " (" + e.Source + ")"
	}
	if len(e.Traced) > 0 {
		why := "none of its calls could be read"
		if e.Partial != "" {
			why = "the log is partial (" + e.Partial + ") and none of its calls could be read"
		}
		return fmt.Sprintf("%s%s: the log holds %s, recorded with DXT, but %s: this analysis needs the time of each call; "+
			"'iopred summary' reads the counters", what, src, strings.Join(e.Traced, " and "), why)
	}
	return fmt.Sprintf("%s%s: per-file counters only, no event of any call: this analysis needs the time of each call; "+
		"'iopred summary' reads the counters. For a Darshan log, record the run with DXT (DXT_ENABLE_IO_TRACE=1)", what, src)
}

// CheckTimeResolved tells whether the time-resolved analyses have events
// to read in the traces at paths (directories expand as Discover expands
// them). It returns a *NoEventsError when no trace holds an event and some
// hold counters, nil otherwise. It reads each trace up to its first event;
// inputs that are not traces (an FTIO file, a missing path) are left to
// the analysis to report.
func CheckTimeResolved(paths ...string) error {
	names, err := Discover(paths...)
	if err != nil {
		return nil
	}
	counters := false
	source, partial := "", ""
	var traced []string
	for _, name := range names {
		if k, _ := IsFTIOFile(name); k != "" {
			return nil
		}
		s, err := Open(name)
		if err != nil {
			return nil
		}
		h := s.Header()
		if source == "" {
			source = h.Source
		}
		if partial == "" {
			partial = h.Partial
		}
		if h.Job != nil && traced == nil {
			for _, m := range h.Job.Modules {
				if strings.HasPrefix(m, "DXT_") {
					traced = append(traced, m)
				}
			}
		}
		found := errors.New("event found")
		err = s.Each(func(rec Record) error {
			switch {
			case rec.Event != nil:
				return found
			case rec.Counters != nil:
				counters = true
			}
			return nil
		})
		s.Close()
		if err == found {
			return nil
		}
		if err != nil && err != io.EOF {
			var te *TruncatedError
			if !errors.As(err, &te) {
				return nil
			}
		}
	}
	if !counters {
		return nil
	}
	return &NoEventsError{Traces: names, Source: source, Partial: partial, Traced: traced}
}
