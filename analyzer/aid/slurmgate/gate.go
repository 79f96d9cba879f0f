package slurmgate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iopred/internal/safefile"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"iopred/analyzer/aid"
	"iopred/analyzer/serverlog"
)

// Gate holds and releases the pending jobs of I/O-intensive applications
// by AID's advice. Run it with Pass from a loop (Run) or from cron.
type Gate struct {
	Sched   Scheduler
	Advisor *aid.Advisor
	// Open opens the per-OST log for one pass (a fresh view, so that a
	// source whose span grows is read up to now).
	Open func() (serverlog.Source, error)
	// MaxHold is the longest the gate holds a job; at that point it is
	// released whatever the advice.
	MaxHold time.Duration
	// Timeout bounds the wait for an advice (opening the log included).
	// Past it, or on any error, the job is not held, or is released:
	// the gate fails open. After one timeout, the other jobs of the same
	// pass fail open without waiting.
	Timeout time.Duration
	// StatePath keeps the jobs the gate holds and since when, so that a
	// restarted gate releases them in time and never releases a job
	// somebody else held.
	StatePath string
	// Log receives one JSON line per decision.
	Log io.Writer
	// Now is the clock (default time.Now).
	Now func() time.Time
	// KeepLogEvery is how often a held job's unchanged "keep" is logged
	// (default 30 s); every hold and release is logged.
	KeepLogEvery time.Duration
	// HoldFirst holds a new job of an I/O-intensive application before
	// asking about it (and releases it at once on "run"): the scheduler
	// cannot start it while the advice is computed.
	HoldFirst bool

	mu   sync.Mutex
	held map[string]time.Time // job id → when the gate held it
	// keepLogged is when a held job's decision was last logged.
	keepLogged map[string]time.Time
	waitSince  map[string]time.Time // deferred jobs: when the gate first saw them
	seen       map[string]string    // pending job → the last action logged for it
	// slow is the timeout of an advice earlier in this pass: the other
	// jobs of the pass fail open at once instead of waiting Timeout
	// each for a source that hangs.
	slow error
}

// Decision is one line of the gate's log.
type Decision struct {
	// Time is when the gate decided: after the advice, which may have
	// waited for the jobs before it in the same pass.
	Time      time.Time `json:"time"`
	Job       string    `json:"job"`
	App       string    `json:"app"`
	Action    string    `json:"action"` // hold, release, keep (held, still delay), run (not held), untouched
	Advice    string    `json:"advice,omitempty"`
	Score     float64   `json:"score"`
	Threshold float64   `json:"threshold,omitempty"`
	HeldS     float64   `json:"held_s,omitempty"`
	Reason    string    `json:"reason"`
	// AdviceMS is how long the advice took (opening the log included).
	AdviceMS float64 `json:"advice_ms"`
	Error    string  `json:"error,omitempty"`
}

func (g *Gate) keepEvery() time.Duration {
	if g.KeepLogEvery > 0 {
		return g.KeepLogEvery
	}
	return 30 * time.Second
}

func (g *Gate) now() time.Time {
	if g.Now != nil {
		return g.Now()
	}
	return time.Now()
}

func (g *Gate) log(d Decision) {
	if g.Log == nil {
		return
	}
	b, _ := json.Marshal(d)
	g.Log.Write(append(b, '\n'))
}

// Load reads the state file, if any.
func (g *Gate) Load() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.held = map[string]time.Time{}
	g.seen = map[string]string{}
	if g.StatePath == "" {
		return nil
	}
	b, err := os.ReadFile(g.StatePath)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, &g.held); err != nil {
		return fmt.Errorf("%s: %v", g.StatePath, err)
	}
	return nil
}

func (g *Gate) save() error {
	if g.StatePath == "" {
		return nil
	}
	b, _ := json.Marshal(g.held)
	return safefile.WriteFile(g.StatePath, b, 0o666)
}

// advise asks the advisor with the bounded wait. The log is opened
// inside it: a slow or dead Prometheus or database is a timeout, not a
// stuck gate.
func (g *Gate) advise(app serverlog.App, at time.Time, held time.Duration, running []aid.Running) (aid.Advice, time.Duration, error) {
	type result struct {
		a   aid.Advice
		err error
	}
	start := time.Now()
	if g.slow != nil && g.ioIntensive(app) {
		return aid.Advice{}, 0, fmt.Errorf("%v earlier in this pass", g.slow)
	}
	ch := make(chan result, 1)
	go func() {
		req := aid.Request{App: app, At: at, Running: running, Held: held, MaxHold: g.MaxHold}
		if a := g.Advisor.K.Find(app.User, app.Name, app.Nodes); a != nil && a.Class == aid.ClassIOIntensive {
			src, err := g.Open()
			if err != nil {
				ch <- result{err: err}
				return
			}
			defer src.Close()
			req.Log = src
		}
		a, err := g.Advisor.Advise(req)
		ch <- result{a, err}
	}()
	timeout := g.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	select {
	case r := <-ch:
		return r.a, time.Since(start), r.err
	case <-time.After(timeout):
		g.slow = fmt.Errorf("no advice within %v", timeout)
		return aid.Advice{}, time.Since(start), g.slow
	}
}

// ioIntensive tells whether the knowledge base knows app as I/O-intensive.
func (g *Gate) ioIntensive(app serverlog.App) bool {
	a := g.Advisor.K.Find(app.User, app.Name, app.Nodes)
	return a != nil && a.Class == aid.ClassIOIntensive
}

// Pass looks at every pending job once: holds the new jobs of
// I/O-intensive applications the advice delays, releases the held ones
// it lets run (or that reached MaxHold, or whose advice failed).
func (g *Gate) Pass(ctx context.Context) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.held == nil {
		g.held, g.seen = map[string]time.Time{}, map[string]string{}
	}
	if g.keepLogged == nil {
		g.keepLogged = map[string]time.Time{}
	}
	if g.waitSince == nil {
		g.waitSince = map[string]time.Time{}
	}
	g.slow = nil
	jobs, err := g.Sched.Jobs(ctx)
	if err != nil {
		return err
	}
	now := g.now()
	var running []aid.Running
	pending := map[string]bool{}
	for _, j := range jobs {
		if j.State == "RUNNING" && !j.Start.IsZero() {
			r := aid.Running{App: j.App, Start: j.Start}
			if j.Limit > 0 {
				r.Limit = j.Start.Add(j.Limit)
			}
			running = append(running, r)
		}
		if j.State == "PENDING" {
			pending[j.ID] = true
		}
	}
	changed := false
	// Jobs the gate held that are gone (cancelled) or were released by
	// someone else are forgotten.
	for id := range g.held {
		if !pending[id] {
			delete(g.held, id)
			changed = true
		}
	}
	for id := range g.seen {
		if !pending[id] {
			delete(g.seen, id)
			delete(g.keepLogged, id)
			delete(g.waitSince, id)
		}
	}
	sort.SliceStable(jobs, func(a, b int) bool { return jobIDLess(jobs[a].ID, jobs[b].ID) })
	for _, j := range jobs {
		if j.State != "PENDING" {
			continue
		}
		heldAt, ours := g.held[j.ID]
		if j.Waiting() && g.ioIntensive(j.App) {
			g.deferred(ctx, j, now, running)
			continue
		}
		if !ours && (!g.ioIntensive(j.App) || j.Held()) {
			// Not I/O-intensive, or held by somebody else: never touched.
			if g.seen[j.ID] == "" {
				g.seen[j.ID] = "untouched"
				reason := fmt.Sprintf("%s is not known to be I/O-intensive", j.App)
				if j.Held() {
					reason = "held by someone else (" + j.Reason + ")"
				}
				g.log(Decision{Time: now, Job: j.ID, App: j.App.String(), Action: "untouched", Reason: reason})
			}
			continue
		}
		var held time.Duration
		if ours {
			held = now.Sub(heldAt)
		} else if g.HoldFirst && g.seen[j.ID] == "" {
			// Held before the advice is asked, so that the scheduler
			// cannot start it meanwhile; released at once below unless
			// the advice says delay.
			if err := g.Sched.Hold(ctx, j.ID); err == nil {
				ours, heldAt = true, now
				g.held[j.ID] = now
				changed = true
			}
		}
		a, took, err := g.advise(j.App, now, held, running)
		d := Decision{Time: g.now(), Job: j.ID, App: j.App.String(), Advice: a.Advice, Score: a.Score, Threshold: a.Threshold,
			Reason: a.Reason, AdviceMS: float64(took.Microseconds()) / 1e3}
		if ours {
			d.HeldS = held.Seconds()
		}
		release := err != nil || a.Advice != "delay" || (g.MaxHold > 0 && held >= g.MaxHold)
		switch {
		case err != nil:
			d.Error, d.Reason = err.Error(), "fail open: no advice"
		case ours && a.Advice == "delay" && release:
			d.Reason = fmt.Sprintf("hold limit %v reached; %s", g.MaxHold, a.Reason)
		}
		fresh := ours && held == 0
		switch {
		case fresh && release:
			d.Action = "run"
			if err := g.Sched.Release(ctx, j.ID); err != nil {
				d.Error = err.Error()
			} else {
				delete(g.held, j.ID)
				changed = true
			}
		case fresh:
			d.Action = "hold"
		case ours && release:
			d.Action = "release"
			if err := g.Sched.Release(ctx, j.ID); err != nil {
				d.Error = err.Error()
			} else {
				delete(g.held, j.ID)
				changed = true
			}
		case ours:
			d.Action = "keep"
		case release:
			d.Action = "run"
		default:
			d.Action = "hold"
			if err := g.Sched.Hold(ctx, j.ID); err != nil {
				d.Error = err.Error()
			} else {
				g.held[j.ID] = now
				changed = true
			}
		}
		// A job let run that still waits for nodes is asked again every
		// pass (it is held if the load rises) but logged once, also when
		// the advice keeps failing: "run" asks nothing of the scheduler,
		// and a log line per pass while Prometheus is down says nothing
		// new. A held job's unchanged "keep" is logged every KeepLogEvery.
		prev := g.seen[j.ID]
		letRun := prev == "run" || prev == "release"
		switch {
		case d.Action == "run" && letRun:
		case d.Error != "":
			g.log(d)
		case d.Action == "keep" && prev == "keep" && now.Sub(g.keepLogged[j.ID]) < g.keepEvery():
		default:
			g.log(d)
			if d.Action == "keep" || d.Action == "hold" {
				g.keepLogged[j.ID] = now
			}
		}
		g.seen[j.ID] = d.Action
	}
	if changed {
		return g.save()
	}
	return nil
}

// deferred decides about a job the job_submit plugin made wait: it is
// started now when the advice says run or fails (fail open); else it
// keeps waiting, at most until its begin time, which Slurm enforces
// whether the gate runs or not.
func (g *Gate) deferred(ctx context.Context, j Job, now time.Time, running []aid.Running) {
	since, ok := g.waitSince[j.ID]
	if !ok {
		since = now
		g.waitSince[j.ID] = now
	}
	held := now.Sub(since)
	prev := g.seen[j.ID]
	if prev == "run" || prev == "release" {
		// Let start already; Slurm shows the begin time until its next
		// pass. Started again (harmless), neither asked about nor
		// logged again.
		if err := g.Sched.StartNow(ctx, j.ID); err != nil {
			g.log(Decision{Time: now, Job: j.ID, App: j.App.String(), Action: prev, HeldS: held.Seconds(),
				Reason: "starting it again", Error: err.Error()})
		}
		return
	}
	a, took, err := g.advise(j.App, now, held, running)
	d := Decision{Time: g.now(), Job: j.ID, App: j.App.String(), Advice: a.Advice, Score: a.Score, Threshold: a.Threshold,
		Reason: a.Reason, AdviceMS: float64(took.Microseconds()) / 1e3, HeldS: held.Seconds()}
	start := err != nil || a.Advice != "delay" || (g.MaxHold > 0 && held >= g.MaxHold)
	if err != nil {
		d.Error, d.Reason = err.Error(), "fail open: no advice"
	}
	switch {
	case start:
		d.Action = "release"
		if prev == "" {
			d.Action = "run"
		}
		if err := g.Sched.StartNow(ctx, j.ID); err != nil {
			d.Error = err.Error()
		}
	case prev == "":
		d.Action = "hold"
	default:
		d.Action = "keep"
	}
	if d.Action != "keep" || now.Sub(g.keepLogged[j.ID]) >= g.keepEvery() || d.Error != "" {
		g.log(d)
		g.keepLogged[j.ID] = now
	}
	g.seen[j.ID] = d.Action
}

// WriteApps writes the I/O-intensive applications, one USER/NAME/NODES
// a line, for job_submit.lua; atomically, so that the plugin never reads
// half a file.
func WriteApps(path string, k *aid.Knowledge) error {
	var b []byte
	for _, a := range k.Apps {
		if a.Class == aid.ClassIOIntensive {
			b = append(b, a.ID()+"\n"...)
		}
	}
	return safefile.WriteFile(path, b, 0o666)
}

// ReleaseAll releases every job the gate holds and starts every job
// waiting for it: the switch-off.
func (g *Gate) ReleaseAll(ctx context.Context) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	var errs []error
	// Jobs the job_submit plugin made wait start now too.
	if jobs, err := g.Sched.Jobs(ctx); err != nil {
		errs = append(errs, err)
	} else {
		for _, j := range jobs {
			if j.State == "PENDING" && j.Waiting() {
				d := Decision{Time: g.now(), Job: j.ID, App: j.App.String(), Action: "release", Reason: "gate stopping: every waiting job started"}
				if err := g.Sched.StartNow(ctx, j.ID); err != nil {
					d.Error = err.Error()
					errs = append(errs, err)
				}
				g.log(d)
			}
		}
	}
	for id, at := range g.held {
		d := Decision{Time: g.now(), Job: id, Action: "release", HeldS: g.now().Sub(at).Seconds(), Reason: "gate stopping: every held job released"}
		if err := g.Sched.Release(ctx, id); err != nil {
			d.Error = err.Error()
			errs = append(errs, err)
		} else {
			delete(g.held, id)
		}
		g.log(d)
	}
	return errors.Join(append(errs, g.save())...)
}

// Held returns the jobs the gate holds, and since when.
func (g *Gate) Held() map[string]time.Time {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make(map[string]time.Time, len(g.held))
	for k, v := range g.held {
		out[k] = v
	}
	return out
}

// Run makes a pass every interval until ctx ends, then releases every
// job it holds. A failed pass (squeue down) is logged and retried.
func (g *Gate) Run(ctx context.Context, interval time.Duration, errLog io.Writer) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if err := g.Pass(ctx); err != nil && ctx.Err() == nil {
			fmt.Fprintf(errLog, "iopred aid gate: %v\n", err)
		}
		select {
		case <-ctx.Done():
			rctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			return g.ReleaseAll(rctx)
		case <-t.C:
		}
	}
}

// DefaultStatePath is where the gate keeps its holds by default: beside
// the knowledge base.
func DefaultStatePath(kb string) string { return filepath.Join(kb, "gate-held.json") }

// jobIDLess orders Slurm job ids as they were submitted: by the numbers
// in them, compared as numbers ("9" before "10", "7_2" before "7_10",
// array and heterogeneous job ids included), the rest as text.
func jobIDLess(a, b string) bool {
	for a != "" && b != "" {
		na, ra := digitsPrefix(a)
		nb, rb := digitsPrefix(b)
		switch {
		case na != "" && nb != "":
			na, nb = strings.TrimLeft(na, "0"), strings.TrimLeft(nb, "0")
			if len(na) != len(nb) {
				return len(na) < len(nb)
			}
			if na != nb {
				return na < nb
			}
			a, b = ra, rb
		case a[0] != b[0]:
			return a[0] < b[0]
		default:
			a, b = a[1:], b[1:]
		}
	}
	return len(a) < len(b)
}

// digitsPrefix splits s into its leading decimal digits and the rest.
func digitsPrefix(s string) (digits, rest string) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i], s[i:]
}
