package aid

import (
	"context"
	"math"
	"testing"
	"time"

	"iopred/analyzer/serverlog"
)

// dayOfLog is a day of 256 OSTs at 5 s: background with a checkpoint of
// 64 OSTs every 10 minutes.
func dayOfLog(b *testing.B) serverlog.Source {
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	r := ratesOf(256, start, 17280, func(o, t int) float64 {
		v := 3e6 * (1 + 0.3*math.Sin(float64(o*7+t)))
		if t%120 < 12 && o < 64 {
			v += 300e6
		}
		return v
	})
	src, err := serverlog.NewRatesSource(r)
	if err != nil {
		b.Fatal(err)
	}
	return src
}

// BenchmarkLearnDay learns one day of 256 OSTs at 5 s (8.8 million OST
// samples) into a new knowledge base: the cost of a daily increment
// without the source's own decoding.
func BenchmarkLearnDay(b *testing.B) {
	src := dayOfLog(b)
	jobs := []serverlog.Job{{ID: "1", User: "ana", Name: "ckpt", Nodes: 64,
		Start: time.Date(2024, 1, 1, 1, 0, 0, 0, time.UTC), End: time.Date(2024, 1, 1, 5, 0, 0, 0, time.UTC)}}
	for b.Loop() {
		if _, err := Learn(context.Background(), b.TempDir(), LearnInput{Source: src, Jobs: jobs}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAdvise is one piece of advice over 256 OSTs: the IOLT of the
// last 20 minutes, the scores and the decision.
func BenchmarkAdvise(b *testing.B) {
	src := dayOfLog(b)
	k := &Knowledge{Apps: []AppInfo{{User: "ana", Name: "ckpt", Nodes: 64, Class: ClassIOIntensive, RunS: 7200,
		Pattern: Pattern{OSTFootprint: 64, Throughput: 19e9, IntervalS: 600, BurstS: 60}}}}
	a := NewAdvisor(k, nil)
	req := Request{App: serverlog.App{User: "ana", Name: "ckpt", Nodes: 64}, At: time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC), Log: src,
		Running: []Running{{App: serverlog.App{User: "ana", Name: "ckpt", Nodes: 64}, Start: time.Date(2024, 1, 1, 11, 55, 0, 0, time.UTC)}}}
	for b.Loop() {
		if _, err := a.Advise(req); err != nil {
			b.Fatal(err)
		}
	}
}
