package main

import (
	"flag"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
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

// inOrder returns fn(0), ..., fn(n-1), computed on up to jobs goroutines
// (in the calling one when jobs <= 1), in index order.
func inOrder[T any](n, jobs int, fn func(i int) T) []T {
	out := make([]T, n)
	if jobs <= 1 || n <= 1 {
		for i := range out {
			out[i] = fn(i)
		}
		return out
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(jobs, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				out[i] = fn(i)
			}
		}()
	}
	wg.Wait()
	return out
}

// eachInOrder computes fn(0), ..., fn(n-1) on up to jobs goroutines (in
// the calling one when jobs <= 1) and hands each result to consume in
// index order, in the calling goroutine, as soon as it and those before
// it are done; at most 2*jobs results wait, so progress shows as it
// comes and memory does not grow with n.
func eachInOrder[T any](n, jobs int, fn func(i int) T, consume func(i int, v T)) {
	if jobs <= 1 || n <= 1 {
		for i := range n {
			consume(i, fn(i))
		}
		return
	}
	slots := make([]chan T, n)
	for i := range slots {
		slots[i] = make(chan T, 1)
	}
	ahead := make(chan struct{}, 2*jobs)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(jobs, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				ahead <- struct{}{}
				i := int(next.Add(1) - 1)
				if i >= n {
					<-ahead
					return
				}
				slots[i] <- fn(i)
			}
		}()
	}
	for i := range n {
		consume(i, <-slots[i])
		slots[i] = nil
		<-ahead
	}
	wg.Wait()
}
