package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"iopred/analyzer/export"
	"iopred/analyzer/ftio"
	"iopred/internal/safefile"
	"iopred/tracefmt"
)

func init() {
	register(&command{
		name:    "export",
		usage:   "--format perfetto|parquet|ftio [--predict=false] [--jobs N] [--mpi] -o FILE TRACE|DIR...",
		summary: "write the traces as a Perfetto/Chrome trace (JSON), a Parquet table of events, or FTIO's JSON lines input",
		run:     runExport,
	})
}

func runExport(args []string, stdout, stderr io.Writer) error {
	c := commands["export"]
	fs := newFlagSet(c, stderr)
	format := fs.String("format", "", "`perfetto` (Chrome trace-event JSON for ui.perfetto.dev), `parquet` (one row per event) or `ftio` (FTIO's JSON lines: read_sync and write_sync requests)")
	out := fs.String("o", "", "write to `FILE` (- for standard output)")
	predict := fs.Bool("predict", true, "perfetto: run the predictor and show its guess of each next call as an instant event")
	jobs := jobsFlag(fs)
	useMPI := mpiFlag(fs)
	paths, err := parseFlagsAnywhere(fs, args)
	if err != nil {
		return err
	}
	if err := checkJobs(*jobs); err != nil {
		return err
	}
	known := *format == "perfetto" || *format == "parquet" || *format == "ftio"
	if len(paths) == 0 || *out == "" || !known {
		if *format != "" && !known {
			fmt.Fprintf(stderr, "iopred export: unknown --format %q\n", *format)
		}
		return errUsage
	}
	if *useMPI && *format != "perfetto" {
		return fmt.Errorf("--mpi spreads --format perfetto only, not %s", *format)
	}
	cmdline := "iopred export " + strings.Join(args, " ")
	var m *mpiRun
	if *useMPI {
		// The document names the command that makes it alone.
		cmdline = "iopred export " + strings.Join(withoutFlag(args, "mpi"), " ")
		if m, err = startMPI(); err != nil {
			return err
		}
		defer m.finish()
	}
	traces, err := tracefmt.Discover(paths...)
	if err == nil {
		err = tracefmt.CheckTimeResolved(traces...)
	}
	if err != nil && m == nil {
		return err
	}
	popt := export.PerfettoOptions{Predict: *predict, Command: cmdline, Jobs: *jobs}
	var parts []*export.PerfettoPart
	if m != nil {
		if parts, err = perfettoMPI(m, traces, popt, err); err != nil || !m.root() {
			return err // rank 0 writes
		}
	}
	var w io.Writer = stdout
	var f *safefile.File
	if *out != "-" {
		if f, err = safefile.Create(*out, 0o666); err != nil {
			return err
		}
		defer f.Close() // a partial file would pass for an export
		w = f
	}
	var st export.Stats
	switch {
	case parts != nil:
		st, err = export.WritePerfettoParts(w, parts, popt)
	case *format == "perfetto":
		st, err = export.Perfetto(w, traces, popt)
	case *format == "parquet":
		st, err = export.Parquet(w, traces, export.ParquetOptions{Command: cmdline})
	case *format == "ftio":
		var fst ftio.ExportStats
		fst, err = ftio.WriteJSONLines(w, traces)
		if err == nil && f != nil {
			fmt.Fprintf(stderr, "%s: %d read and %d write requests in %d lines (FTIO's JSON lines)\n", *out, fst.Reads, fst.Writes, fst.Lines)
		}
		st.Traces = -1
	}
	if err != nil {
		return err
	}
	if f != nil {
		if err := f.Commit(); err != nil {
			return err
		}
	}
	for _, p := range st.Problems {
		fmt.Fprintf(stderr, "iopred export: warning: %s\n", p)
	}
	if f != nil && st.Traces >= 0 {
		fmt.Fprintf(stderr, "%s: %d traces, %d events, %d bytes read, %d bytes written", *out, st.Traces, st.Events, st.BytesRead, st.BytesWritten)
		if st.Predictions > 0 {
			fmt.Fprintf(stderr, ", %d predictions (%d right)", st.Predictions, st.Hits)
		}
		if st.Skipped > 0 {
			fmt.Fprintf(stderr, ", %d per-file counters records left out (they have no time)", st.Skipped)
		}
		fmt.Fprintln(stderr)
	}
	if len(st.Problems) > 0 {
		return errors.New("some traces could not be read to their end; what they held is exported")
	}
	return nil
}

// perfettoMPI renders this rank's share of the traces (or passes on why it
// cannot) and gathers every rank's part at rank 0, in the order of the
// traces; the other ranks get nil.
func perfettoMPI(m *mpiRun, traces []string, opt export.PerfettoOptions, err error) ([]*export.PerfettoPart, error) {
	var parts [][]byte
	if err == nil {
		lo, hi := m.share(len(traces))
		var pp *export.PerfettoPart
		if pp, err = export.PerfettoShare(traces, lo, hi, opt); err == nil {
			var b []byte
			b, err = pp.Encode()
			parts = [][]byte{b}
		}
	}
	all, err := m.gather(parts, err)
	if err != nil || !m.root() {
		return nil, err
	}
	out := make([]*export.PerfettoPart, len(all))
	for r, ps := range all {
		if len(ps) != 1 {
			return nil, fmt.Errorf("MPI rank %d sent %d parts, not 1", r, len(ps))
		}
		if out[r], err = export.DecodePerfettoPart(ps[0]); err != nil {
			return nil, fmt.Errorf("MPI rank %d: %w", r, err)
		}
		all[r] = nil
	}
	return out, nil
}
