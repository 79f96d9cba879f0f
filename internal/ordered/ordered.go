// Package ordered runs independent pieces of work on several goroutines
// and hands their results back in the order of the work, so that a
// parallel analysis prints and merges exactly what a sequential one does.
package ordered

import (
	"sync"
	"sync/atomic"
)

// Map returns fn(0), ..., fn(n-1), computed on up to jobs goroutines (in
// the calling one when jobs <= 1), in index order.
func Map[T any](n, jobs int, fn func(i int) T) []T {
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

// Each computes fn(0), ..., fn(n-1) on up to jobs goroutines (in the
// calling one when jobs <= 1) and hands each result to consume in index
// order, in the calling goroutine, as soon as it and those before it are
// done. At most 2*jobs results wait, so progress shows as it comes and
// memory does not grow with n.
func Each[T any](n, jobs int, fn func(i int) T, consume func(i int, v T)) {
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
	ahead := make(chan struct{}, 2*jobs) // tokens: results computed but not consumed
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
