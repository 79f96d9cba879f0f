package ftio

import (
	"errors"
	"fmt"
	"io"

	"iopred/analyzer/pathfilter"
	"iopred/tracefmt"
)

// Mode selects which requests make the signal.
type Mode string

// The request selections.
const (
	ModeWrite Mode = "write"
	ModeRead  Mode = "read"
	ModeBoth  Mode = "both"
)

// ParseMode checks a --mode value.
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case ModeWrite, ModeRead, ModeBoth:
		return Mode(s), nil
	}
	return "", fmt.Errorf("unknown mode %q (want write, read or both)", s)
}

func (m Mode) wants(write bool) bool {
	return m == ModeBoth || (m == ModeWrite) == write
}

// FTIOModes returns the FTIO modes a selection reads: the synchronous ones,
// as FTIO does by default (TMIO's asynchronous modes describe the same
// requests twice, as transferred and as required, so they are not added).
func (m Mode) FTIOModes() []string {
	switch m {
	case ModeWrite:
		return []string{"write_sync"}
	case ModeRead:
		return []string{"read_sync"}
	}
	return []string{"read_sync", "write_sync"}
}

// FileSource streams the requests of the given files: FTIO inputs (JSON,
// JSON lines, MessagePack; told apart by content) and iopred traces
// (directories expand to their traces). All files are merged into one
// application signal; iopred traces are placed on a common clock through
// their headers' monotonic anchors, and times are seconds since the
// earliest anchor. ftioModes overrides the FTIO modes read (nil: the
// mode's default).
func FileSource(paths []string, mode Mode, ftioModes []string) (Source, error) {
	srcs, err := FileSources(paths, mode, ftioModes)
	if err != nil {
		return nil, err
	}
	return func(fn func(Request) error) error {
		for _, src := range srcs {
			if err := src(fn); err != nil {
				return err
			}
		}
		return nil
	}, nil
}

// FileSources is FileSource with one Source per file, for AnalyzeSources
// to read in parallel. The requests on the paths pathfilter.Default
// excludes (the system's files, the MPI runtime's) are left out, as the
// job's signal leaves them out: a program's start-up reads of /etc and
// /proc, or Open MPI's writes to its session directory, are not the
// application's I/O and stretch the window the spectrum sees.
func FileSources(paths []string, mode Mode, ftioModes []string) ([]Source, error) {
	return FilteredFileSources(paths, mode, ftioModes, defaultFilter)
}

// defaultFilter is FileSources' filter; it is never modified.
var defaultFilter = pathfilter.Default()

// FilteredFileSources is FileSources leaving out the requests on the paths
// filter excludes (none when filter is nil). FTIO's inputs have no paths:
// all their requests are kept.
func FilteredFileSources(paths []string, mode Mode, ftioModes []string, filter *pathfilter.Filter) ([]Source, error) {
	return FileSourcesWith(paths, mode, ftioModes, SourceOptions{Filter: filter})
}

// SourceOptions choose what FileSourcesWith reads of iopred traces.
type SourceOptions struct {
	// Filter leaves out the requests on the paths it excludes (nil: none).
	Filter *pathfilter.Filter
	// Layer, when set, takes only that layer's records, as FTIO's choice
	// of a Darshan DXT log's POSIX or MPI-IO records: LayerPOSIX takes
	// the POSIX and stdio calls, those made inside MPI-IO calls too;
	// LayerMPIIO the MPI-IO calls. Unset, every byte counts once (the
	// MPI-IO calls, and the POSIX calls made outside them).
	Layer tracefmt.Layer
}

// FileSourcesWith is FileSources with the options given.
func FileSourcesWith(paths []string, mode Mode, ftioModes []string, so SourceOptions) ([]Source, error) {
	filter := so.Filter
	switch so.Layer {
	case "", tracefmt.LayerPOSIX, tracefmt.LayerMPIIO:
	default:
		return nil, fmt.Errorf("layer %q: want posix or mpiio", so.Layer)
	}
	files, err := tracefmt.Discover(paths...)
	if err != nil {
		return nil, err
	}
	if ftioModes == nil {
		ftioModes = mode.FTIOModes()
	}
	want := map[string]bool{}
	for _, m := range ftioModes {
		want[m] = true
	}
	type input struct {
		path string
		ftio bool
	}
	var inputs []input
	var base int64
	haveBase := false
	for _, p := range files {
		format, err := tracefmt.IsFTIOFile(p)
		if err != nil {
			return nil, err
		}
		if format != "" {
			inputs = append(inputs, input{p, true})
			continue
		}
		r, err := tracefmt.Open(p)
		if err != nil {
			return nil, fmt.Errorf("%s: neither FTIO input nor an iopred trace: %w", p, err)
		}
		h := r.Header()
		r.Close()
		if !haveBase || h.StartMonoNs < base {
			base, haveBase = h.StartMonoNs, true
		}
		inputs = append(inputs, input{p, false})
	}
	srcs := make([]Source, len(inputs))
	for i, in := range inputs {
		if !in.ftio {
			srcs[i] = func(fn func(Request) error) error { return iopredEvents(in.path, mode, base, filter, so.Layer, fn) }
			continue
		}
		// FTIO inputs are small next to iopred traces (TMIO aggregates
		// per rank and phase) and the JSON decoder holds each record
		// whole anyway, so they are parsed once and replayed from memory.
		var reqs []Request
		_, err := tracefmt.ReadFTIOFile(in.path, func(r tracefmt.FTIORequest) error {
			if want[r.Mode] {
				reqs = append(reqs, Request{Start: r.Start, End: r.End, Bandwidth: r.Bandwidth})
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		srcs[i] = Slice(reqs)
	}
	return srcs, nil
}

// iopredEvents streams the data requests of one iopred trace. A truncated
// trace contributes the events before its damaged tail.
func iopredEvents(path string, mode Mode, base int64, filter *pathfilter.Filter, layer tracefmt.Layer, fn func(Request) error) error {
	r, err := tracefmt.Open(path)
	if err != nil {
		return err
	}
	defer r.Close()
	if tr, ok := r.(*tracefmt.Reader); ok {
		// Each event becomes a Request before the next is read: one
		// shared event, no allocation per event.
		tr.ReuseEvents()
	}
	anchor := r.Header().StartMonoNs - base
	var flow tracefmt.DataFlow
	excluded := map[string]bool{}
	excludes := func(path string) bool {
		if filter == nil || path == "" {
			return false
		}
		x, ok := excluded[path]
		if !ok {
			x = filter.Excludes(path)
			excluded[path] = x
		}
		return x
	}
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return nil
		}
		var trunc *tracefmt.TruncatedError
		if errors.As(err, &trunc) {
			return nil
		}
		if err != nil {
			return err
		}
		e := rec.Event
		if e == nil || e.Errno != 0 {
			continue
		}
		// Every byte once: not the POSIX calls inside an MPI-IO call, and
		// a nonblocking MPI-IO call's bytes at its completion.
		dir := flow.Of(e)
		switch layer {
		case tracefmt.LayerPOSIX:
			dir = tracefmt.NoData
			if e.Layer == tracefmt.LayerPOSIX || e.Layer == tracefmt.LayerStdio {
				if tracefmt.IsRead(e.Op) {
					dir = tracefmt.Read
				} else if tracefmt.IsWrite(e.Op) {
					dir = tracefmt.Write
				}
			}
		case tracefmt.LayerMPIIO:
			if e.Layer != tracefmt.LayerMPIIO {
				dir = tracefmt.NoData
			}
		}
		// copy_file_range's event names the file it read; the same bytes
		// were written to the file Aux names (cp and cat copy this way).
		if id, ok := tracefmt.CopyTarget(e); ok && dir == tracefmt.Read && mode.wants(true) {
			if out, ok := r.Files()[id]; ok && !excludes(out.Path) {
				if err := fn(EventRequest(e, anchor)); err != nil {
					return err
				}
			}
		}
		if dir == tracefmt.NoData || !mode.wants(dir == tracefmt.Write) || excludes(e.Path) {
			continue
		}
		if err := fn(EventRequest(e, anchor)); err != nil {
			return err
		}
	}
}

// EventRequest turns an iopred event into a request; anchorNs is added to
// the event's times (the trace's clock anchor relative to the analysis
// origin). The bytes moved are Bytes, or Ret when Bytes is unset.
func EventRequest(e *tracefmt.Event, anchorNs int64) Request {
	b := e.Bytes
	if b == 0 && e.Ret > 0 {
		b = e.Ret
	}
	return requestOf(e.StartNs+anchorNs, e.EndNs+anchorNs, b)
}

func requestOf(startNs, endNs, bytes int64) Request {
	r := Request{Start: float64(startNs) / 1e9, End: float64(endNs) / 1e9}
	if endNs > startNs {
		r.Bandwidth = float64(bytes) / (r.End - r.Start)
	}
	return r
}

// AnalyzeFiles is the one-call analysis of trace files or directories
// (iopred traces and FTIO inputs, merged into one application signal), for
// programs and integration tests that want the period of a recorded run.
func AnalyzeFiles(paths []string, mode Mode, opt Options) (Result, error) {
	srcs, err := FileSources(paths, mode, nil)
	if err != nil {
		return Result{}, err
	}
	return AnalyzeSources(srcs, opt)
}
