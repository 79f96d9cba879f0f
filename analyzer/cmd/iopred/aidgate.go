package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"iopred/analyzer/aid"
	"iopred/analyzer/aid/slurmgate"
	"iopred/analyzer/serverlog"
)

// aidGate runs the Slurm gate: iopred aid gate --kb KB --prometheus URL ...
func aidGate(args []string, stdout, stderr io.Writer) error {
	fs := aidFlagSet("gate", "--kb DIR --prometheus URL|--lmt SRC|... [--interval 10s] [--max-hold 1h] [--timeout 5s] [--log FILE] [--once]", stderr)
	var f serverlog.Flags
	f.Register(fs, false)
	kbDir := fs.String("kb", "", "knowledge base `directory`")
	interval := fs.Duration("interval", 10*time.Second, "time between two looks at the pending jobs")
	maxHold := fs.Duration("max-hold", time.Hour, "longest hold: a job held this long is released whatever the advice")
	timeout := fs.Duration("timeout", 5*time.Second, "longest wait for one advice; past it the job is not held (fail open)")
	logPath := fs.String("log", "", "decision log `file` (JSON lines, appended); default: standard output")
	state := fs.String("state", "", "`file` of the jobs the gate holds (default: KB/gate-held.json)")
	once := fs.Bool("once", false, "one pass, then exit without releasing (for cron)")
	release := fs.Bool("release-all", false, "release every job the gate holds, then exit (switching the gate off)")
	slow := fs.Float64("slowdown", 1.5, "acceptable I/O slowdown factor")
	window := fs.Duration("window", 5*time.Minute, "width of one window of the load table")
	windows := fs.Int("windows", 4, "windows in the load table")
	weights := fs.String("weights", "", "weights `file` from iopred aid train (default: the shipped ones)")
	squeue := fs.String("squeue", "squeue", "squeue `command`")
	scontrol := fs.String("scontrol", "scontrol", "scontrol `command`")
	holdFirst := fs.Bool("hold-first", true, "hold a new I/O-intensive job while its advice is computed (released at once on run)")
	pos, err := parseFlagsAnywhere(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 || *kbDir == "" {
		return errUsage
	}
	if !(*slow >= 1) || *window <= 0 || *windows <= 0 || *interval <= 0 {
		return fmt.Errorf("--slowdown must be at least 1; --window, --windows and --interval positive")
	}
	// An advice given up on at --timeout does not leave its request to
	// a hung Prometheus open for the default 5 minutes.
	f.Prometheus.Timeout = *timeout
	_, k, err := readKnowledge(*kbDir)
	if err != nil {
		return err
	}
	w, err := readWeights(*weights)
	if err != nil {
		return err
	}
	if _, err := f.Spec(); err != nil && !*release {
		return err
	}
	adv := aid.NewAdvisor(k, w)
	adv.Slowdown, adv.Window, adv.Windows = *slow, *window, *windows
	out := stdout
	if *logPath != "" {
		// A log grows across runs: appended to, but never through a
		// link planted at its name.
		lf, err := os.OpenFile(*logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o666)
		if err != nil {
			return err
		}
		defer lf.Close()
		out = lf
	}
	if *state == "" {
		*state = slurmgate.DefaultStatePath(*kbDir)
	}
	g := &slurmgate.Gate{Sched: &slurmgate.Slurm{Squeue: *squeue, Scontrol: *scontrol}, Advisor: adv, Open: f.Open,
		MaxHold: *maxHold, Timeout: *timeout, StatePath: *state, Log: out, HoldFirst: *holdFirst}
	if err := g.Load(); err != nil {
		return err
	}
	// The list job_submit.lua reads.
	if err := slurmgate.WriteApps(filepath.Join(*kbDir, "gate-apps.txt"), k); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	switch {
	case *release:
		return g.ReleaseAll(ctx)
	case *once:
		return g.Pass(ctx)
	}
	return g.Run(ctx, *interval, stderr)
}
