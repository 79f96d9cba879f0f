package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"iopred/analyzer/replay"
	"iopred/internal/msgcheck"
	"iopred/internal/ordered"
	"iopred/internal/safefile"
	"iopred/predictor"
	"iopred/tracefmt"
)

func init() {
	register(&command{
		name:    "replay",
		usage:   "[--json] [--model FILE] [--save FILE] [--model-alone] [--prefetch] [--jobs N] [--mpi] TRACE|DIR...",
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
	useMPI := mpiFlag(fs)
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
	if *useMPI && *savePath != "" {
		return errors.New("--save keeps one trace's model: it is not spread over --mpi ranks")
	}
	var results []replayed
	if *useMPI {
		m, err := startMPI()
		if err != nil {
			return err
		}
		defer m.finish()
		var setupErr error
		var mine []replayed
		lo, hi := 0, 0
		rs, err := newReplaySetup(paths, *modelPath, *savePath, *alone)
		if err == nil {
			lo, hi = m.share(len(rs.traces))
			mine = ordered.Map(hi-lo, *jobs, func(i int) replayed { return rs.one(lo + i) })
		} else {
			setupErr = err
		}
		results, err = gatherReplays(m, mine, setupErr)
		if !m.root() {
			return nil // rank 0 prints
		}
		if err != nil {
			return err
		}
		if len(results) != len(rs.traces) {
			return fmt.Errorf("MPI ranks sent %d replays for %d traces", len(results), len(rs.traces))
		}
	} else {
		rs, err := newReplaySetup(paths, *modelPath, *savePath, *alone)
		if err != nil {
			return err
		}
		// The traces are replayed on --jobs goroutines, each with its
		// own model; the reports are taken in the order given, as one by
		// one.
		results = ordered.Map(len(rs.traces), *jobs, rs.one)
	}
	reports := make([]replay.Report, 0, len(results))
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

// replayed is one trace's replay: its report, the model when --save
// keeps it, or why it failed.
type replayed struct {
	rep   replay.Report
	model *predictor.Model
	err   error
}

// replaySetup is what every trace's replay shares: the traces and the
// saved model each process starts from.
type replaySetup struct {
	traces          []string
	saved           []byte
	modelPath, save string
	alone           bool
}

// newReplaySetup finds the traces and reads the model they start from.
func newReplaySetup(paths []string, modelPath, savePath string, alone bool) (*replaySetup, error) {
	traces, err := tracefmt.Discover(paths...)
	if err != nil {
		return nil, err
	}
	if len(traces) == 0 {
		return nil, fmt.Errorf("no %s traces in %v", tracefmt.FileSuffix, paths)
	}
	if err := tracefmt.CheckTimeResolved(traces...); err != nil {
		return nil, err
	}
	if savePath != "" && len(traces) != 1 {
		return nil, fmt.Errorf("--save needs exactly one trace, got %d", len(traces))
	}
	rs := &replaySetup{traces: traces, modelPath: modelPath, save: savePath, alone: alone}
	if modelPath != "" {
		rs.saved, err = os.ReadFile(modelPath)
		if err != nil {
			return nil, err
		}
		if _, err := predictor.Load(bytes.NewReader(rs.saved)); err != nil {
			return nil, fmt.Errorf("%s: %w", modelPath, err)
		}
	}
	return rs, nil
}

// one replays trace i.
func (rs *replaySetup) one(i int) replayed {
	var opt replay.Options
	if rs.saved != nil {
		// Each process starts from its own copy of the saved model.
		m, err := predictor.Load(bytes.NewReader(rs.saved))
		if err != nil {
			return replayed{err: fmt.Errorf("%s: %w", rs.modelPath, err)}
		}
		opt.Model = m
	}
	var pure *replay.Report
	if rs.alone {
		popt := replay.Options{ModelOptions: predictor.Options{NoFallback: true}}
		if rs.saved != nil {
			pm, err := predictor.Load(bytes.NewReader(rs.saved))
			if err != nil {
				return replayed{err: fmt.Errorf("%s: %w", rs.modelPath, err)}
			}
			pm.UseBaselines(false)
			popt.Model = pm
		}
		r, _, err := replay.File(rs.traces[i], popt)
		if err != nil {
			return replayed{err: err}
		}
		pure = &r
	}
	rep, model, err := replay.File(rs.traces[i], opt)
	if rs.save == "" {
		model = nil // only --save keeps the model
	}
	if pure != nil {
		rep.ModelAlone = pure.Fields
	}
	return replayed{rep, model, err}
}

// replayWire is one trace's replay as it travels to rank 0.
type replayWire struct {
	Report replay.Report `msgpack:"r"`
	Err    string        `msgpack:"e"`
}

// gatherReplays sends this rank's replays (or why it has none) to rank 0,
// which gets every rank's in the order of the traces; the other ranks get
// nil.
func gatherReplays(m *mpiRun, mine []replayed, err error) ([]replayed, error) {
	var parts [][]byte
	if err == nil {
		wire := make([]replayWire, len(mine))
		for i, r := range mine {
			wire[i].Report = r.rep
			if r.err != nil {
				wire[i] = replayWire{Err: r.err.Error()}
			}
		}
		var b []byte
		b, err = msgcheck.Marshal(wire)
		parts = [][]byte{b}
	}
	all, err := m.gather(parts, err)
	if err != nil || !m.root() {
		return nil, err
	}
	var out []replayed
	for r, ps := range all {
		if len(ps) != 1 {
			return nil, fmt.Errorf("MPI rank %d sent %d parts, not 1", r, len(ps))
		}
		var wire []replayWire
		if err := msgcheck.Unmarshal(ps[0], &wire); err != nil {
			return nil, fmt.Errorf("MPI rank %d: %w", r, err)
		}
		all[r] = nil
		for _, w := range wire {
			x := replayed{rep: w.Report}
			if w.Err != "" {
				x = replayed{err: errors.New(w.Err)}
			}
			out = append(out, x)
		}
	}
	return out, nil
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
