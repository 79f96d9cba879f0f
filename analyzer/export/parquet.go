package export

import (
	"io"
	"path/filepath"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"

	"iopred/tracefmt"
)

// Row is one event as Parquet writes it: the fields `iopred events`
// prints, under the same names, and four that a table needs where a
// trace has them from context.
//
// Integer ids are signed 64-bit columns, which every reader (Spark has no
// unsigned types) takes as they are; context ids are below 2^53 and file
// ids below 2^32.
type Row struct {
	// Trace is the trace file's base name: it tells processes apart when
	// pids repeat across nodes.
	Trace   string `parquet:"trace,dict"`
	PID     int64  `parquet:"pid"`
	Rank    *int64 `parquet:"rank,optional"` // null outside MPI jobs
	Tid     int32  `parquet:"tid"`
	Layer   string `parquet:"layer,dict"`
	Op      string `parquet:"op,dict"`
	Path    string `parquet:"path,dict"`
	FileID  int64  `parquet:"file_id"`
	Offset  *int64 `parquet:"offset,optional"` // null for calls without one
	Size    int64  `parquet:"size"`
	Bytes   int64  `parquet:"bytes"`
	Ret     int64  `parquet:"ret"`
	StartNs int64  `parquet:"start_ns"` // since the trace's time anchor, as `iopred events`
	EndNs   int64  `parquet:"end_ns"`
	Ctx     int64  `parquet:"ctx"`
	Errno   int32  `parquet:"errno"`
	Aux     int64  `parquet:"aux"`
	Seq     int64  `parquet:"seq"`
	Parent  int64  `parquet:"parent"`
	// Collective is set for MPI-IO's collective calls.
	Collective bool `parquet:"collective"`
	// Dir is "read" or "write" when the event carries the application's
	// own bytes, "" otherwise (a POSIX call inside an MPI-IO call, a
	// nonblocking call whose bytes its completion carries): summing Bytes
	// by Dir counts every byte once, as `iopred summary` does.
	Dir string `parquet:"dir,dict"`
	// StartTime is the call's start on the wall clock (UTC), for joins
	// across processes and with other logs.
	StartTime time.Time `parquet:"start_time,timestamp(nanosecond:utc)"`
}

// ParquetOptions tune Parquet.
type ParquetOptions struct {
	// RowGroup is the number of rows per row group (0: 16,384); the
	// writer holds one row group in memory.
	RowGroup int64
	// Command is the command line, recorded in the file's metadata.
	Command string
}

// Parquet writes one Row per event of the traces, in trace order, to w,
// zstd-compressed, with the job's start (RFC 3339) in the file's
// key-value metadata as "job_start".
func Parquet(w io.Writer, traces []string, opt ParquetOptions) (Stats, error) {
	var st Stats
	start, err := jobStart(traces)
	if err != nil {
		return st, err
	}
	if opt.RowGroup <= 0 {
		opt.RowGroup = 1 << 14
	}
	options := []parquet.WriterOption{
		parquet.Compression(&zstd.Codec{Level: zstd.SpeedDefault}),
		parquet.MaxRowsPerRowGroup(opt.RowGroup),
		parquet.CreatedBy("iopred", "", ""),
		parquet.KeyValueMetadata("job_start", time.Unix(0, start).UTC().Format(time.RFC3339Nano)),
	}
	if opt.Command != "" {
		options = append(options, parquet.KeyValueMetadata("command", opt.Command))
	}
	pw := parquet.NewGenericWriter[Row](w, options...)
	rows := make([]Row, 0, 1024)
	flush := func() error {
		if len(rows) == 0 {
			return nil
		}
		_, err := pw.Write(rows)
		clear(rows) // drop the strings and pointers held
		rows = rows[:0]
		return err
	}
	for _, t := range traces {
		r, err := tracefmt.Open(t)
		if err != nil {
			return st, err
		}
		st.Traces++
		h := r.Header()
		name := filepath.Base(t)
		var rank *int64
		if h.Rank != nil {
			v := int64(*h.Rank)
			rank = &v
		}
		var flow tracefmt.DataFlow
		readErr, writeErr := eachRecord(r, func(rec *tracefmt.Record) error {
			if rec.Counters != nil {
				st.Skipped++
				return nil
			}
			e := rec.Event
			if e == nil {
				return nil
			}
			row := Row{Trace: name, PID: int64(h.PID), Rank: rank, Tid: e.Tid, Layer: string(e.Layer), Op: e.Op,
				Path: e.Path, FileID: int64(e.FileID), Size: e.Size, Bytes: e.Bytes, Ret: e.Ret,
				StartNs: e.StartNs, EndNs: e.EndNs, Ctx: int64(e.Ctx), Errno: e.Errno, Aux: e.Aux, Seq: e.Seq,
				Parent: e.Parent, StartTime: time.Unix(0, h.StartUnixNs+e.StartNs).UTC()}
			if row.Layer == "" {
				row.Layer = string(tracefmt.LayerOf(e.Op))
			}
			row.Collective = row.Layer == string(tracefmt.LayerMPIIO) && tracefmt.IsCollective(e.Op)
			if e.Offset != tracefmt.NoOffset {
				off := e.Offset
				row.Offset = &off
			}
			dir := flow.Of(e)
			st.addData(e, dir)
			switch dir {
			case tracefmt.Read:
				row.Dir = "read"
			case tracefmt.Write:
				row.Dir = "write"
			}
			st.Events++
			rows = append(rows, row)
			if len(rows) == cap(rows) {
				return flush()
			}
			return nil
		})
		r.Close()
		if writeErr != nil {
			return st, writeErr
		}
		if readErr != nil {
			st.Problems = append(st.Problems, problem(t, readErr))
		}
	}
	if err := flush(); err != nil {
		return st, err
	}
	if err := pw.Close(); err != nil {
		return st, err
	}
	return st, nil
}
