package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"iopred/tracefmt"
)

func init() {
	register(&command{
		name:    "events",
		usage:   "[--op OP,...] [--path GLOB] TRACE|DIR...",
		summary: "print every event, and every region of the application's own work a DFTracer trace records (layer \"region\"), as one JSON object per line (status 1 after a truncated or corrupt trace)",
		run:     runEvents,
	})
}

// parseFlagsAnywhere parses fs over args, where flags may come before,
// between or after the positional arguments, which it returns.
func parseFlagsAnywhere(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// eventFilter selects events by operation and path.
type eventFilter struct {
	ops  map[string]bool // nil: every operation
	glob string          // "": every path
}

func (f *eventFilter) match(e *tracefmt.Event) bool {
	if f.ops != nil && !f.ops[e.Op] {
		return false
	}
	if f.glob != "" {
		full, _ := filepath.Match(f.glob, e.Path)
		base, _ := filepath.Match(f.glob, filepath.Base(e.Path))
		return full || (base && e.Path != "")
	}
	return true
}

// matchRegion selects a region by its name as an operation; regions name
// no file, so a path filter leaves them out.
func (f *eventFilter) matchRegion(g *tracefmt.Region) bool {
	return (f.ops == nil || f.ops[g.Name]) && f.glob == ""
}

// appendRegion appends a region as one JSON object with the fields an
// event's line has where they apply: layer "region", op its name, cat its
// category, args its arguments.
func appendRegion(b []byte, g *tracefmt.Region, h tracefmt.Header) []byte {
	line := struct {
		Layer   string            `json:"layer"`
		Op      string            `json:"op"`
		Cat     string            `json:"cat"`
		StartNs int64             `json:"start_ns"`
		EndNs   int64             `json:"end_ns"`
		Tid     int32             `json:"tid"`
		PID     int               `json:"pid"`
		Rank    *int              `json:"rank"`
		Args    map[string]string `json:"args,omitempty"`
	}{"region", g.Name, g.Category, g.StartNs, g.EndNs, g.Tid, h.PID, h.Rank, g.Args}
	out, _ := json.Marshal(line) // strings and numbers only: cannot fail
	return append(b, out...)
}

func runEvents(args []string, stdout, stderr io.Writer) error {
	c := commands["events"]
	fs := newFlagSet(c, stderr)
	ops := fs.String("op", "", "print only these operations (comma-separated, e.g. `write,pwrite`)")
	glob := fs.String("path", "", "print only events on files whose path or base name matches this shell `GLOB`")
	paths, err := parseFlagsAnywhere(fs, args)
	if err != nil {
		return err
	}
	if len(paths) == 0 {
		return errUsage
	}
	filter := eventFilter{glob: *glob}
	if _, err := filepath.Match(*glob, ""); err != nil {
		return fmt.Errorf("--path %q: %v", *glob, err)
	}
	if *ops != "" {
		filter.ops = map[string]bool{}
		for _, op := range strings.Split(*ops, ",") {
			filter.ops[strings.TrimSpace(op)] = true
		}
	}
	traces, err := tracefmt.Discover(paths...)
	if err != nil {
		return err
	}
	if err := tracefmt.CheckTimeResolved(traces...); err != nil {
		return err
	}
	out := bufio.NewWriterSize(stdout, 64<<10)
	var readErrs []error
	for _, t := range traces {
		// A trace that cannot be read to its end does not stop the others;
		// a closed output does.
		if err := printEvents(out, t, &filter); errors.Is(err, errWrite) {
			return err
		} else if err != nil {
			readErrs = append(readErrs, err)
		}
	}
	if err := out.Flush(); err != nil {
		return err
	}
	return errors.Join(readErrs...)
}

// errWrite marks a failure to write the output (a closed pipe): it stops
// the command at once.
var errWrite = errors.New("writing output")

func printEvents(out *bufio.Writer, path string, filter *eventFilter) error {
	r, err := tracefmt.Open(path)
	if err != nil {
		return err
	}
	defer r.Close()
	// Each line names the process's parent too: the process tree of a job
	// whose processes fork (AppendJSON knows the event, not its header).
	ppid := strconv.AppendInt([]byte(`,"ppid":`), int64(r.Header().PPID), 10)
	var line []byte
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		switch {
		case rec.Region != nil && filter.matchRegion(rec.Region):
			line = appendRegion(line[:0], rec.Region, r.Header())
		case rec.Event != nil && filter.match(rec.Event):
			line = rec.Event.AppendJSON(line[:0])
		default:
			continue
		}
		line = append(append(line[:len(line)-1], ppid...), "}\n"...)
		if _, err := out.Write(line); err != nil {
			return fmt.Errorf("%w: %v", errWrite, err)
		}
	}
}
