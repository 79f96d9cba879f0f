package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	"iopred/analyzer/ftio"
	"iopred/analyzer/synth"
	"iopred/internal/safefile"
	"iopred/tracefmt"
)

func init() {
	register(&command{
		name:    "synth",
		usage:   "[--iterations N] [--compute S] [--compute-std S] [--delay S] [--procs P] [--template TRACE...] [--noise-rate R] [--format iopred|ftio] -o DIR|FILE",
		summary: "generate periodic I/O traces (FTIO paper, section 5) as an iopred trace set or FTIO JSON lines",
		run:     runSynth,
	})
}

func runSynth(args []string, stdout, stderr io.Writer) error {
	c := commands["synth"]
	fs := newFlagSet(c, stderr)
	iters := fs.Int("iterations", 20, "number of iterations (compute phase then I/O phase)")
	compute := fs.Float64("compute", 10, "mean compute phase length in `seconds`")
	computeStd := fs.Float64("compute-std", 0, "standard deviation of the compute phase length in `seconds` (normal, truncated to > 0)")
	delay := fs.Float64("delay", 0, "mean per-process start delay of each I/O phase in `seconds` (exponential)")
	procs := fs.Int("procs", 8, "processes of the synthetic burst")
	count := fs.Int("requests", 20, "requests per process in the synthetic burst")
	size := fs.Int64("size", 1<<20, "bytes per request of the synthetic burst")
	bw := fs.Float64("bw", 100e6, "bandwidth in bytes/s of one process in the synthetic burst")
	read := fs.Bool("read", false, "the burst (or template) reads instead of writing")
	template := fs.Bool("template", false, "the arguments are traces (iopred or FTIO; one process per file) whose requests form the I/O phase")
	noiseRate := fs.Float64("noise-rate", 0, "noise requests per second and process")
	noiseBytes := fs.Int64("noise-bytes", 4096, "bytes per noise request")
	noiseBW := fs.Float64("noise-bw", 1e6, "bandwidth in bytes/s of a noise request")
	seed := fs.Uint64("seed", 1, "random seed")
	format := fs.String("format", "iopred", "output: iopred (a trace set in a directory) or ftio (JSON lines file)")
	out := fs.String("o", "", "output directory (iopred) or file (ftio)")
	paths, err := parseFlagsAnywhere(fs, args)
	if err != nil {
		return err
	}
	if *out == "" || (*template && len(paths) == 0) || (!*template && len(paths) > 0) {
		return errUsage
	}
	phase := synth.Burst(*procs, *count, *size, *bw, !*read)
	if *template {
		if phase, err = loadTemplate(paths, !*read); err != nil {
			return err
		}
	}
	cfg := synth.Config{Iterations: *iters, ComputeMean: *compute, ComputeStd: *computeStd, DelayMean: *delay,
		Phase: phase, NoiseRate: *noiseRate, NoiseBytes: *noiseBytes, NoiseBandwidth: *noiseBW, Seed: *seed}
	var plan synth.Plan
	switch *format {
	case "iopred":
		if err := os.MkdirAll(*out, 0o755); err != nil {
			return err
		}
		set := &synth.TraceSet{Dir: *out}
		plan, err = synth.Generate(cfg, set)
		if cerr := set.Close(); err == nil {
			err = cerr
		}
	case "ftio":
		f, ferr := safefile.Create(*out, 0o666)
		if ferr != nil {
			return ferr
		}
		defer f.Close()
		bw := bufio.NewWriterSize(f, 1<<20)
		lines := &synth.FTIOLines{W: bw}
		plan, err = synth.Generate(cfg, lines)
		err = errors.Join(err, lines.Close(), bw.Flush())
		if err == nil {
			err = f.Commit()
		}
	default:
		return fmt.Errorf("unknown --format %q (want iopred or ftio)", *format)
	}
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%d iterations, %d processes, %.6g s; mean iteration (the period to find) %.6g s\n",
		*iters, len(phase.Procs), plan.End, plan.MeanIteration())
	return err
}

// loadTemplate reads each trace file as one process of the I/O phase.
func loadTemplate(paths []string, write bool) (synth.Template, error) {
	files, err := tracefmt.Discover(paths...)
	if err != nil {
		return synth.Template{}, err
	}
	mode := ftio.ModeRead
	if write {
		mode = ftio.ModeWrite
	}
	var procs [][]synth.Request
	for _, f := range files {
		src, err := ftio.FileSource([]string{f}, mode, nil)
		if err != nil {
			return synth.Template{}, err
		}
		var rs []synth.Request
		err = src(func(r ftio.Request) error {
			rs = append(rs, synth.Request{Start: r.Start, End: r.End, Write: write,
				Bytes: int64(math.Round(r.Bandwidth * (r.End - r.Start)))})
			return nil
		})
		if err != nil {
			return synth.Template{}, err
		}
		procs = append(procs, rs)
	}
	return synth.TemplateFrom(procs)
}
