// Package ratesout writes the per-OST read and write rates of a
// server-side log for other tools (CSV, JSON, Parquet) and draws them (a
// heat map of OSTs against time under the file system's aggregate): what
// `iopred serverlog rates` prints.
package ratesout

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"

	"iopred/analyzer/serverlog"
)

// Total is the OST name of the aggregate rows: the sum over the OSTs
// written that have data in the sample (unknown when none has).
const Total = "total"

// Select keeps the OSTs list names, in the log's order: each item is an
// OST's name or the end of one ("OST0003" for "snx11025-OST0003"). An
// item that matches no OST, or several, is an error. An empty list keeps
// them all.
func Select(r *serverlog.Rates, list string) (*serverlog.Rates, error) {
	if strings.TrimSpace(list) == "" {
		return r, nil
	}
	keep := map[int]bool{}
	for _, item := range strings.Split(list, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		var hits []int
		for i, o := range r.OSTs {
			if o == item {
				hits = []int{i}
				break
			}
			if strings.HasSuffix(o, item) {
				hits = append(hits, i)
			}
		}
		switch len(hits) {
		case 0:
			return nil, fmt.Errorf("--ost %s: no such OST (the log has %d, %s .. %s)", item, len(r.OSTs), r.OSTs[0], r.OSTs[len(r.OSTs)-1])
		case 1:
			keep[hits[0]] = true
		default:
			return nil, fmt.Errorf("--ost %s: %d OSTs end so (%s, %s, ...): name one", item, len(hits), r.OSTs[hits[0]], r.OSTs[hits[1]])
		}
	}
	out := &serverlog.Rates{Start: r.Start, Step: r.Step}
	for i, o := range r.OSTs {
		if keep[i] {
			out.OSTs = append(out.OSTs, o)
			out.Read = append(out.Read, r.Read[i])
			out.Write = append(out.Write, r.Write[i])
		}
	}
	return out, nil
}

// Resample puts rates on a grid of step, a whole multiple of theirs
// aligned to the Unix epoch as theirs is: a new sample is the mean rate
// over its known part, unknown (NaN) when less than half of it is known,
// as the readers grid counters.
func Resample(r *serverlog.Rates, step time.Duration) (*serverlog.Rates, error) {
	if step == 0 || step == r.Step {
		return r, nil
	}
	if step < r.Step || step%r.Step != 0 {
		return nil, fmt.Errorf("--step %v: want a whole multiple of the log's %v", step, r.Step)
	}
	k := int(step / r.Step)
	st := int64(step)
	k0 := floorDiv(r.Start.UnixNano(), st)
	first := int((r.Start.UnixNano() - k0*st) / int64(r.Step)) // cells of the first new sample before r's start
	n := (first + r.Len() + k - 1) / k
	out := &serverlog.Rates{Start: time.Unix(0, k0*st), Step: step, OSTs: r.OSTs}
	group := func(v []float64) []float64 {
		o := make([]float64, n)
		for j := range o {
			sum, known := 0.0, 0
			for c := j*k - first; c < (j+1)*k-first; c++ {
				if c >= 0 && c < len(v) && !math.IsNaN(v[c]) {
					sum += v[c]
					known++
				}
			}
			o[j] = math.NaN()
			if 2*known >= k {
				o[j] = sum / float64(known)
			}
		}
		return o
	}
	for i := range r.OSTs {
		out.Read = append(out.Read, group(r.Read[i]))
		out.Write = append(out.Write, group(r.Write[i]))
	}
	return out, nil
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// WriteCSV writes one row per sample and OST, then the aggregate's
// (ost "total"), by time: time (RFC 3339, UTC, the sample's start), ost,
// read_bytes_per_s, write_bytes_per_s; an unknown rate is an empty field.
func WriteCSV(w io.Writer, r *serverlog.Rates) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	bw.WriteString("time,ost,read_bytes_per_s,write_bytes_per_s\n")
	ar, aw := r.Aggregate()
	var b []byte
	num := func(v float64) {
		if !math.IsNaN(v) {
			b = strconv.AppendFloat(b, v, 'f', -1, 64)
		}
	}
	for t := range r.Len() {
		ts := r.Time(t).UTC().Format(time.RFC3339Nano)
		row := func(ost string, rd, wr float64) {
			b = append(b[:0], ts...)
			b = append(b, ',')
			b = append(b, csvField(ost)...)
			b = append(b, ',')
			num(rd)
			b = append(b, ',')
			num(wr)
			b = append(b, '\n')
			bw.Write(b)
		}
		for i, o := range r.OSTs {
			row(o, r.Read[i][t], r.Write[i][t])
		}
		row(Total, ar[t], aw[t])
	}
	return bw.Flush()
}

func csvField(s string) string {
	if strings.ContainsAny(s, ",\"\n\r") {
		return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
	}
	return s
}

// jsonRates is the JSON form: the grid, then per OST and for the
// aggregate the read and write series (null where unknown).
type jsonRates struct {
	Start string     `json:"start"`
	StepS float64    `json:"step_s"`
	Times []string   `json:"times"`
	OSTs  []jsonOST  `json:"osts"`
	Total jsonSeries `json:"total"`
}

type jsonOST struct {
	OST string `json:"ost"`
	jsonSeries
}

type jsonSeries struct {
	Read  []*float64 `json:"read_bytes_per_s"`
	Write []*float64 `json:"write_bytes_per_s"`
}

func series(v []float64) []*float64 {
	out := make([]*float64, len(v))
	for i := range v {
		if !math.IsNaN(v[i]) {
			out[i] = &v[i]
		}
	}
	return out
}

// WriteJSON writes one object: start, step_s, times (each sample's start,
// RFC 3339 UTC), osts (per OST its name and read and write series) and
// total (the aggregate), rates in bytes per second, null where unknown.
func WriteJSON(w io.Writer, r *serverlog.Rates) error {
	ar, aw := r.Aggregate()
	out := jsonRates{Start: r.Start.UTC().Format(time.RFC3339Nano), StepS: r.Step.Seconds(),
		Times: make([]string, r.Len()), Total: jsonSeries{series(ar), series(aw)}}
	for t := range out.Times {
		out.Times[t] = r.Time(t).UTC().Format(time.RFC3339Nano)
	}
	for i, o := range r.OSTs {
		out.OSTs = append(out.OSTs, jsonOST{o, jsonSeries{series(r.Read[i]), series(r.Write[i])}})
	}
	enc := json.NewEncoder(w)
	return enc.Encode(out)
}

// Row is one Parquet row: a sample of one OST, or of the aggregate (OST
// "total"); a rate is null where unknown.
type Row struct {
	Time  time.Time `parquet:"time,timestamp(nanosecond:utc)"`
	OST   string    `parquet:"ost,dict"`
	Read  *float64  `parquet:"read_bytes_per_s,optional"`
	Write *float64  `parquet:"write_bytes_per_s,optional"`
}

// WriteParquet writes the rows of WriteCSV as Parquet (zstd), the step in
// the file's key-value metadata as "step_s".
func WriteParquet(w io.Writer, r *serverlog.Rates) error {
	pw := parquet.NewGenericWriter[Row](w, parquet.Compression(&zstd.Codec{Level: zstd.SpeedDefault}),
		parquet.CreatedBy("iopred", "", ""), parquet.KeyValueMetadata("step_s", strconv.FormatFloat(r.Step.Seconds(), 'f', -1, 64)))
	ar, aw := r.Aggregate()
	rows := make([]Row, 0, len(r.OSTs)+1)
	ptr := func(v []float64, t int) *float64 {
		if math.IsNaN(v[t]) {
			return nil
		}
		return &v[t]
	}
	for t := range r.Len() {
		rows = rows[:0]
		ts := r.Time(t).UTC()
		for i, o := range r.OSTs {
			rows = append(rows, Row{Time: ts, OST: o, Read: ptr(r.Read[i], t), Write: ptr(r.Write[i], t)})
		}
		rows = append(rows, Row{Time: ts, OST: Total, Read: ptr(ar, t), Write: ptr(aw, t)})
		if _, err := pw.Write(rows); err != nil {
			return err
		}
	}
	return pw.Close()
}
