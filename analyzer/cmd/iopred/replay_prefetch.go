package main

import (
	"encoding/json"
	"io"

	"iopred/analyzer/prefetch"
	"iopred/predictor/pattern"
	"iopred/tracefmt"
)

func init() {
	prefetchReplay = runPrefetchReplay
}

// runPrefetchReplay is `iopred replay --prefetch [--json] RUN [RUN...]`:
// each RUN is a trace or a directory of traces; the first run trains the
// Markov predictor and the others are evaluated; with one run, each read
// stream is split in halves.
func runPrefetchReplay(args []string, stdout, stderr io.Writer) error {
	c := &command{name: "replay --prefetch", usage: "[--json] [--block N] [--readahead N] [--depth N] [--window N] TRAINING_RUN EVALUATION_RUN... | RUN",
		summary: "score next-read prediction (pattern, Markov over blocks, read-ahead) on read traces"}
	fs := newFlagSet(c, stderr)
	fs.Bool("prefetch", true, "evaluate prefetching (this mode)")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	block := fs.Int64("block", 8192, "Markov model block size in `bytes`")
	readAhead := fs.Int64("readahead", 128<<10, "read-ahead window in `bytes`")
	depth := fs.Int("depth", 1, "requests the pattern predictor prefetches ahead")
	window := fs.Int("window", pattern.DefaultWindow, "pattern detector window")
	runs, err := parseFlagsAnywhere(fs, args)
	if err != nil {
		return err
	}
	if len(runs) == 0 {
		return errUsage
	}
	var training, evaluation []string
	if len(runs) == 1 {
		if evaluation, err = tracefmt.Discover(runs[0]); err != nil {
			return err
		}
	} else {
		if training, err = tracefmt.Discover(runs[0]); err != nil {
			return err
		}
		if evaluation, err = tracefmt.Discover(runs[1:]...); err != nil {
			return err
		}
	}
	if err := tracefmt.CheckTimeResolved(evaluation...); err != nil {
		return err
	}
	rep, evalErr := prefetch.Evaluate(training, evaluation,
		prefetch.Options{MarkovBlock: *block, ReadAhead: *readAhead, Depth: *depth, Window: *window})
	if rep == nil {
		return evalErr
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(rep)
	} else {
		err = prefetch.WriteText(stdout, rep)
	}
	if err != nil {
		return err
	}
	return evalErr
}
