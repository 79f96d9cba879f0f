package ftio

import (
	"path/filepath"
	"testing"
)

// BenchmarkExamples times the whole analysis (parsing included) of FTIO's
// example traces. Goal: the 8-rank trace well under 50 ms.
func BenchmarkExamples(b *testing.B) {
	for _, tc := range []struct {
		file string
		mode Mode
	}{
		{"tmio-8ranks.jsonl", ModeWrite},
		{"tmio-ior-384ranks.msgpack", ModeWrite},
		{"custom-4ranks.json", ModeWrite},
	} {
		b.Run(tc.file, func(b *testing.B) {
			path := filepath.Join(interopDir(b), tc.file)
			for i := 0; i < b.N; i++ {
				srcs, err := FileSources([]string{path}, tc.mode, nil)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := AnalyzeSources(srcs, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// periodicSource streams n requests in bursts of 1000 every 10 s without
// holding them, as a long trace would.
func periodicSource(n int) Source {
	return func(fn func(Request) error) error {
		for i := 0; i < n; i++ {
			burst, j := i/1000, i%1000
			s := 10*float64(burst) + 0.001*float64(j)
			if err := fn(Request{Start: s, End: s + 0.001, Bandwidth: 65536 / 0.001}); err != nil {
				return err
			}
		}
		return nil
	}
}

// BenchmarkAnalyze10M analyses 10 million streamed requests (10^5 s at
// 10 Hz: 10^6 samples). Goal: under 10 s; the bytes allocated per op stay
// those of the samples and spectrum, whatever the number of requests.
func BenchmarkAnalyze10M(b *testing.B) {
	for i := 0; i < b.N; i++ {
		res, err := Analyze(periodicSource(10_000_000), Options{})
		if err != nil {
			b.Fatal(err)
		}
		if res.PeriodS == nil {
			b.Fatal("no period found")
		}
	}
}

// BenchmarkAnalyze1M is the same with a tenth of the requests over a
// tenth of the time, to compare the bytes per op.
func BenchmarkAnalyze1M(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if _, err := Analyze(periodicSource(1_000_000), Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
