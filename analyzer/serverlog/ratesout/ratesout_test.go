package ratesout

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"iopred/analyzer/serverlog"
)

// rates is 3 OSTs of 12 samples of 5 s with one unknown sample.
func rates() *serverlog.Rates {
	r := &serverlog.Rates{Start: time.Date(2018, 1, 28, 0, 0, 0, 0, time.UTC), Step: 5 * time.Second,
		OSTs: []string{"fs-OST0000", "fs-OST0001", "fs-OST0010"}}
	for i := range r.OSTs {
		rd, wr := make([]float64, 12), make([]float64, 12)
		for k := range rd {
			rd[k] = float64(1000 * (i + 1) * k)
			wr[k] = float64(7 * (k + i))
		}
		r.Read, r.Write = append(r.Read, rd), append(r.Write, wr)
	}
	r.Write[1][3] = math.NaN()
	r.Read[1][3] = math.NaN()
	return r
}

func same(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }

// TestSelect proves --ost: names and name endings, in the log's order,
// and the errors for an OST that is not there or an ending that several
// share.
func TestSelect(t *testing.T) {
	r := rates()
	got, err := Select(r, "OST0010, fs-OST0000")
	if err != nil || strings.Join(got.OSTs, ",") != "fs-OST0000,fs-OST0010" || got.Write[1][2] != r.Write[2][2] {
		t.Errorf("select: %v %v", got.OSTs, err)
	}
	for list, want := range map[string]string{
		"OST0099": "--ost OST0099: no such OST (the log has 3, fs-OST0000 .. fs-OST0010)",
		"0":       "--ost 0: 2 OSTs end so (fs-OST0000, fs-OST0010, ...): name one",
	} {
		if _, err := Select(r, list); err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %q", list, err, want)
		}
	}
}

// TestResample proves that a coarser step averages the known samples of
// each new one, unknown when fewer than half are known, aligned to the
// epoch; and that a step that is not a whole multiple is refused.
func TestResample(t *testing.T) {
	r := rates()
	r.Start = r.Start.Add(10 * time.Second) // 00:00:10: the first 20 s sample holds 2 of r's
	got, err := Resample(r, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Start.Equal(time.Date(2018, 1, 28, 0, 0, 0, 0, time.UTC)) || got.Len() != 4 {
		t.Fatalf("%d samples from %v", got.Len(), got.Start)
	}
	// Sample 0 holds r's 0 and 1 (two of four: half known), sample 1 r's
	// 2..5 (OST 1: 3 unknown), sample 3 r's 10 and 11.
	for _, c := range []struct {
		ost, k int
		want   float64
	}{{0, 0, 3.5}, {0, 1, 24.5}, {1, 1, 7 * (2 + 4 + 5 + 3) / 3.0}, {2, 3, 7 * (10.5 + 2)}} {
		if g := got.Write[c.ost][c.k]; math.Abs(g-c.want) > 1e-9 {
			t.Errorf("OST %d sample %d: %v, want %v", c.ost, c.k, g, c.want)
		}
	}
	r.Write[0][0] = math.NaN()
	got, _ = Resample(r, 20*time.Second)
	if !math.IsNaN(got.Write[0][0]) {
		t.Errorf("one known of four: %v, want unknown", got.Write[0][0])
	}
	if _, err := Resample(r, 7*time.Second); err == nil || err.Error() != "--step 7s: want a whole multiple of the log's 5s" {
		t.Errorf("7 s: %v", err)
	}
}

// TestWriteFormats proves that CSV, JSON and Parquet each hold every
// sample of every OST and the aggregate, unknown samples empty or null,
// read back with a CSV reader, encoding/json and parquet-go.
func TestWriteFormats(t *testing.T) {
	r := rates()
	ar, aw := r.Aggregate()
	var b bytes.Buffer
	if err := WriteCSV(&b, r); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1+12*4 || strings.Join(recs[0], ",") != "time,ost,read_bytes_per_s,write_bytes_per_s" {
		t.Fatalf("%d rows, header %v", len(recs), recs[0])
	}
	parse := func(s string) float64 {
		if s == "" {
			return math.NaN()
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for k := range 12 {
		for i := 0; i < 4; i++ {
			rec := recs[1+k*4+i]
			wantR, wantW, ost := ar[k], aw[k], Total
			if i < 3 {
				wantR, wantW, ost = r.Read[i][k], r.Write[i][k], r.OSTs[i]
			}
			if rec[0] != r.Time(k).Format(time.RFC3339) || rec[1] != ost || !same(parse(rec[2]), wantR) || !same(parse(rec[3]), wantW) {
				t.Errorf("row %v, want %s %s %v %v", rec, r.Time(k).Format(time.RFC3339), ost, wantR, wantW)
			}
		}
	}

	b.Reset()
	if err := WriteJSON(&b, r); err != nil {
		t.Fatal(err)
	}
	var j jsonRates
	if err := json.Unmarshal(b.Bytes(), &j); err != nil {
		t.Fatal(err)
	}
	if j.StepS != 5 || len(j.Times) != 12 || len(j.OSTs) != 3 || j.OSTs[1].Write[3] != nil || *j.OSTs[2].Read[5] != r.Read[2][5] || *j.Total.Write[7] != aw[7] {
		t.Errorf("JSON: %s", b.String())
	}

	b.Reset()
	if err := WriteParquet(&b, r); err != nil {
		t.Fatal(err)
	}
	rows, err := parquet.Read[Row](bytes.NewReader(b.Bytes()), int64(b.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 12*4 {
		t.Fatalf("%d Parquet rows", len(rows))
	}
	for n, row := range rows {
		k, i := n/4, n%4
		wantW, ost := aw[k], Total
		if i < 3 {
			wantW, ost = r.Write[i][k], r.OSTs[i]
		}
		got := math.NaN()
		if row.Write != nil {
			got = *row.Write
		}
		if !row.Time.Equal(r.Time(k)) || row.OST != ost || !same(got, wantW) {
			t.Errorf("Parquet row %d: %+v, want %s %v", n, row, ost, wantW)
		}
	}
}

// TestWritePlot proves that the figure is written in the three formats,
// the PNG decodes to an image of the figure's size, the SVG and the page
// hold the panels' titles, and rates without samples are refused.
func TestWritePlot(t *testing.T) {
	dir := t.TempDir()
	r := rates()
	for _, ext := range []string{".png", ".svg", ".html"} {
		p := filepath.Join(dir, "rates"+ext)
		if err := WritePlot(p, r, "lmt.db"); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(p)
		switch ext {
		case ".png":
			img, err := png.Decode(bytes.NewReader(b))
			if err != nil || img.Bounds().Dx() < 1000 {
				t.Errorf("PNG: %v", err)
			}
		default:
			for _, w := range []string{"lmt.db: aggregate of 3 OSTs", "Write rate per OST", "Read rate per OST", "fs-OST0010"} {
				if !bytes.Contains(b, []byte(w)) {
					t.Errorf("%s lacks %q", ext, w)
				}
			}
		}
	}
	if err := WritePlot(filepath.Join(dir, "x.pdf"), r, "x"); err == nil || !strings.Contains(err.Error(), `unknown format ".pdf"`) {
		t.Errorf("pdf: %v", err)
	}
	empty := &serverlog.Rates{Start: r.Start, Step: r.Step, OSTs: r.OSTs, Read: make([][]float64, 3), Write: make([][]float64, 3)}
	if err := WritePlot(filepath.Join(dir, "e.png"), empty, "x"); err == nil || !strings.Contains(err.Error(), "no samples to draw") {
		t.Errorf("no samples: %v", err)
	}
}
