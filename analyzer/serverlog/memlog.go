package serverlog

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// memLog is a counterLog whose readings are all in memory: the text
// sources, which are read whole.
type memLog struct {
	ost   []string
	rs    [][]reading
	first int64
	last  int64
	step  time.Duration
	src   string
	// disordered and repeated count the readings that were out of time
	// order and that repeated a time.
	disordered, repeated int
}

func (m *memLog) repairs() (int, int) { return m.disordered, m.repeated }

// newMemLog sorts the readings, finds the bounds and the native step (the
// median interval of the OST with the most readings). what names the
// source in errors.
func newMemLog(what string, ost []string, rs [][]reading) (*memLog, error) {
	m := &memLog{ost: ost, rs: rs, first: math.MaxInt64, last: math.MinInt64, src: what}
	longest := -1
	for i := range rs {
		var dis, rep int
		rs[i], dis, rep = sortReadings(rs[i])
		m.disordered += dis
		m.repeated += rep
		if len(rs[i]) == 0 {
			continue
		}
		m.first, m.last = min(m.first, rs[i][0].t), max(m.last, rs[i][len(rs[i])-1].t)
		if longest < 0 || len(rs[i]) > len(rs[longest]) {
			longest = i
		}
	}
	if longest < 0 {
		return nil, fmt.Errorf("%s: no readings", what)
	}
	ts := make([]int64, len(rs[longest]))
	for j, x := range rs[longest] {
		ts[j] = x.t
	}
	step, err := nativeStep(ts)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", what, err)
	}
	m.step = step
	return m, nil
}

func (m *memLog) names() []string { return m.ost }

func (m *memLog) what() string { return m.src }

func (m *memLog) bounds() (int64, int64, time.Duration) { return m.first, m.last, m.step }

func (m *memLog) readings(from, to int64) ([][]reading, error) {
	out := make([][]reading, len(m.rs))
	for i, rs := range m.rs {
		lo, _ := slices.BinarySearchFunc(rs, from, func(x reading, t int64) int { return cmpInt64(x.t, t) })
		hi, found := slices.BinarySearchFunc(rs, to, func(x reading, t int64) int { return cmpInt64(x.t, t) })
		if found {
			hi++
		}
		out[i] = rs[lo:hi]
	}
	return out, nil
}

func (m *memLog) close() error { return nil }
