// Package slurmgate acts on AID's advice in a running Slurm: a gate that
// watches the pending jobs, holds (scontrol hold) those of applications
// the knowledge base knows to be I/O-intensive while the advice says
// delay, and releases them (scontrol release) when it says run, when the
// hold reaches its limit, or when the advice cannot be had in time. Jobs
// of other applications are never touched, and every decision is logged
// with its score.
package slurmgate

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"iopred/analyzer/serverlog"
)

// Job is a job the scheduler lists.
type Job struct {
	ID    string
	App   serverlog.App
	State string // PENDING or RUNNING
	// Reason is why a pending job waits (Slurm's %r: Priority,
	// Resources, JobHeldAdmin, JobHeldUser, BeginTime, ...).
	Reason string
	// Comment is the job's comment: GateComment when the job_submit
	// plugin made it wait for the gate.
	Comment string
	Start   time.Time     // running jobs: when it started
	Limit   time.Duration // its time limit; zero if unlimited
}

// Held tells whether someone holds the job (the gate or anybody else).
func (j Job) Held() bool { return strings.HasPrefix(j.Reason, "JobHeld") }

// Scheduler is what the gate needs of the batch system.
type Scheduler interface {
	// Jobs lists the pending and running jobs.
	Jobs(ctx context.Context) ([]Job, error)
	// Hold keeps a pending job from starting; Release lets it start.
	Hold(ctx context.Context, id string) error
	Release(ctx context.Context, id string) error
	// StartNow lets a job the job_submit plugin deferred start now.
	StartNow(ctx context.Context, id string) error
}

// GateComment marks the jobs job_submit.lua made wait for the gate.
const GateComment = "iopred-gate"

// Waiting tells whether the job_submit plugin made the job wait for the
// gate (and it still waits for its begin time).
func (j Job) Waiting() bool { return j.Comment == GateComment && j.Reason == "BeginTime" }

// Slurm is a Scheduler over Slurm's commands.
type Slurm struct {
	// Squeue and Scontrol are the commands (default: found on PATH).
	Squeue, Scontrol string
}

func (s *Slurm) squeue() string   { return orDefault(s.Squeue, "squeue") }
func (s *Slurm) scontrol() string { return orDefault(s.Scontrol, "scontrol") }

func orDefault(v, d string) string {
	if v == "" {
		return d
	}
	return v
}

// squeueFormat puts the job name last: it is the only field that may
// hold the separator.
const squeueFormat = "%i|%T|%u|%D|%r|%S|%l|%k|%j"

// Jobs runs squeue for the pending and running jobs of every user.
func (s *Slurm) Jobs(ctx context.Context) ([]Job, error) {
	cmd := exec.CommandContext(ctx, s.squeue(), "--noheader", "--all", "--states=PENDING,RUNNING", "--format="+squeueFormat)
	cmd.Env = append(cmd.Environ(), "TZ=UTC", "SLURM_TIME_FORMAT=%Y-%m-%dT%H:%M:%S")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("squeue: %v: %s", err, strings.TrimSpace(errb.String()))
	}
	return ParseSqueue(out.String())
}

// ParseSqueue reads squeue's output in squeueFormat (times in UTC).
func ParseSqueue(out string) ([]Job, error) {
	var jobs []Job
	for n, line := range strings.Split(out, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		f := strings.SplitN(line, "|", 9)
		if len(f) != 9 {
			return nil, fmt.Errorf("squeue line %d: %d fields, want 9 (%s): %q", n+1, len(f), squeueFormat, line)
		}
		nodes, err := strconv.Atoi(f[3])
		if err != nil || nodes <= 0 {
			return nil, fmt.Errorf("squeue line %d: node count %q", n+1, f[3])
		}
		j := Job{ID: f[0], State: f[1], App: serverlog.App{User: f[2], Name: f[8], Nodes: nodes}, Reason: f[4], Comment: f[7]}
		if j.Comment == "(null)" {
			j.Comment = ""
		}
		if j.State == "RUNNING" {
			if t, err := time.ParseInLocation("2006-01-02T15:04:05", f[5], time.UTC); err == nil {
				j.Start = t
			}
			j.Limit, _ = ParseLimit(f[6])
		}
		jobs = append(jobs, j)
	}
	return jobs, nil
}

// ParseLimit reads Slurm's time limit ([D-]HH:MM:SS, MM:SS, MM, or
// UNLIMITED, which is zero).
func ParseLimit(s string) (time.Duration, error) {
	if s == "UNLIMITED" || s == "INVALID" || s == "" {
		return 0, nil
	}
	var days int
	if d, rest, ok := strings.Cut(s, "-"); ok {
		n, err := strconv.Atoi(d)
		if err != nil {
			return 0, fmt.Errorf("time limit %q", s)
		}
		days, s = n, rest
	}
	parts := strings.Split(s, ":")
	var v [3]int
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || len(parts) > 3 {
			return 0, fmt.Errorf("time limit %q", s)
		}
		v[3-len(parts)+i] = n
	}
	if len(parts) == 1 { // minutes alone
		v = [3]int{0, v[2], 0}
	}
	return time.Duration(days)*24*time.Hour + time.Duration(v[0])*time.Hour + time.Duration(v[1])*time.Minute + time.Duration(v[2])*time.Second, nil
}

// StartNow runs scontrol update JobId=ID StartTime=now.
func (s *Slurm) StartNow(ctx context.Context, id string) error {
	out, err := exec.CommandContext(ctx, s.scontrol(), "update", "JobId="+id, "StartTime=now").CombinedOutput()
	if err != nil {
		return fmt.Errorf("scontrol update JobId=%s StartTime=now: %v: %s", id, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// Hold runs scontrol hold.
func (s *Slurm) Hold(ctx context.Context, id string) error { return s.run(ctx, "hold", id) }

// Release runs scontrol release.
func (s *Slurm) Release(ctx context.Context, id string) error { return s.run(ctx, "release", id) }

func (s *Slurm) run(ctx context.Context, verb, id string) error {
	out, err := exec.CommandContext(ctx, s.scontrol(), verb, id).CombinedOutput()
	if err != nil {
		return fmt.Errorf("scontrol %s %s: %v: %s", verb, id, err, strings.TrimSpace(string(out)))
	}
	return nil
}
