package serverlog

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// SacctCommandPrefix marks a job log read straight from Slurm's
// accounting: "sacct:" runs sacct on this machine for every job of every
// user since the Unix epoch; "sacct:ARGS" adds ARGS (space separated,
// e.g. "sacct:-S 2024-03-01 -M cluster2"), which may narrow the time with
// -S/-E. SLURM_CONF and the like come from the environment.
const SacctCommandPrefix = "sacct:"

// IsSacctCommand tells whether a --jobs value asks for sacct to be run.
func IsSacctCommand(s string) bool { return strings.HasPrefix(s, SacctCommandPrefix) }

// sacctFormat is the columns the sacct reader needs.
const sacctFormat = "JobID,JobIDRaw,User,JobName,NNodes,Submit,Start,End,Elapsed,Timelimit,State"

// ReadSacctCommand runs sacct against the cluster's accounting
// (slurmdbd) and reads its output as a dump. sacct writes its times in
// UTC (TZ=UTC in its environment), whatever Options.TZ says, so that
// the times are exact however the machine's zone is set.
func ReadSacctCommand(spec string, opts Options) ([]Job, error) {
	args := []string{"--parsable2", "--allusers", "--format=" + sacctFormat}
	extra := strings.Fields(strings.TrimPrefix(spec, SacctCommandPrefix))
	hasStart := false
	for _, a := range extra {
		if a == "-S" || a == "--starttime" || strings.HasPrefix(a, "--starttime=") {
			hasStart = true
		}
	}
	if !hasStart {
		args = append(args, "--starttime=1970-01-02T00:00:00")
	}
	args = append(args, extra...)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sacct", args...)
	cmd.Env = append(cmd.Environ(), "TZ=UTC", "SLURM_TIME_FORMAT=standard")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("sacct %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	opts.TZ = time.UTC
	jobs, err := ReadSacct(&out, "sacct "+strings.Join(extra, " "), opts)
	if err != nil {
		return nil, err
	}
	return sortJobs(jobs), nil
}
