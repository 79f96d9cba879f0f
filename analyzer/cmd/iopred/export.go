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
		usage:   "--format perfetto|parquet|ftio [--predict=false] [--jobs N] -o FILE TRACE|DIR...",
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
	traces, err := tracefmt.Discover(paths...)
	if err != nil {
		return err
	}
	if err := tracefmt.CheckTimeResolved(traces...); err != nil {
		return err
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
	cmdline := "iopred export " + strings.Join(args, " ")
	var st export.Stats
	switch *format {
	case "perfetto":
		st, err = export.Perfetto(w, traces, export.PerfettoOptions{Predict: *predict, Command: cmdline, Jobs: *jobs})
	case "parquet":
		st, err = export.Parquet(w, traces, export.ParquetOptions{Command: cmdline})
	case "ftio":
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
