package export

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"iopred/tracefmt"
)

// readParquet reads a Parquet file with Apache Arrow's Go implementation,
// which shares no code with the writer: the rows as maps from column name
// to value (nil for null), the Arrow schema and the file's key-value
// metadata.
func readParquet(t *testing.T, b []byte) ([]map[string]any, *arrow.Schema, map[string]string) {
	t.Helper()
	pf, err := file.NewParquetReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("arrow: %v", err)
	}
	defer pf.Close()
	meta := map[string]string{}
	kv := pf.MetaData().KeyValueMetadata()
	for i, k := range kv.Keys() {
		meta[k] = kv.Values()[i]
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatalf("arrow: %v", err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatalf("arrow: %v", err)
	}
	defer tbl.Release()
	rows := make([]map[string]any, tbl.NumRows())
	for i := range rows {
		rows[i] = map[string]any{}
	}
	for c := 0; c < int(tbl.NumCols()); c++ {
		col := tbl.Column(c)
		row := 0
		for _, chunk := range col.Data().Chunks() {
			for i := 0; i < chunk.Len(); i++ {
				var v any
				if !chunk.IsNull(i) {
					switch a := chunk.(type) {
					case *array.Int64:
						v = a.Value(i)
					case *array.Int32:
						v = a.Value(i)
					case *array.String:
						v = a.Value(i)
					case *array.Boolean:
						v = a.Value(i)
					case *array.Timestamp:
						v = a.Value(i).ToTime(arrow.Nanosecond)
					default:
						t.Fatalf("column %s: arrow type %s", col.Name(), chunk.DataType())
					}
				}
				rows[row][col.Name()] = v
				row++
			}
		}
	}
	return rows, tbl.Schema(), meta
}

// The Parquet file of a small MPI-IO job, read by Apache Arrow, has one
// row per event with every field of the event, typed; null offsets and
// ranks where the trace has none; the bytes by dir equal the summary's;
// the job's start in its metadata.
func TestParquetJob(t *testing.T) {
	_, traces := jobTraces(t)
	var buf bytes.Buffer
	st, err := Parquet(&buf, traces, ParquetOptions{RowGroup: 4, Command: "iopred export"})
	if err != nil {
		t.Fatal(err)
	}
	rows, schema, meta := readParquet(t, buf.Bytes())
	events, read, written := summaryCounts(t, traces)
	if uint64(len(rows)) != events || st.Events != events || st.BytesRead != read || st.BytesWritten != written || len(st.Problems) != 1 {
		t.Errorf("%d rows, stats %+v; the summary counts %d events, %d bytes read, %d written", len(rows), st, events, read, written)
	}
	checkLayers(t, traces, st)
	byDir := map[any]int64{}
	for _, r := range rows {
		byDir[r["dir"]] += r["bytes"].(int64)
	}
	if byDir["read"] != read || byDir["write"] != written {
		t.Errorf("bytes by dir %v; the summary: %d read, %d written", byDir, read, written)
	}
	if meta["job_start"] != "2023-11-14T22:13:20Z" || meta["command"] != "iopred export" {
		t.Errorf("metadata %v", meta)
	}
	wantTypes := map[string]string{"trace": "utf8", "pid": "int64", "rank": "int64", "tid": "int32", "op": "utf8", "offset": "int64",
		"bytes": "int64", "errno": "int32", "collective": "bool", "start_time": "timestamp[ns, tz=UTC]"}
	for name, typ := range wantTypes {
		f, ok := schema.FieldsByName(name)
		if !ok || f[0].Type.String() != typ {
			t.Errorf("column %s: %v, want %s", name, f, typ)
		}
	}
	if f, _ := schema.FieldsByName("offset"); !f[0].Nullable {
		t.Error("offset is not nullable")
	}

	// Row by row against the events as the trace reader gives them.
	i := 0
	for _, tr := range traces {
		r, err := tracefmt.Open(tr)
		if err != nil {
			t.Fatal(err)
		}
		h := r.Header()
		var flow tracefmt.DataFlow
		for {
			rec, err := r.Next()
			if err != nil {
				break
			}
			e := rec.Event
			if e == nil {
				continue
			}
			var rank, offset any
			if e.Rank != nil {
				rank = int64(*e.Rank)
			}
			if e.Offset != tracefmt.NoOffset {
				offset = e.Offset
			}
			dir := map[tracefmt.Direction]string{tracefmt.Read: "read", tracefmt.Write: "write"}[flow.Of(e)]
			want := map[string]any{"pid": int64(e.PID), "rank": rank, "tid": e.Tid, "layer": string(e.Layer), "op": e.Op,
				"path": e.Path, "file_id": int64(e.FileID), "offset": offset, "size": e.Size, "bytes": e.Bytes, "ret": e.Ret,
				"start_ns": e.StartNs, "end_ns": e.EndNs, "ctx": int64(e.Ctx), "errno": e.Errno, "aux": e.Aux, "seq": e.Seq,
				"parent": e.Parent, "collective": e.Op == "MPI_File_write_at_all", "dir": dir,
				"start_time": time.Unix(0, h.StartUnixNs+e.StartNs).UTC()}
			if i >= len(rows) {
				t.Fatalf("row %d missing", i)
			}
			for k, v := range want {
				got := rows[i][k]
				if tm, ok := got.(time.Time); ok {
					got = tm.UTC()
				}
				if fmt.Sprintf("%T %v", got, got) != fmt.Sprintf("%T %v", v, v) {
					t.Errorf("row %d (%s %s) column %s: %T %v, want %T %v", i, tr, e.Op, k, got, got, v, v)
				}
			}
			i++
		}
		r.Close()
	}
	if i != len(rows) {
		t.Errorf("%d events, %d rows", i, len(rows))
	}
}
