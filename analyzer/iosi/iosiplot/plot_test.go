package iosiplot

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"iopred/analyzer/iosi"
)

func signature() *iosi.Signature {
	w, r := make([]float64, 200), make([]float64, 200)
	for i := 50; i < 70; i++ {
		w[i] = 2e9
	}
	for i := 120; i < 130; i++ {
		r[i] = 1e9
	}
	return &iosi.Signature{Method: "iosi", RunsFound: 3, RunsUsed: 3, StepS: 1, Write: w, Read: r,
		Bursts:  []iosi.Burst{{StartS: 50, EndS: 70, WriteBytes: 40e9, PeakBytesPerS: 2e9}, {StartS: 120, EndS: 130, ReadBytes: 10e9, PeakBytesPerS: 1e9}},
		Samples: [][]float64{w, r}}
}

// TestWrite: every format is written and says what it shows (the HTML
// page names the application and the bursts; the SVG has both panels
// with the truth in the legend); a bad extension and an empty signature
// are errors.
func TestWrite(t *testing.T) {
	dir := t.TempDir()
	truth := &iosi.Truth{StepS: 2, Write: make([]float64, 100), Read: make([]float64, 100)}
	opt := Options{Title: "u/app/4", Truth: truth}
	for _, ext := range []string{".svg", ".png", ".html"} {
		p := filepath.Join(dir, "s"+ext)
		if err := Write(p, signature(), opt); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		switch ext {
		case ".png":
			if !bytes.HasPrefix(b, []byte("\x89PNG")) {
				t.Error("not a PNG")
			}
		case ".svg":
			for _, want := range []string{"ground truth", "Signature: 2 bursts", "u/app/4"} {
				if !strings.Contains(string(b), want) {
					t.Errorf("SVG lacks %q", want)
				}
			}
		case ".html":
			if !strings.Contains(string(b), "I/O signature of u/app/4 (iosi): 3 of 3 runs used, 2 bursts, 40.0 GB written and 10.0 GB read over 200 s.") {
				t.Errorf("HTML summary missing:\n%.300s", b)
			}
		}
	}
	if err := Write(filepath.Join(dir, "s.gif"), signature(), opt); err == nil || !strings.Contains(err.Error(), "unknown format") {
		t.Errorf("gif: %v", err)
	}
	if err := Write(filepath.Join(dir, "e.svg"), &iosi.Signature{StepS: 1}, opt); err == nil {
		t.Error("empty signature: no error")
	}
}
