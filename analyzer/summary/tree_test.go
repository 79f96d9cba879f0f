package summary

import (
	"strings"
	"testing"
)

// The process tree lists the programs one pid ran in turn (a launcher
// that execs the next) together and in order, and hangs each child under
// the program its parent pid was running when the child started, not
// under the last one: a shim's subshells under the shim, a Python pool's
// workers under Python. Siblings come in the order they started.
func TestWriteTreeExecChain(t *testing.T) {
	ms := int64(1_000_000)
	rep := &Report{Processes: []Process{
		{Program: "/usr/bin/python3", Host: "h", PID: 10, PPID: 1, StartNs: 5 * ms},
		{Program: "/usr/bin/python3", Host: "h", PID: 22, PPID: 10, StartNs: 8 * ms, ForkUnixNs: 1},
		{Program: "/bin/bash", Host: "h", PID: 10, PPID: 1, StartNs: 0},
		{Program: "/bin/bash", Host: "h", PID: 11, PPID: 10, StartNs: 2 * ms, ForkUnixNs: 1},
		{Program: "/usr/bin/python3", Host: "h", PID: 21, PPID: 10, StartNs: 7 * ms, ForkUnixNs: 1},
		{Program: "/usr/bin/env", Host: "h", PID: 10, PPID: 1, StartNs: 3 * ms},
		{Program: "/usr/bin/other", Host: "h", PID: 30, PPID: 99, StartNs: 1 * ms},
	}}
	var b strings.Builder
	writeTree(&b, rep)
	want := `
PROCESS TREE
10 bash (started at 0.000000, read 0 B, written 0 B)
  11 bash (forked at 0.002000, read 0 B, written 0 B)
10 env (exec'd at 0.003000, read 0 B, written 0 B)
10 python3 (exec'd at 0.005000, read 0 B, written 0 B)
  21 python3 (forked at 0.007000, read 0 B, written 0 B)
  22 python3 (forked at 0.008000, read 0 B, written 0 B)
30 other (started at 0.001000, read 0 B, written 0 B)
`
	if b.String() != want {
		t.Errorf("tree:\n%s\nwant:\n%s", b.String(), want)
	}
}
