// Package export writes traces in the formats of other tools, streaming:
// each trace is read once, record by record, and what is written leaves
// memory as it goes, so a trace of millions of events costs no more memory
// than one of a thousand.
//
//   - Perfetto writes Chrome's trace-event JSON, which ui.perfetto.dev and
//     chrome://tracing open: a process per trace, a track per thread, each
//     call a slice with its file, offset, size and bytes, the predictor's
//     guess of the next call an instant event.
//   - Parquet writes one typed row per event, the columns of `iopred
//     events`, for DuckDB, pandas, Polars and Spark.
//
// Both read every trace format package tracefmt reads. Records without a
// time (a Darshan log's counters, which have no DXT segments) cannot be
// placed on a timeline or in a row of calls; they are counted in
// Stats.Skipped.
package export

import (
	"errors"
	"fmt"
	"io"

	"iopred/tracefmt"
)

// Stats counts what an export wrote, so that a caller can check it
// against `iopred summary` of the same traces (every path kept).
type Stats struct {
	Traces int `json:"traces"`
	// Events are the calls exported: the Parquet rows, the Perfetto slices.
	Events uint64 `json:"events"`
	// BytesRead and BytesWritten are the application's own data, every
	// byte counted once as the summary counts it (tracefmt.DataFlow).
	BytesRead    int64 `json:"bytes_read"`
	BytesWritten int64 `json:"bytes_written"`
	// Layers is each layer's own view (posix, mpiio, stdio): the bytes its
	// calls moved, a POSIX call inside an MPI-IO call included, as the
	// summary's layers count them.
	Layers map[string]*LayerBytes `json:"layers,omitempty"`
	// Predictions are the instant events of the predictor's guesses, Hits
	// those whose call and context were the next call's.
	Predictions uint64 `json:"predictions,omitempty"`
	Hits        uint64 `json:"hits,omitempty"`
	// Regions are the spans of the application's own work exported (a
	// DFTracer trace's functions, epochs and steps).
	Regions uint64 `json:"regions,omitempty"`
	// Skipped counts the records that have no time (per-file counters).
	Skipped uint64 `json:"skipped,omitempty"`
	// Problems lists the traces that could not be read to their end; what
	// they held up to the fault is exported.
	Problems []string `json:"problems,omitempty"`
}

// add adds the figures of the traces exported after st's.
func (st *Stats) add(o *Stats) {
	st.Traces += o.Traces
	st.Events += o.Events
	st.BytesRead += o.BytesRead
	st.BytesWritten += o.BytesWritten
	for l, v := range o.Layers {
		if st.Layers == nil {
			st.Layers = map[string]*LayerBytes{}
		}
		w := st.Layers[l]
		if w == nil {
			w = &LayerBytes{}
			st.Layers[l] = w
		}
		w.Calls += v.Calls
		w.BytesRead += v.BytesRead
		w.BytesWritten += v.BytesWritten
	}
	st.Predictions += o.Predictions
	st.Hits += o.Hits
	st.Regions += o.Regions
	st.Skipped += o.Skipped
	st.Problems = append(st.Problems, o.Problems...)
}

// LayerBytes is what one layer's calls moved.
type LayerBytes struct {
	Calls        uint64 `json:"calls"`
	BytesRead    int64  `json:"bytes_read"`
	BytesWritten int64  `json:"bytes_written"`
}

// addLayer counts an exported event in its layer's view; dir is the
// direction of its own data (tracefmt.DataFlow), which in MPI-IO puts a
// nonblocking call's bytes on its completion.
func (st *Stats) addLayer(e *tracefmt.Event, dir tracefmt.Direction) {
	layer := layerOf(e)
	if st.Layers == nil {
		st.Layers = map[string]*LayerBytes{}
	}
	l := st.Layers[string(layer)]
	if l == nil {
		l = &LayerBytes{}
		st.Layers[string(layer)] = l
	}
	l.Calls++
	if e.Bytes <= 0 {
		return
	}
	if layer != tracefmt.LayerMPIIO {
		// A call beneath MPI-IO moved its bytes in its own layer's view.
		switch {
		case tracefmt.IsRead(e.Op):
			dir = tracefmt.Read
		case tracefmt.IsWrite(e.Op):
			dir = tracefmt.Write
		}
	}
	switch dir {
	case tracefmt.Read:
		l.BytesRead += e.Bytes
	case tracefmt.Write:
		l.BytesWritten += e.Bytes
	}
}

// addData counts an exported event's bytes, as the summary counts them:
// dir is the direction of its own data, and a copy_file_range's bytes,
// read from its event's file, were also written into the file in Aux.
func (st *Stats) addData(e *tracefmt.Event, dir tracefmt.Direction) {
	st.addLayer(e, dir)
	switch dir {
	case tracefmt.Read:
		st.BytesRead += max(e.Bytes, 0)
	case tracefmt.Write:
		st.BytesWritten += max(e.Bytes, 0)
	}
	if _, ok := tracefmt.CopyTarget(e); ok && e.Bytes > 0 {
		st.BytesWritten += e.Bytes
		st.Layers[string(layerOf(e))].BytesWritten += e.Bytes
	}
}

func layerOf(e *tracefmt.Event) tracefmt.Layer {
	if e.Layer == "" {
		return tracefmt.LayerOf(e.Op)
	}
	return e.Layer
}

// jobStart is the earliest trace's time anchor, the zero of every time
// the exports write relative to the job. Traces without an anchor count
// as starting with the job.
func jobStart(traces []string) (int64, error) {
	var start int64
	for _, t := range traces {
		r, err := tracefmt.Open(t)
		if err != nil {
			return 0, err
		}
		h := r.Header()
		r.Close()
		if h.StartUnixNs > 0 && (start == 0 || h.StartUnixNs < start) {
			start = h.StartUnixNs
		}
	}
	return start, nil
}

// eachRecord calls fn with every record left in r, in order, and returns
// the error that stopped it. A truncated or corrupt trace ends the loop
// with its error, which the caller records as a problem, not a failure:
// what was read before the fault is exported.
func eachRecord(r tracefmt.Stream, fn func(*tracefmt.Record) error) (readErr, writeErr error) {
	// The reader's Each would mix its errors with fn's: a fault in the
	// trace is a problem to report, a fault in the output stops the export.
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return nil, nil
		}
		if err != nil {
			return err, nil
		}
		if err := fn(&rec); err != nil {
			return nil, err
		}
	}
}

// problem turns a read error into the line Stats.Problems keeps.
func problem(trace string, err error) string {
	var te *tracefmt.TruncatedError
	if errors.As(err, &te) {
		return fmt.Sprintf("%s: truncated: %v", trace, err)
	}
	return fmt.Sprintf("%s: %v", trace, err)
}
