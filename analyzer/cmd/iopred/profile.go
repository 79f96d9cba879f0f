package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"syscall"
	"time"
)

// Profiling hooks for the developers, set by environment variables so that
// no subcommand's flags change (README, "Profiling iopred"):
//
//	IOPRED_CPUPROFILE=FILE   a pprof CPU profile of the whole run
//	IOPRED_MEMPROFILE=FILE   a pprof heap profile at the end (alloc_space and
//	                         alloc_objects count every allocation of the run)
//	IOPRED_BLOCKPROFILE=FILE a pprof profile of the waits on channels and
//	                         mutexes (every blocking event sampled)
//	IOPRED_CPUSTATS=1        the runtime's own CPU accounting on stderr at the
//	                         end: the CPU seconds of the program's goroutines,
//	                         of the garbage collector and of the idle Ps, and
//	                         the bytes and objects allocated

// startProfiles starts what the environment asks for; the function it
// returns writes the profiles out (main calls it before exiting).
func startProfiles(stderr io.Writer) func() {
	var stops []func()
	if name := os.Getenv("IOPRED_CPUPROFILE"); name != "" {
		f, err := os.Create(name)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintf(stderr, "iopred: IOPRED_CPUPROFILE: %v\n", err)
		} else {
			stops = append(stops, func() {
				pprof.StopCPUProfile()
				f.Close()
			})
		}
	}
	if name := os.Getenv("IOPRED_BLOCKPROFILE"); name != "" {
		runtime.SetBlockProfileRate(1)
		runtime.SetMutexProfileFraction(1)
		stops = append(stops, func() { writeProfile(stderr, "block", name) })
	}
	if name := os.Getenv("IOPRED_MEMPROFILE"); name != "" {
		stops = append(stops, func() {
			runtime.GC() // the heap profile's in-use figures are as of the last GC
			writeProfile(stderr, "allocs", name)
		})
	}
	if os.Getenv("IOPRED_CPUSTATS") != "" {
		stops = append(stops, func() {
			writeShareStats(stderr)
			writeCPUStats(stderr)
		})
	}
	return func() {
		for _, stop := range stops {
			stop()
		}
	}
}

// writeProfile writes the named pprof profile to the file name.
func writeProfile(stderr io.Writer, profile, name string) {
	f, err := os.Create(name)
	if err == nil {
		err = pprof.Lookup(profile).WriteTo(f, 0)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "iopred: %s profile %s: %v\n", profile, name, err)
	}
}

// cpuStatMetrics are the runtime/metrics that IOPRED_CPUSTATS prints, with
// the names it prints them under.
var cpuStatMetrics = [][2]string{
	{"/cpu/classes/user:cpu-seconds", "user"},
	{"/cpu/classes/gc/total:cpu-seconds", "gc"},
	{"/cpu/classes/gc/mark/assist:cpu-seconds", "gc-assist"},
	{"/cpu/classes/gc/mark/dedicated:cpu-seconds", "gc-dedicated"},
	{"/cpu/classes/gc/mark/idle:cpu-seconds", "gc-idle"},
	{"/cpu/classes/scavenge/total:cpu-seconds", "scavenge"},
	{"/cpu/classes/idle:cpu-seconds", "idle"},
	{"/gc/cycles/total:gc-cycles", "gc-cycles"},
	{"/gc/heap/allocs:bytes", "alloc-bytes"},
	{"/gc/heap/allocs:objects", "alloc-objects"},
}

// writeCPUStats prints the runtime's CPU accounting: estimates from the
// scheduler's view (each P's time), not the kernel's, so that the garbage
// collector's share can be told from the program's own work.
func writeCPUStats(stderr io.Writer) {
	samples := make([]metrics.Sample, len(cpuStatMetrics))
	for i, m := range cpuStatMetrics {
		samples[i].Name = m[0]
	}
	metrics.Read(samples)
	fmt.Fprintf(stderr, "iopred cpustats: process %.3f s CPU (user+sys); runtime's estimates:", processCPU().Seconds())
	for i, s := range samples {
		switch s.Value.Kind() {
		case metrics.KindFloat64:
			fmt.Fprintf(stderr, " %s=%.3f", cpuStatMetrics[i][1], s.Value.Float64())
		case metrics.KindUint64:
			fmt.Fprintf(stderr, " %s=%d", cpuStatMetrics[i][1], s.Value.Uint64())
		}
	}
	fmt.Fprintln(stderr)
}

// shareClock measures one share's reading goroutine when IOPRED_CPUSTATS
// is set: the goroutine is locked to its thread, whose CPU time (user and
// system, garbage-collection assists included) is its busy time. The
// largest share's busy time plus the combining is the critical path of a
// --jobs run, whatever the other processes on the machine do to the wall
// time.
type shareClock struct {
	on         bool
	cpu0, cpu1 time.Duration
	wall0      time.Time
	wall       time.Duration
}

// startShareClock starts the clock of the calling goroutine's share.
func startShareClock() *shareClock {
	c := &shareClock{on: os.Getenv("IOPRED_CPUSTATS") != ""}
	if c.on {
		runtime.LockOSThread()
		c.cpu0, c.wall0 = threadCPU(), time.Now()
	}
	return c
}

// stop stops the clock and unlocks the goroutine from its thread.
func (c *shareClock) stop() {
	if c.on {
		c.cpu1, c.wall = threadCPU(), time.Since(c.wall0)
		runtime.UnlockOSThread()
	}
}

// busy is the share's CPU time.
func (c *shareClock) busy() time.Duration { return c.cpu1 - c.cpu0 }

// threadCPU is the calling thread's user and system time.
func threadCPU() time.Duration {
	const rusageThread = 1 // RUSAGE_THREAD, Linux only: elsewhere the call fails and the time is 0
	var ru syscall.Rusage
	if syscall.Getrusage(rusageThread, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// shareStats is what IOPRED_CPUSTATS prints of a run in shares at the
// end: the shares' clocks and the process's CPU time when they started
// and ended.
var shareStats struct {
	bounds            []int
	clocks            []*shareClock
	cpuStart, cpuDone time.Duration
}

// writeShareStats prints the shares' busy times and the critical path of
// the run on as many cores as shares: the serial CPU before the shares,
// the longest share, and the serial CPU after them (combining, findings,
// output), or the shares' phase CPU over all threads (garbage collector's
// workers included) spread evenly over the cores (GOMAXPROCS) when that
// is longer. With one share, the garbage collector's workers run on the
// other cores; with as many shares as cores, they take the shares' time.
func writeShareStats(stderr io.Writer) {
	st := shareStats
	if len(st.clocks) == 0 || !st.clocks[0].on {
		return
	}
	var longest, sum time.Duration
	for k, c := range st.clocks {
		fmt.Fprintf(stderr, "iopred cpustats: share %d (traces %d-%d): busy %.3f s CPU, %.3f s wall\n",
			k, st.bounds[k], st.bounds[k+1]-1, c.busy().Seconds(), c.wall.Seconds())
		longest = max(longest, c.busy())
		sum += c.busy()
	}
	phase := st.cpuDone - st.cpuStart
	after := processCPU() - st.cpuDone
	fmt.Fprintf(stderr, "iopred cpustats: before shares %.3f s CPU; shares %.3f s CPU on all threads (%.3f s outside the shares' threads); after shares %.3f s CPU\n",
		st.cpuStart.Seconds(), phase.Seconds(), (phase - sum).Seconds(), after.Seconds())
	cores := runtime.GOMAXPROCS(0)
	spread := phase / time.Duration(cores)
	fmt.Fprintf(stderr, "iopred cpustats: critical path on %d cores %.3f s (before + max(longest share, shares' CPU / cores) + after); %.3f s with the longest share alone\n",
		cores, (st.cpuStart + max(longest, spread) + after).Seconds(), (st.cpuStart + longest + after).Seconds())
}

// processCPU is the process's user and system time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
