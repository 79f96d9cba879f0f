package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"iopred/analyzer/ftio"
	"iopred/tracefmt"
	"iopred/tracefmt/darshan"
)

// heatmapSignal is the bandwidth signal of Darshan logs that hold no DXT
// but HEATMAP records: each rank's bytes per time bin, of the highest
// layer with a heatmap (MPI-IO, else POSIX) plus stdio, as one request a
// bin spanning it, so that a byte counts once.
type heatmapSignal struct {
	srcs     []ftio.Source
	binWidth float64 // seconds: the time resolution
	layers   []string
	logs     []string
	dxt      bool // some log has DXT segments, left aside (--signal heatmap)
}

// heatmapSources returns the heatmap signal when every input is a Darshan
// log without DXT segments and with heatmaps (with withDXT, logs with
// DXT segments too, whose heatmaps are then read instead); nil otherwise,
// and the analyses take their usual path.
func heatmapSources(paths []string, mode ftio.Mode, withDXT bool) (*heatmapSignal, error) {
	names, err := tracefmt.Discover(paths...)
	if err != nil || len(names) == 0 {
		return nil, nil
	}
	var logs []string
	for _, n := range names {
		file, _, _ := strings.Cut(n, "#")
		if f, err := tracefmt.FormatOf(file); err != nil || f != "darshan" {
			return nil, nil
		}
		if len(logs) == 0 || logs[len(logs)-1] != file {
			logs = append(logs, file)
		}
	}
	sig := &heatmapSignal{logs: logs}
	for _, file := range logs {
		l, _ := darshan.Open(file)
		if l == nil || (len(l.DXT) > 0 && !withDXT) || len(l.Heatmaps) == 0 {
			return nil, nil
		}
		sig.dxt = sig.dxt || len(l.DXT) > 0
		top := "POSIX"
		for _, h := range l.Heatmaps {
			if h.Layer == "MPIIO" {
				top = "MPIIO"
			}
		}
		sig.layers = []string{top, "STDIO"}
		var reqs []ftio.Request
		for _, h := range l.Heatmaps {
			if h.Layer != top && h.Layer != "STDIO" || !(h.BinWidth > 0) {
				continue
			}
			sig.binWidth = h.BinWidth
			for i := range h.Writes {
				var b int64
				if mode != ftio.ModeRead {
					b += h.Writes[i]
				}
				if mode != ftio.ModeWrite {
					b += h.Reads[i]
				}
				if b <= 0 {
					continue
				}
				// Bins count from the job's start, as the traces' times do.
				start := float64(i) * h.BinWidth
				reqs = append(reqs, ftio.Request{Start: start, End: start + h.BinWidth, Bandwidth: float64(b) / h.BinWidth})
			}
		}
		sig.srcs = append(sig.srcs, ftio.Slice(reqs))
	}
	return sig, nil
}

// runPeriodHeatmap finds the period in a heatmap signal, sampled at its
// bins unless --fs says otherwise, and says the resolution it had.
func runPeriodHeatmap(sig *heatmapSignal, opt ftio.Options, fsSet, asJSON bool, stdout io.Writer) error {
	if !fsSet {
		opt.Fs = 1 / sig.binWidth
	}
	why := "no DXT in"
	if sig.dxt {
		why = "DXT left aside (--signal heatmap) in"
	}
	what := fmt.Sprintf("Darshan HEATMAP (%s), bins of %.4g s: %s %s, so periods shorter than two bins (%.4g s) cannot be seen",
		strings.Join(sig.layers, " and "), sig.binWidth, why, strings.Join(sig.logs, ", "), 2*sig.binWidth)
	res, err := ftio.AnalyzeSources(sig.srcs, opt)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if asJSON {
		return json.NewEncoder(stdout).Encode(struct {
			Signal      string  `json:"signal"`
			ResolutionS float64 `json:"time_resolution_s"`
			Note        string  `json:"note"`
			ftio.Result
		}{"heatmap", sig.binWidth, what, res})
	}
	if _, err := fmt.Fprintf(stdout, "signal: %s\n", what); err != nil {
		return err
	}
	return ftio.WriteText(stdout, res)
}
