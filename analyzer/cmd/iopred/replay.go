package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"iopred/analyzer/replay"
	"iopred/internal/safefile"
	"iopred/predictor"
	"iopred/tracefmt"
)

func init() {
	register(&command{
		name:    "replay",
		usage:   "[--json] [--model FILE] [--save FILE] [--model-alone] [--prefetch] TRACE|DIR...",
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
	reports := make([]replay.Report, 0, len(traces))
	for _, t := range traces {
		var opt replay.Options
		if saved != nil {
			// Each process starts from its own copy of the saved model.
			opt.Model, err = predictor.Load(bytes.NewReader(saved))
			if err != nil {
				return fmt.Errorf("%s: %w", *modelPath, err)
			}
		}
		var pure *replay.Report
		if *alone {
			popt := replay.Options{ModelOptions: predictor.Options{NoFallback: true}}
			if saved != nil {
				if popt.Model, err = predictor.Load(bytes.NewReader(saved)); err != nil {
					return fmt.Errorf("%s: %w", *modelPath, err)
				}
				popt.Model.UseBaselines(false)
			}
			r, _, err := replay.File(t, popt)
			if err != nil {
				return err
			}
			pure = &r
		}
		rep, model, err := replay.File(t, opt)
		if err != nil {
			return err
		}
		if pure != nil {
			rep.ModelAlone = pure.Fields
		}
		if rep.Truncated != "" {
			fmt.Fprintf(stderr, "iopred replay: %s\n", rep.Truncated)
		}
		reports = append(reports, rep)
		if *savePath != "" {
			if err := saveModel(model, *savePath); err != nil {
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
