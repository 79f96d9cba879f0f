package summary

import (
	"fmt"
	"io"
	"sort"

	"iopred/tracefmt"
)

// ContextUse is one entry of a trace's context table.
type ContextUse struct {
	ID     uint64           `json:"id"`
	Events uint64           `json:"events"` // events recorded from this call stack
	Frames []tracefmt.Frame `json:"frames"` // innermost first
}

// Contexts reads the trace at path and returns its context table, the most
// used contexts first (ties by id). Contexts defined but never used by an
// event are listed with 0 events. On a truncated or corrupt trace it
// returns the table of what could be read, with the reader's error.
func Contexts(path string) ([]ContextUse, error) {
	counts := map[uint64]uint64{}
	r, err := tracefmt.Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	readErr := r.Each(func(rec tracefmt.Record) error {
		if rec.Event != nil && rec.Event.Ctx != 0 {
			counts[rec.Event.Ctx]++
		}
		return nil
	})
	out := make([]ContextUse, 0, len(r.Contexts()))
	for id, c := range r.Contexts() {
		out = append(out, ContextUse{ID: id, Events: counts[id], Frames: c.Frames})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Events != out[j].Events {
			return out[i].Events > out[j].Events
		}
		return out[i].ID < out[j].ID
	})
	return out, readErr
}

// WriteContextsText prints a context table: one block per context, its id
// and event count, then its frames as module+offset (function), innermost
// first.
func WriteContextsText(w io.Writer, ctxs []ContextUse) error {
	for i, c := range ctxs {
		if i > 0 {
			if _, err := fmt.Fprintln(w); err != nil {
				return err
			}
		}
		plural := "s"
		if c.Events == 1 {
			plural = ""
		}
		if _, err := fmt.Fprintf(w, "context %d: %d event%s\n", c.ID, c.Events, plural); err != nil {
			return err
		}
		for j, f := range c.Frames {
			if _, err := fmt.Fprintf(w, "  #%-2d %s  %s\n", j, FormatFrame(f), f.Module); err != nil {
				return err
			}
		}
		if len(c.Frames) == 0 {
			if _, err := fmt.Fprintln(w, "  (no frames)"); err != nil {
				return err
			}
		}
	}
	return nil
}
