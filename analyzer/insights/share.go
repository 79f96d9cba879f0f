package insights

import (
	"fmt"
	"sort"

	"iopred/analyzer/job"
	"iopred/internal/msgcheck"
)

// shareMaxSizes bounds the distinct request sizes a share's collector
// keeps per direction: enough that Combine can give every size the place
// the sequential collector gives it whenever a share saw at most this
// many distinct sizes.
const shareMaxSizes = 1 << 16

// NewShareCollector returns the collector of one share of the traces (one
// rank of an analysis spread over MPI ranks): Combine joins the shares'
// collectors into the one NewCollector would have filled from all the
// traces. It keeps up to 65,536 distinct request sizes per direction
// instead of 4,096, which the combination needs to rank them as one
// collector would.
func NewShareCollector(th Thresholds) *Collector {
	c := NewCollector(th)
	c.maxSizes = shareMaxSizes
	return c
}

// Combine joins the collectors of the shares of a job's traces, in the
// order of the traces, into one collector with thresholds th (the shares'
// own). The shares are consumed.
//
// The request sizes are added share after share in the order each share
// first saw them, under the sequential collector's bound of 4,096
// distinct sizes: the result is the sequential one whenever no share saw
// more than 65,536 distinct sizes in a direction.
func Combine(th Thresholds, shares []*Collector) *Collector {
	c := NewCollector(th)
	for _, s := range shares {
		c.Procs = append(c.Procs, s.Procs...)
		for path, g := range s.Files {
			f := c.Files[path]
			if f == nil {
				c.Files[path] = g
				continue
			}
			f.Read.add(&g.Read)
			f.Write.add(&g.Write)
			for _, m := range []struct{ dst, src *MPIIO }{{&f.MPIRead, &g.MPIRead}, {&f.MPIWrite, &g.MPIWrite}} {
				m.dst.Collective += m.src.Collective
				m.dst.Independent += m.src.Independent
				m.dst.Nonblocking += m.src.Nonblocking
			}
			f.Stdio += g.Stdio
			for i, fp := range g.Procs {
				f.Procs[i] = fp // each process is in one share
			}
			if g.FirstUnixNs != 0 && (f.FirstUnixNs == 0 || g.FirstUnixNs < f.FirstUnixNs) {
				f.FirstUnixNs = g.FirstUnixNs
			}
			f.LastUnixNs = max(f.LastUnixNs, g.LastUnixNs)
		}
		for d := range 2 {
			m := c.Sizes[d]
			for _, n := range s.sizeOrder[d] {
				k := s.Sizes[d][n]
				switch {
				case m[n] > 0:
					m[n] += k
				case len(m) < c.maxSizes:
					m[n] = k
					c.sizeOrder[d] = append(c.sizeOrder[d], n)
				default:
					c.OtherSizes[d] += k
				}
			}
			c.OtherSizes[d] += s.OtherSizes[d]
		}
		// The shares' heatmap signals add up bin by bin as the ranks'
		// did in one collector (integer bytes: in any order).
		if h := s.Heatmap; h != nil && !c.addHeatmap(h.StartUnixNs, h.WidthNs, h.Write, h.Read) {
			c.HeatmapSkipped++
		}
		c.HeatmapSkipped += s.HeatmapSkipped
		c.HeatmapWithDXT = c.HeatmapWithDXT || s.HeatmapWithDXT
		if s.HeatmapBinNs != 0 {
			c.HeatmapBinNs = s.HeatmapBinNs
		}
	}
	return c
}

// wireCollector is a share's collector as MessagePack carries it.
type wireCollector struct {
	Procs []*Proc        `msgpack:"procs"`
	Files []*File        `msgpack:"files"` // by path
	Sizes [2][]SizeCount `msgpack:"sizes"` // in the order first seen
	Other [2]uint64      `msgpack:"other"`
	Th    Thresholds     `msgpack:"th"`
	// The Darshan heatmaps' signal and how it was made (Collector's
	// Heatmap fields).
	Heatmap        *job.Signal `msgpack:"heatmap"`
	HeatmapBinNs   int64       `msgpack:"heatmap_bin_ns"`
	HeatmapWithDXT bool        `msgpack:"heatmap_dxt"`
	HeatmapSkipped int         `msgpack:"heatmap_skipped"`
}

// Encode serialises a share's collector (MessagePack), once its traces
// are read.
func (c *Collector) Encode() ([]byte, error) {
	w := wireCollector{Procs: c.Procs, Other: c.OtherSizes, Th: c.th,
		Heatmap: c.Heatmap, HeatmapBinNs: c.HeatmapBinNs, HeatmapWithDXT: c.HeatmapWithDXT, HeatmapSkipped: c.HeatmapSkipped}
	for _, f := range c.Files {
		w.Files = append(w.Files, f)
	}
	sort.Slice(w.Files, func(i, j int) bool { return w.Files[i].Path < w.Files[j].Path })
	for d := range 2 {
		for _, n := range c.sizeOrder[d] {
			w.Sizes[d] = append(w.Sizes[d], SizeCount{Size: n, Count: c.Sizes[d][n]})
		}
	}
	return msgcheck.Marshal(&w)
}

// DecodeCollector reads a share's collector Encode wrote (another
// process's message, checked before use).
func DecodeCollector(b []byte) (*Collector, error) {
	var w wireCollector
	if err := msgcheck.Unmarshal(b, &w); err != nil {
		return nil, fmt.Errorf("insights: collector: %w", err)
	}
	c := NewShareCollector(w.Th)
	c.th = w.Th
	for i, p := range w.Procs {
		if p == nil {
			return nil, fmt.Errorf("insights: collector: process %d missing", i)
		}
	}
	c.Procs = w.Procs
	for _, f := range w.Files {
		if f == nil {
			return nil, fmt.Errorf("insights: collector: file missing")
		}
		if f.Procs == nil {
			f.Procs = map[int]*FileProc{}
		}
		for i, fp := range f.Procs {
			if fp == nil {
				return nil, fmt.Errorf("insights: collector: %s: process %d missing", f.Path, i)
			}
		}
		c.Files[f.Path] = f
	}
	for d := range 2 {
		if len(w.Sizes[d]) > shareMaxSizes {
			return nil, fmt.Errorf("insights: collector: %d request sizes, more than %d", len(w.Sizes[d]), shareMaxSizes)
		}
		for _, sc := range w.Sizes[d] {
			if _, dup := c.Sizes[d][sc.Size]; dup || sc.Count == 0 {
				return nil, fmt.Errorf("insights: collector: request size %d listed twice or without requests", sc.Size)
			}
			c.Sizes[d][sc.Size] = sc.Count
			c.sizeOrder[d] = append(c.sizeOrder[d], sc.Size)
		}
	}
	c.OtherSizes = w.Other
	if h := w.Heatmap; h != nil {
		if h.WidthNs <= 0 || len(h.Write) != len(h.Read) {
			return nil, fmt.Errorf("insights: collector: heatmap of %d write and %d read bins %d ns wide", len(h.Write), len(h.Read), h.WidthNs)
		}
		c.Heatmap = h
	}
	if w.HeatmapBinNs < 0 || w.HeatmapSkipped < 0 {
		return nil, fmt.Errorf("insights: collector: heatmap bins of %d ns, %d skipped", w.HeatmapBinNs, w.HeatmapSkipped)
	}
	c.HeatmapBinNs, c.HeatmapWithDXT, c.HeatmapSkipped = w.HeatmapBinNs, w.HeatmapWithDXT, w.HeatmapSkipped
	return c, nil
}
