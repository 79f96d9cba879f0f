package serverlog

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// csvLayout says where a CSV's fields are.
type csvLayout struct {
	width                int
	time, usec           int // usec: LDMS's Time_usec, -1 if absent
	ost, fs, prod, comp  int // -1 if absent
	read, write          int
	perInterval, decimal bool
}

// OpenLDMS opens a CSV file of LDMS's store_csv plugin holding the
// lustre_ost schema: a header "#Time,Time_usec,ProducerName,component_id,
// job_id,...,read_bytes.sum,write_bytes.sum,..." (or that header in the
// store's separate HEADER file, store_csv's altheader), then one row per
// OST and sampling time with cumulative counters. The OST is the row's
// ost field (with fs_name before it when the name lacks it), else
// ProducerName:component_id. Rows of other schemas in the file (without
// the two counters) are an error.
func OpenLDMS(path string, opts Options) (Source, error) {
	return openCSV(path, &opts, true)
}

// OpenCSV opens a plain CSV of per-OST counters: a header naming at least
// time, ost, read_bytes and write_bytes (in any order; other columns are
// ignored), times as ParseTime reads them (in opts.TZ when they have no
// zone). The byte fields are cumulative counters, or with
// opts.PerInterval the bytes moved in the interval of one sample width
// that ends at the row's time (the --rates flag).
func OpenCSV(path string, opts Options) (Source, error) {
	return openCSV(path, &opts, false)
}

func openCSV(path string, opts *Options, ldms bool) (Source, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<16)
	var r io.Reader = br
	if head, _ := br.Peek(2); len(head) == 2 && head[0] == 0x1f && head[1] == 0x8b {
		gz, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		defer gz.Close()
		r = gz
	}
	var lay *csvLayout
	if ldms {
		if hdr, ok := ldmsAltHeader(path); ok {
			if lay, err = csvHeader(path+" (header file)", 1, hdr, true, opts); err != nil {
				return nil, err
			}
		}
	}
	names, rows, lay, err := parseCSV(path, r, opts, ldms, lay)
	if err != nil {
		return nil, err
	}
	// OSTs in name order, as every source lists them.
	order := make([]int, len(names))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return names[order[a]] < names[order[b]] })
	sn, srows := make([]string, len(names)), make([][]csvRow, len(names))
	for k, i := range order {
		sn[k], srows[k] = names[i], rows[i]
	}
	if lay.perInterval {
		return perIntervalSource(path, sn, srows, opts)
	}
	rs := make([][]reading, len(sn))
	for i, ost := range srows {
		rs[i] = make([]reading, len(ost))
		for k, x := range ost {
			rs[i][k] = reading{t: x.t, r: x.r, w: x.w}
		}
	}
	m, err := newMemLog(path, sn, rs)
	if err != nil {
		return nil, err
	}
	return newCounterSource(m, opts), nil
}

// parseCSV reads the rows of a CSV log, per OST in the order OSTs first
// appear; lay is the layout of a header read elsewhere, or nil.
func parseCSV(path string, r io.Reader, opts *Options, ldms bool, lay *csvLayout) ([]string, [][]csvRow, *csvLayout, error) {
	s := &lineScanner{br: bufio.NewReaderSize(r, 1<<16)}
	var err error
	var names []string
	ids := map[string]int{}
	var rows [][]csvRow
	loc := opts.loc()
	for s.next() {
		line := string(s.line)
		if strings.TrimSpace(line) == "" {
			continue
		}
		if lay == nil || strings.HasPrefix(line, "#") {
			if lay != nil && !ldms {
				continue
			}
			if lay, err = csvHeader(path, s.n, line, ldms, opts); err != nil {
				return nil, nil, nil, err
			}
			continue
		}
		f := strings.Split(line, ",")
		ost, x, err := lay.row(f, loc)
		if err != nil {
			if err := opts.badLine(fmt.Errorf("%s: line %d: %v", path, s.n, err), s.partial); err != nil {
				return nil, nil, nil, err
			}
			continue
		}
		i, ok := ids[ost]
		if !ok {
			i = len(names)
			ids[ost] = i
			names = append(names, ost)
			rows = append(rows, nil)
		}
		rows[i] = append(rows[i], x)
	}
	if s.err != nil {
		return nil, nil, nil, fmt.Errorf("%s: line %d: %v", path, s.n+1, s.err)
	}
	if lay == nil {
		return nil, nil, nil, fmt.Errorf("%s: no header line", path)
	}
	if len(names) == 0 {
		return nil, nil, nil, fmt.Errorf("%s: no rows", path)
	}
	return names, rows, lay, nil
}

// ldmsAltHeader finds store_csv's separate header file: PATH.HEADER, or
// NAME.HEADER.SUFFIX beside NAME.SUFFIX.
func ldmsAltHeader(path string) (string, bool) {
	cands := []string{path + ".HEADER"}
	if ext := filepath.Ext(path); ext != "" {
		cands = append(cands, strings.TrimSuffix(path, ext)+".HEADER"+ext)
	}
	for _, c := range cands {
		b, err := os.ReadFile(c)
		if err != nil {
			continue
		}
		line, _, _ := strings.Cut(string(b), "\n")
		return strings.TrimRight(line, "\r"), true
	}
	return "", false
}

func csvHeader(path string, n int, line string, ldms bool, opts *Options) (*csvLayout, error) {
	col := map[string]int{}
	f := strings.Split(line, ",")
	for i, h := range f {
		col[strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "#")))] = i
	}
	get := func(names ...string) int {
		for _, n := range names {
			if i, ok := col[n]; ok {
				return i
			}
		}
		return -1
	}
	lay := &csvLayout{width: len(f), usec: -1, fs: -1, prod: -1, comp: -1}
	var need []string
	if ldms {
		lay.time, lay.usec = get("time"), get("time_usec")
		lay.ost, lay.fs, lay.prod, lay.comp = get("ost"), get("fs_name"), get("producername"), get("component_id")
		lay.read, lay.write = get("read_bytes.sum"), get("write_bytes.sum")
		need = []string{"#Time", "read_bytes.sum", "write_bytes.sum"}
	} else {
		lay.time, lay.ost = get("time", "timestamp"), get("ost")
		lay.read, lay.write = get("read_bytes"), get("write_bytes")
		lay.perInterval, lay.decimal = opts.PerInterval, opts.PerInterval
		need = []string{"time", "read_bytes", "write_bytes"}
		if lay.ost < 0 {
			need = append(need, "ost")
		}
	}
	var missing []string
	for i, idx := range []int{lay.time, lay.read, lay.write} {
		if idx < 0 {
			missing = append(missing, need[i])
		}
	}
	if lay.ost < 0 && !ldms {
		missing = append(missing, "ost")
	}
	if len(missing) > 0 {
		what := "CSV header (want time,ost,read_bytes,write_bytes)"
		if ldms {
			what = "LDMS lustre_ost header"
		}
		return nil, fmt.Errorf("%s: line %d: %s lacks %s", path, n, what, strings.Join(missing, ", "))
	}
	if ldms && lay.ost < 0 && (lay.prod < 0 || lay.comp < 0) {
		return nil, fmt.Errorf("%s: line %d: LDMS header has neither ost nor ProducerName and component_id", path, n)
	}
	return lay, nil
}

type csvRow struct {
	t      int64
	r, w   uint64
	fr, fw float64
}

func (lay *csvLayout) row(f []string, loc *time.Location) (string, csvRow, error) {
	var x csvRow
	if len(f) != lay.width {
		return "", x, fmt.Errorf("%d fields, the header has %d", len(f), lay.width)
	}
	t, err := ParseTime(f[lay.time], loc)
	if err != nil {
		return "", x, err
	}
	x.t = t.UnixNano()
	var ost string
	switch {
	case lay.ost >= 0 && strings.TrimSpace(f[lay.ost]) != "":
		ost = strings.TrimSpace(f[lay.ost])
		if lay.fs >= 0 && !strings.Contains(ost, "-") {
			if fs := strings.TrimSpace(f[lay.fs]); fs != "" {
				ost = fs + "-" + ost
			}
		}
	case lay.prod >= 0 && lay.comp >= 0:
		ost = strings.TrimSpace(f[lay.prod]) + ":" + strings.TrimSpace(f[lay.comp])
	default:
		return "", x, fmt.Errorf("empty ost")
	}
	if lay.decimal {
		if x.fr, err = parseBytesFloat(f[lay.read]); err != nil {
			return "", x, fmt.Errorf("read_bytes: %v", err)
		}
		if x.fw, err = parseBytesFloat(f[lay.write]); err != nil {
			return "", x, fmt.Errorf("write_bytes: %v", err)
		}
		return ost, x, nil
	}
	if x.r, err = strconv.ParseUint(strings.TrimSpace(f[lay.read]), 10, 64); err != nil {
		return "", x, fmt.Errorf("read counter %q is not a byte count", f[lay.read])
	}
	if x.w, err = strconv.ParseUint(strings.TrimSpace(f[lay.write]), 10, 64); err != nil {
		return "", x, fmt.Errorf("write counter %q is not a byte count", f[lay.write])
	}
	return ost, x, nil
}

func parseBytesFloat(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || v < 0 || v > 1e18 {
		return 0, fmt.Errorf("%q is not a byte count", s)
	}
	return v, nil
}

// perIntervalSource turns per-interval bytes into readings: each row's
// bytes fill the sample width that ends at its time, so a missing row is
// a gap of one sample and the rows around it keep their own values.
func perIntervalSource(path string, names []string, rows [][]csvRow, opts *Options) (Source, error) {
	// The width: the median interval of the OST with the most rows.
	longest := 0
	for i := range rows {
		sort.SliceStable(rows[i], func(a, b int) bool { return rows[i][a].t < rows[i][b].t })
		if len(rows[i]) > len(rows[longest]) {
			longest = i
		}
	}
	ts := make([]int64, len(rows[longest]))
	for k, x := range rows[longest] {
		ts[k] = x.t
	}
	step, err := nativeStep(ts)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	st := int64(step)
	rs := make([][]reading, len(rows))
	for i, ost := range rows {
		var out []reading
		var cr, cw float64
		for _, x := range ost {
			begin := x.t - st
			n := len(out)
			if n > 0 && out[n-1].t == x.t {
				continue // the same time twice: keep the first
			}
			if n == 0 || out[n-1].t < begin-st/2 || out[n-1].t > begin+st/2 {
				// Not following the previous row: what came between is unknown.
				out = append(out, reading{t: begin, r: uint64(math.Round(cr)), w: uint64(math.Round(cw)), gap: true})
			}
			cr, cw = cr+x.fr, cw+x.fw
			out = append(out, reading{t: x.t, r: uint64(math.Round(cr)), w: uint64(math.Round(cw))})
		}
		rs[i] = out
	}
	m, err := newMemLog(path, names, rs)
	if err != nil {
		return nil, err
	}
	m.step = step
	return newCounterSource(m, opts), nil
}
