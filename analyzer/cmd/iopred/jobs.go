package main

import (
	"flag"
	"fmt"
	"runtime"
)

// jobsFlag defines --jobs, how many traces an analysis reads at once: by
// default as many as the cores the process may run on.
func jobsFlag(fs *flag.FlagSet) *int {
	return fs.Int("jobs", runtime.GOMAXPROCS(0), "read and decode `N` traces at once, one per core (the result is the same for every N)")
}

// checkJobs rejects a --jobs below 1.
func checkJobs(n int) error {
	if n < 1 {
		return fmt.Errorf("--jobs %d: want at least 1", n)
	}
	return nil
}
