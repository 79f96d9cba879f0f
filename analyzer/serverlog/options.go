package serverlog

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// Options tune every reader. The zero value reads strictly (the first bad
// row is an error), in the local zone, on the source's own sample width.
type Options struct {
	// TZ is the zone of times written without one (LMT's TIMESTAMP,
	// sacct's Start and End, CSV times). Nil means time.Local.
	TZ *time.Location
	// SkipBad leaves bad rows out instead of failing on the first one;
	// each one left out is counted in Bad.
	SkipBad bool
	// Bad counts the rows left out under SkipBad. It may be nil; it may be
	// shared by several readers.
	Bad *BadRows
	// PerInterval says that a plain CSV's values are the bytes moved in
	// the interval that ends at the row's time, not cumulative counters
	// (the --rates flag).
	PerInterval bool
	// Running keeps the jobs that had started but not ended when the job
	// log was written (their End is zero); by default only jobs that ran
	// and ended are read.
	Running bool
	// Step is the width of the grid the rates are put on. Zero means the
	// source's own sample width.
	Step time.Duration
	// MaxInterval is the longest time between two readings of a counter
	// whose difference is still taken as measured: a longer one is a gap
	// and its samples are NaN. Zero means 1.5 times the source's sample
	// width, so that one lost reading is already a gap.
	MaxInterval time.Duration
	// MaxRate is the highest believable rate of one OST, in bytes per
	// second; a counter difference that implies more (a glitch, a counter
	// that came back after a reset) is a gap. Zero means DefaultMaxRate.
	MaxRate float64
	// MySQLDefaultsFile is the MariaDB option file to read a live LMT
	// database's credentials from instead of /etc/my.cnf,
	// /etc/mysql/my.cnf and ~/.my.cnf (the --defaults-file flag).
	MySQLDefaultsFile string
	// Warnings receives warnings (a password given in an address); nil
	// means os.Stderr.
	Warnings io.Writer
	// Warn, when set, is told what a reader repaired instead of
	// refusing: timestamps out of order or repeated, left out. A command
	// prints these; nil drops them.
	Warn func(msg string)
	// Prometheus names the counters OpenPrometheus reads; the zero value
	// reads lustre_exporter's.
	Prometheus PrometheusConfig
}

func (o *Options) warnings() io.Writer {
	if o == nil || o.Warnings == nil {
		return os.Stderr
	}
	return o.Warnings
}

func (o *Options) warn(msg string) {
	if o != nil && o.Warn != nil {
		o.Warn(msg)
	}
}

// DefaultMaxRate is the default Options.MaxRate: 1 TB/s for one OST,
// about fifty times what the fastest OSTs move today.
const DefaultMaxRate = 1e12

func (o *Options) loc() *time.Location {
	if o == nil || o.TZ == nil {
		return time.Local
	}
	return o.TZ
}

func (o *Options) maxRate() float64 {
	if o == nil || o.MaxRate <= 0 {
		return DefaultMaxRate
	}
	return o.MaxRate
}

// maxInterval is the gap threshold for a source of native width step.
func (o *Options) maxInterval(step time.Duration) time.Duration {
	if o != nil && o.MaxInterval > 0 {
		return o.MaxInterval
	}
	return step * 3 / 2
}

// bad decides what happens to a bad row: with SkipBad it is counted and
// nil returned (the caller drops the row and goes on), else err is
// returned.
func (o *Options) bad(err error) error {
	if o == nil || !o.SkipBad {
		return err
	}
	o.Bad.add(err)
	return nil
}

// badLine is bad for a line of a text log; the last line of a file cut
// in the middle of it (no newline) is left out and counted even without
// SkipBad, so that a log being written or truncated still gives every
// complete record.
func (o *Options) badLine(err error, partial bool) error {
	if partial {
		o.Bad.add(err)
		return nil
	}
	return o.bad(err)
}

// BadRows counts the rows readers left out under Options.SkipBad and keeps
// the first few reasons, so that a command can say how many and why. It is
// safe for concurrent use; a nil *BadRows counts nothing.
type BadRows struct {
	mu    sync.Mutex
	n     int
	first []error
}

// keepBad is how many reasons a BadRows keeps.
const keepBad = 5

func (b *BadRows) add(err error) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.n++
	if len(b.first) < keepBad {
		b.first = append(b.first, err)
	}
}

// Count is the number of rows left out.
func (b *BadRows) Count() int {
	if b == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.n
}

// First returns the reasons of the first rows left out (at most five).
func (b *BadRows) First() []error {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]error(nil), b.first...)
}

// String says how many rows were left out and why the first one was.
func (b *BadRows) String() string {
	n, first := b.Count(), b.First()
	if n == 0 {
		return "no bad rows"
	}
	return fmt.Sprintf("%d bad rows skipped (first: %v)", n, first[0])
}
