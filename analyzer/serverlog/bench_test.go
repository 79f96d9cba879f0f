package serverlog

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// centerDay makes a day of per-OST write and read rates like a busy
// center's: each OST idle in half of its samples and otherwise moving
// background traffic of a log-normal size (median 50 kB per sample, a
// factor e^1.5 spread), plus job bursts every few minutes on 8-64
// OSTs at 20-400 MB/s each for 30 s to 3 min, with 10% noise. Whole bytes
// per sample, as counters give them.
func centerDay(day time.Time, osts int, step time.Duration, seed uint64) *Rates {
	n := int(24 * time.Hour / step)
	rng := rand.New(rand.NewPCG(seed, uint64(day.Unix())))
	r := &Rates{Start: day, Step: step}
	sec := step.Seconds()
	for i := range osts {
		r.OSTs = append(r.OSTs, fmt.Sprintf("fs-OST%04x", i))
		rd, wr := make([]float64, n), make([]float64, n)
		for k := range n {
			if rng.IntN(2) == 0 {
				wr[k] = math.Round(math.Exp(rng.NormFloat64()*1.5+math.Log(50e3))) / sec
			}
			if rng.IntN(3) == 0 {
				rd[k] = math.Round(math.Exp(rng.NormFloat64()*1.5+math.Log(20e3))) / sec
			}
		}
		r.Read, r.Write = append(r.Read, rd), append(r.Write, wr)
	}
	for at := 0; at < n; at += int((time.Duration(60+rng.IntN(240)) * time.Second) / step) {
		width := 8 + rng.IntN(57)
		first := rng.IntN(osts)
		rate := 20e6 + rng.Float64()*380e6
		long := int((time.Duration(30+rng.IntN(150)) * time.Second) / step)
		series := r.Write
		if rng.IntN(4) == 0 {
			series = r.Read
		}
		for j := range width {
			o := (first + j) % osts
			for k := at; k < min(n, at+long); k++ {
				series[o][k] += math.Round(rate*(0.9+0.2*rng.Float64())*sec) / sec
			}
		}
	}
	return r
}

// BenchmarkStoreDay measures the store on a day of 256 OSTs at 5 s (4.4
// million OST samples): import from memory (encoding, compression,
// syncing), the bytes per OST sample on disk, and reading the day back
// whole (from a version 1 store too, for comparison) and by hour.
func BenchmarkStoreDay(b *testing.B) {
	day := centerDay(time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC), 256, 5*time.Second, 1)
	samples := float64(day.Len() * len(day.OSTs))
	b.Run("import", func(b *testing.B) {
		var size int64
		for i := 0; i < b.N; i++ {
			dir := filepath.Join(b.TempDir(), "store")
			src, _ := NewRatesSource(day)
			if _, err := ImportFrom(context.Background(), dir, src, "day", ImportOptions{}); err != nil {
				b.Fatal(err)
			}
			size = diskSize(dir)
		}
		b.ReportMetric(samples*float64(b.N)/b.Elapsed().Seconds(), "OST-samples/s")
		b.ReportMetric(float64(size)/samples, "bytes/OST-sample")
	})
	dir := filepath.Join(b.TempDir(), "store")
	src, _ := NewRatesSource(day)
	if _, err := ImportFrom(context.Background(), dir, src, "day", ImportOptions{}); err != nil {
		b.Fatal(err)
	}
	// The same day again into the store that holds it: read, merged and
	// compared (and, before the store checked for changes, rewritten).
	b.Run("reimport", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			src, _ := NewRatesSource(day)
			if _, err := ImportFrom(context.Background(), dir, src, "day", ImportOptions{All: true}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(samples*float64(b.N)/b.Elapsed().Seconds(), "OST-samples/s")
	})
	v1 := filepath.Join(b.TempDir(), "store")
	src, _ = NewRatesSource(day)
	if _, err := ImportFrom(context.Background(), v1, src, "day", ImportOptions{}); err != nil {
		b.Fatal(err)
	}
	downgradeStore(b, v1)
	b.Run("read-day-v1", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			st, err := OpenStore(v1, Options{})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := st.Window(time.Time{}, time.Time{}); err != nil {
				b.Fatal(err)
			}
			st.Close()
		}
		b.ReportMetric(samples*float64(b.N)/b.Elapsed().Seconds(), "OST-samples/s")
	})
	b.Run("read-day", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			st, err := OpenStore(dir, Options{})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := st.Window(time.Time{}, time.Time{}); err != nil {
				b.Fatal(err)
			}
			st.Close()
		}
		b.ReportMetric(samples*float64(b.N)/b.Elapsed().Seconds(), "OST-samples/s")
	})
	b.Run("read-hours", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			st, _ := OpenStore(dir, Options{})
			for h := range 24 {
				if _, err := st.Window(day.Time(h*720), day.Time((h+1)*720)); err != nil {
					b.Fatal(err)
				}
			}
			st.Close()
		}
		b.ReportMetric(samples*float64(b.N)/b.Elapsed().Seconds(), "OST-samples/s")
	})
}

// BenchmarkStoreWindow measures what AID's advice reads: a 20-minute
// window of 256 OSTs at 5 s (13:47:30 to 14:07:30, two blocks) from a
// fresh Store on a day of a busy center, in a store of version 1 (one
// frame per day, written by the old writer) and of version 2 (one frame
// per 15 minutes) side by side, with each store's bytes per OST sample.
func BenchmarkStoreWindow(b *testing.B) {
	day := centerDay(time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC), 256, 5*time.Second, 1)
	samples := float64(day.Len() * len(day.OSTs))
	from := day.Start.Add(13*time.Hour + 47*time.Minute + 30*time.Second)
	to := from.Add(20 * time.Minute)
	for _, v := range []int{1, 2} {
		dir := filepath.Join(b.TempDir(), "store")
		src, _ := NewRatesSource(day)
		if _, err := ImportFrom(context.Background(), dir, src, "day", ImportOptions{}); err != nil {
			b.Fatal(err)
		}
		if v == 1 {
			downgradeStore(b, dir)
		}
		b.Run(fmt.Sprintf("v%d", v), func(b *testing.B) {
			b.ReportAllocs()
			cpu := cpuTime()
			for i := 0; i < b.N; i++ {
				st, err := OpenStore(dir, Options{})
				if err != nil {
					b.Fatal(err)
				}
				r, err := st.Window(from, to)
				if err != nil || r.Len() != 240 {
					b.Fatalf("%v, %d samples", err, r.Len())
				}
				st.Close()
			}
			b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(diskSize(dir))/samples, "bytes/OST-sample")
		})
	}
}

// BenchmarkStoreMonth is AID's scale: 30 days of 256 OSTs at 5 s (132.7
// million OST samples) imported day by day, then read back day by day,
// with the size on disk and the peak resident memory of the process.
func BenchmarkStoreMonth(b *testing.B) {
	const days = 30
	for i := 0; i < b.N; i++ {
		dir := filepath.Join(b.TempDir(), "store")
		t0 := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)
		var imp, impCPU time.Duration
		var samples float64
		for d := range days {
			day := centerDay(t0.AddDate(0, 0, d), 256, 5*time.Second, 1)
			samples += float64(day.Len() * len(day.OSTs))
			src, _ := NewRatesSource(day)
			start, cpu := time.Now(), cpuTime()
			if _, err := ImportFrom(context.Background(), dir, src, "month", ImportOptions{}); err != nil {
				b.Fatal(err)
			}
			imp += time.Since(start)
			impCPU += cpuTime() - cpu
		}
		runtime.GC()
		st, err := OpenStore(dir, Options{})
		if err != nil {
			b.Fatal(err)
		}
		start, cpu := time.Now(), cpuTime()
		var sum float64
		for d := range days {
			r, err := st.Window(t0.AddDate(0, 0, d), t0.AddDate(0, 0, d+1))
			if err != nil {
				b.Fatal(err)
			}
			_, w := r.Aggregate()
			sum += w[0]
		}
		read, readCPU := time.Since(start), cpuTime()-cpu
		st.Close()
		b.ReportMetric(samples/imp.Seconds(), "import-OST-samples/s")
		b.ReportMetric(impCPU.Seconds(), "import-month-cpu-s")
		b.ReportMetric(read.Seconds(), "read-month-s")
		b.ReportMetric(readCPU.Seconds(), "read-month-cpu-s")
		b.ReportMetric(samples/read.Seconds(), "read-OST-samples/s")
		b.ReportMetric(float64(diskSize(dir))/samples, "bytes/OST-sample")
		b.ReportMetric(float64(diskSize(dir))/1e6, "store-MB")
		b.ReportMetric(peakRSS()/1e6, "peak-RSS-MB")
	}
}

// cpuTime is the process's user and system time so far: on a machine
// shared with other work it moves less than the wall clock.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// peakRSS is the process's peak resident set (VmHWM), in bytes.
func peakRSS() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return math.NaN()
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb * 1024
		}
	}
	return math.NaN()
}

// BenchmarkLMTWrite measures the LMT SQLite writer on a day of 64 OSTs at
// 5 s (1.1 million OST_DATA rows); rows/s is the figure to compare.
func BenchmarkLMTWrite(b *testing.B) {
	r := synthRates(64, 17280, time.Unix(1_700_000_000, 0), 5*time.Second)
	dir := b.TempDir()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		path := filepath.Join(dir, "w.sqlite3")
		os.Remove(path)
		w, err := CreateLMT(path, r.OSTs, LMTWriterOptions{TZ: time.UTC})
		if err != nil {
			b.Fatal(err)
		}
		for h := range 24 {
			if err := w.Write(r.Slice(r.Time(h*720), r.Time((h+1)*720))); err != nil {
				b.Fatal(err)
			}
		}
		w.Close()
	}
	b.ReportMetric(float64(64*17280*b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkLMTRead measures OpenLMT reading that day back, hour by hour.
func BenchmarkLMTRead(b *testing.B) {
	r := synthRates(64, 17280, time.Unix(1_700_000_000, 0), 5*time.Second)
	path := filepath.Join(b.TempDir(), "r.sqlite3")
	w, err := CreateLMT(path, r.OSTs, LMTWriterOptions{TZ: time.UTC})
	if err != nil {
		b.Fatal(err)
	}
	if err := w.Write(r); err != nil {
		b.Fatal(err)
	}
	w.Close()
	b.ResetTimer()
	cpu := cpuTime()
	for i := 0; i < b.N; i++ {
		src, err := OpenLMT(path, Options{TZ: time.UTC})
		if err != nil {
			b.Fatal(err)
		}
		for h := range 24 {
			if _, err := src.Window(r.Time(h*720), r.Time((h+1)*720)); err != nil {
				b.Fatal(err)
			}
		}
		src.Close()
	}
	b.ReportMetric(float64(64*17280*b.N)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(64*17280*b.N)/(cpuTime()-cpu).Seconds(), "rows/cpu-s")
}

// BenchmarkEncodeChunk compares the chunk writers on a day of 256 OSTs at
// 5 s: version 1 (one frame) and version 2 (a frame per 15 minutes).
func BenchmarkEncodeChunk(b *testing.B) {
	day := centerDay(time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC), 256, 5*time.Second, 1)
	for _, c := range []struct {
		name string
		enc  func(int64, time.Duration, []string, [][]float64, [][]float64) ([]byte, error)
	}{{"v1", encodeChunkV1}, {"v2", encodeChunk}} {
		b.Run(c.name, func(b *testing.B) {
			cpu := cpuTime()
			for i := 0; i < b.N; i++ {
				if _, err := c.enc(day.Start.UnixNano(), day.Step, day.OSTs, day.Read, day.Write); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}
