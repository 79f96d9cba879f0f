package serverlog

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// ldmsHeader is store_csv's header for the lustre_ost schema: the
// timestamp pair, the producer, the component and job ids, the OST's
// metadata, then the metrics.
const ldmsHeader = "#Time,Time_usec,ProducerName,component_id,job_id,app_id,fs_name,ost,read_bytes.sum,write_bytes.sum,setattr,punch,sync"

// ldmsRows writes n samples of two OSTs on one OSS at 5 s, each set
// sampled a few ms after the period like a real sampler. OST0000 writes
// 1000*(k+1) bytes in interval k, OST0001 reads 7 bytes per second.
func ldmsRows(n int, t0 int64) string {
	var b strings.Builder
	var w uint64 = 1e12
	var r uint64 = 5e11
	for k := range n {
		if k > 0 {
			w += uint64(1000 * k)
			r += 35
		}
		us := 2000 + 13*k
		fmt.Fprintf(&b, "%d.%06d,%d,oss1,7,0,0,snx,snx-OST0000,%d,%d,0,0,0\n", t0+5*int64(k), us, us, uint64(9e11), w)
		fmt.Fprintf(&b, "%d.%06d,%d,oss1,7,0,0,snx,OST0001,%d,%d,0,0,0\n", t0+5*int64(k), us+900, us+900, r, uint64(2e12))
	}
	return b.String()
}

// TestLDMS proves the LDMS reader on store_csv output written by the
// test: rates from the cumulative sums (with the samplers' few ms of
// jitter), the OST named from fs_name and ost, and the same rates when
// the header is in store_csv's separate HEADER file.
func TestLDMS(t *testing.T) {
	dir := t.TempDir()
	t0 := int64(1_700_000_000) // a multiple of 5 s
	path := filepath.Join(dir, "lustre_ost.csv")
	os.WriteFile(path, []byte(ldmsHeader+"\n"+ldmsRows(10, t0)), 0o644)
	r := whole(t)(OpenSource(Spec{Path: path}, Options{}))
	if strings.Join(r.OSTs, ",") != "snx-OST0000,snx-OST0001" || r.Len() != 10 {
		t.Fatalf("OSTs %v, %d samples", r.OSTs, r.Len())
	}
	// Interval k of OST0000 is [t0+5k+2 ms+13k us, ...): 1000(k+1) bytes
	// in about 5 s. Each cell holds most of one interval and a sliver of
	// the previous: within 1% of 200(k+1) B/s.
	for k := range 9 {
		want := 200 * float64(k+1)
		if got := r.Write[0][k]; math.Abs(got-want) > 0.01*want+float64(k)*0.5 {
			t.Errorf("OST0000 cell %d: %v B/s, want about %v", k, got, want)
		}
		if got := r.Read[1][k]; math.Abs(got-7) > 0.05 {
			t.Errorf("OST0001 read cell %d: %v B/s, want about 7", k, got)
		}
	}

	alt := filepath.Join(dir, "lustre_ost.1700000000")
	os.WriteFile(alt, []byte(ldmsRows(10, t0)), 0o644)
	os.WriteFile(filepath.Join(dir, "lustre_ost.HEADER.1700000000"), []byte(ldmsHeader+"\n"), 0o644)
	r2 := whole(t)(OpenSource(Spec{Path: alt}, Options{}))
	for k := range r.Len() {
		if !sameRate(r.Write[0][k], r2.Write[0][k]) {
			t.Fatalf("altheader: cell %d %v, with the header inline %v", k, r2.Write[0][k], r.Write[0][k])
		}
	}
}

// writeCSV writes the plain CSV form of rates, cumulative or per
// interval, leaving out the rows of the samples in drop.
func writeCSV(t *testing.T, r *Rates, perInterval bool, drop map[int]bool) string {
	t.Helper()
	var b bytes.Buffer
	b.WriteString("time,ost,read_bytes,write_bytes\n")
	cr, cw := make([]float64, len(r.OSTs)), make([]float64, len(r.OSTs))
	sec := r.Step.Seconds()
	for k := 0; k <= r.Len(); k++ {
		if k > 0 {
			for i := range r.OSTs {
				cr[i] += r.Read[i][k-1] * sec
				cw[i] += r.Write[i][k-1] * sec
			}
		}
		if drop[k] || perInterval && k == 0 {
			continue
		}
		for i, ost := range r.OSTs {
			at := r.Time(k).UTC().Format("2006-01-02 15:04:05")
			if perInterval {
				fmt.Fprintf(&b, "%s,%s,%g,%g\n", at, ost, r.Read[i][k-1]*sec, r.Write[i][k-1]*sec)
			} else {
				fmt.Fprintf(&b, "%s,%s,%.0f,%.0f\n", at, ost, cr[i], cw[i])
			}
		}
	}
	path := filepath.Join(t.TempDir(), "ost.csv")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestCSV proves the plain CSV reader both ways: cumulative counters and
// per-interval bytes (--rates) read back to the rates they were written
// from; a missing row is a gap of two samples with counters (one reading
// closes two intervals) and of one sample per interval (each row carries
// its own interval).
func TestCSV(t *testing.T) {
	want := synthRates(3, 30, time.Unix(1_700_000_000, 0), 10*time.Second)
	drop := map[int]bool{12: true}
	for _, perInterval := range []bool{false, true} {
		path := writeCSV(t, want, perInterval, drop)
		got := whole(t)(OpenSource(Spec{Path: path}, Options{TZ: time.UTC, PerInterval: perInterval}))
		if got.Len() != 30 || !got.Start.Equal(want.Start) || got.Step != 10*time.Second {
			t.Fatalf("per interval %v: %d samples from %v by %v", perInterval, got.Len(), got.Start, got.Step)
		}
		for i := range want.OSTs {
			for k := range 30 {
				// Row 12 (time of sample 12's start) closes interval 11.
				gap := k == 11 || !perInterval && k == 12
				wr, ww := want.Read[i][k], want.Write[i][k]
				if gap {
					wr, ww = math.NaN(), math.NaN()
				}
				if !sameRate(got.Read[i][k], wr) || !sameRate(got.Write[i][k], ww) {
					t.Errorf("per interval %v: OST %d sample %d: %v/%v, want %v/%v", perInterval, i, k,
						got.Read[i][k], got.Write[i][k], wr, ww)
				}
			}
		}
	}
}

// TestCSVBadInput proves the errors of the CSV readers, naming the file
// and line: a header without a needed column, a row with the wrong
// number of fields, an unparsable time, a counter that is not a number;
// SkipBad keeps the good rows and counts the others; a file cut in the
// middle of its last row reads without error.
func TestCSVBadInput(t *testing.T) {
	hdr := "time,ost,read_bytes,write_bytes\n"
	good := "2024-01-01 00:00:00,a,0,0\n2024-01-01 00:00:05,a,10,10\n2024-01-01 00:00:10,a,20,20\n"
	cases := []struct {
		name, text, want string
		kind             string
	}{
		{"header", "time,ost,read_bytes\n" + good, "line 1: CSV header (want time,ost,read_bytes,write_bytes) lacks write_bytes", "csv"},
		{"fields", hdr + good + "2024-01-01 00:00:15,a,30\n", "line 5: 3 fields, the header has 4", "csv"},
		{"time", hdr + good + "noon,a,30,30\n", "line 5: time \"noon\"", "csv"},
		{"counter", hdr + good + "2024-01-01 00:00:15,a,thirty,30\n", "line 5: read counter \"thirty\"", "csv"},
		{"ldms header", "#Time,Time_usec,ProducerName,read_bytes.sum\n", "line 1: LDMS lustre_ost header lacks write_bytes.sum", "ldms"},
	}
	for _, c := range cases {
		path := filepath.Join(t.TempDir(), "x.csv")
		os.WriteFile(path, []byte(c.text), 0o644)
		_, err := OpenSource(Spec{Kind: c.kind, Path: path}, Options{TZ: time.UTC})
		if err == nil || !strings.Contains(err.Error(), path+": "+c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
			continue
		}
		if c.kind != "csv" || c.name == "header" {
			continue
		}
		var bad BadRows
		src, err := OpenSource(Spec{Kind: c.kind, Path: path}, Options{TZ: time.UTC, SkipBad: true, Bad: &bad})
		if err != nil || bad.Count() != 1 {
			t.Errorf("%s: SkipBad: %v, %d skipped", c.name, err, bad.Count())
			continue
		}
		src.Close()
	}
	cut := filepath.Join(t.TempDir(), "cut.csv")
	os.WriteFile(cut, []byte(hdr+good+"2024-01-01 00:00:15,a,3"), 0o644)
	src, err := OpenCSV(cut, Options{TZ: time.UTC})
	if err != nil {
		t.Fatalf("truncated CSV: %v", err)
	}
	r, _ := src.Window(time.Time{}, time.Time{})
	if r.Len() != 2 || r.Write[0][1] != 2 {
		t.Errorf("truncated CSV: %d samples, %v", r.Len(), r.Write)
	}
}

// FuzzParseCSV proves that no input makes the CSV parsers panic or hang,
// in both their forms. The LDMS seed is two samples (four rows): Go's
// fuzzer minimises each input that finds new code at a cost quadratic in
// its length (tests/fuzzinput).
func FuzzParseCSV(f *testing.F) {
	f.Add([]byte("time,ost,read_bytes,write_bytes\n2024-01-01 00:00:00,a,0,0\n1704067205,a,5,5\n"), false)
	f.Add([]byte(ldmsHeader+"\n"+ldmsRows(2, 1_700_000_000)), true)
	f.Fuzz(func(t *testing.T, b []byte, ldms bool) {
		names, rows, _, err := parseCSV("fuzz", bytes.NewReader(b), &Options{SkipBad: true, TZ: time.UTC}, ldms, nil)
		if err != nil {
			return
		}
		if len(names) != len(rows) {
			t.Fatalf("%d names for %d row sets", len(names), len(rows))
		}
	})
}
