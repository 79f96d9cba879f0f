package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"iopred/analyzer/replay"
	"iopred/internal/ordered"
	"iopred/internal/safefile"
	"iopred/predictor"
	"iopred/tracefmt"
)

func init() {
	register(&command{
		name:    "replay",
		usage:   "[--json] [--model FILE] [--save FILE] [--model-alone] [--prefetch] [--jobs N] TRACE|DIR...",
		summary: "evaluate the predictor on recorded traces, as the Omnisc'IO paper does",
		run:     runReplay,
	})
}

// errNoPrefetch is returned when --prefetch is asked for but the prefetch
// evaluation is not built in.
var errNoPrefetch = errors.New("prefetch evaluation is not available in this build")

func runReplay(args []string, stdout, stderr io.Writer) error {
	for _, a := range args {
		if a == "--prefetch" || a == "-prefetch" {
			if prefetchReplay == nil {
				return errNoPrefetch
			}
			return prefetchReplay(args, stdout, stderr)
		}
	}
	c := commands["replay"]
	fs := newFlagSet(c, stderr)
	asJSON := fs.Bool("json", false, "print JSON instead of text")
	modelPath := fs.String("model", "", "start every process from the model saved in `FILE` (second-run evaluation)")
	savePath := fs.String("save", "", "save the model after the replay to `FILE` (one trace only)")
	alone := fs.Bool("model-alone", false, "also replay the model without its baselines and show its figures beside them")
	jobs := jobsFlag(fs)
	var paths []string
	// Flags may follow the traces.
	for {
		if err := fs.Parse(args); err != nil {
			return err
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		paths = append(paths, args[0])
		args = args[1:]
	}
	if len(paths) == 0 {
		return errUsage
	}
	if err := checkJobs(*jobs); err != nil {
		return err
	}
	traces, err := tracefmt.Discover(paths...)
	if err != nil {
		return err
	}
	if len(traces) == 0 {
		return fmt.Errorf("no %s traces in %v", tracefmt.FileSuffix, paths)
	}
	if err := tracefmt.CheckTimeResolved(traces...); err != nil {
		return err
	}
	if *savePath != "" && len(traces) != 1 {
		return fmt.Errorf("--save needs exactly one trace, got %d", len(traces))
	}
	var saved []byte
	if *modelPath != "" {
		saved, err = os.ReadFile(*modelPath)
		if err != nil {
			return err
		}
		if _, err := predictor.Load(bytes.NewReader(saved)); err != nil {
			return fmt.Errorf("%s: %w", *modelPath, err)
		}
	}
	// The traces are replayed on --jobs goroutines, each with its own
	// model; the reports are taken in the order given, as one by one.
	type replayed struct {
		rep   replay.Report
		model *predictor.Model
		err   error
	}
	results := ordered.Map(len(traces), *jobs, func(i int) replayed {
		var opt replay.Options
		if saved != nil {
			// Each process starts from its own copy of the saved model.
			m, err := predictor.Load(bytes.NewReader(saved))
			if err != nil {
				return replayed{err: fmt.Errorf("%s: %w", *modelPath, err)}
			}
			opt.Model = m
		}
		var pure *replay.Report
		if *alone {
			popt := replay.Options{ModelOptions: predictor.Options{NoFallback: true}}
			if saved != nil {
				pm, err := predictor.Load(bytes.NewReader(saved))
				if err != nil {
					return replayed{err: fmt.Errorf("%s: %w", *modelPath, err)}
				}
				pm.UseBaselines(false)
				popt.Model = pm
			}
			r, _, err := replay.File(traces[i], popt)
			if err != nil {
				return replayed{err: err}
			}
			pure = &r
		}
		rep, model, err := replay.File(traces[i], opt)
		if *savePath == "" {
			model = nil // only --save keeps the model
		}
		if pure != nil {
			rep.ModelAlone = pure.Fields
		}
		return replayed{rep, model, err}
	})
	reports := make([]replay.Report, 0, len(traces))
	for _, r := range results {
		if r.err != nil {
			return r.err
		}
		if r.rep.Truncated != "" {
			fmt.Fprintf(stderr, "iopred replay: %s\n", r.rep.Truncated)
		}
		reports = append(reports, r.rep)
		if *savePath != "" {
			if err := saveModel(r.model, *savePath); err != nil {
				return err
			}
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"processes": reports})
	}
	return replay.WriteText(stdout, reports)
}

func saveModel(m *predictor.Model, path string) error {
	f, err := safefile.Create(path, 0o666)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := m.Save(f); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Commit()
}
