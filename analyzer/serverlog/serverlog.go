// Package serverlog reads what a computing center already logs about its
// file system and its jobs, without any tracing on the clients: per-OST
// read and write throughput from the servers (LMT databases, Lustre stats
// snapshots, LDMS CSV) and the batch scheduler's job records (Slurm,
// Torque). Every source becomes the same two things: byte rates per OST on
// one time grid (Rates), and Jobs. IOSI and AID work only on those, so a
// new log source is one reader.
//
// Commands open logs through Flags (--lmt, --lustre, --ldms, --csv,
// --store, --jobs, --tz, --skip-bad, ...) or OpenSource and ReadJobs,
// which find a log's format from its content. CreateLMT and WriteSacct
// write what the readers read, for simulators and tests. Import and
// ImportFrom keep months of logs in a local store (OpenStore) read back by
// time window, decompressing only the quarter hours a window overlaps. ReadJobStats gives the per-job bytes
// of Lustre's job_stats.
//
// The grid is aligned to whole multiples of the step since the Unix
// epoch, so windows, days and sources of one step line up.
package serverlog

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Rates holds byte rates per OST on a regular time grid. Sample t of OST i
// is the mean rate, in bytes per second, over [Time(t), Time(t+1)). A
// sample the log does not cover (a gap, a counter reset that left the
// interval unknown) is NaN, never zero: zero means the log saw no I/O.
type Rates struct {
	Start time.Time     // start of sample 0
	Step  time.Duration // sample width
	OSTs  []string      // OST names, as the log names them ("snx11025-OST0000")
	Read  [][]float64   // Read[i][t]: OST i's read rate in sample t
	Write [][]float64   // Write[i][t]: OST i's write rate in sample t
}

// Len is the number of samples.
func (r *Rates) Len() int {
	if len(r.Write) > 0 {
		return len(r.Write[0])
	}
	if len(r.Read) > 0 {
		return len(r.Read[0])
	}
	return 0
}

// Time returns the start of sample t.
func (r *Rates) Time(t int) time.Time { return r.Start.Add(time.Duration(t) * r.Step) }

// End returns the end of the last sample.
func (r *Rates) End() time.Time { return r.Time(r.Len()) }

// Index returns the sample that holds time at, which may be out of range.
func (r *Rates) Index(at time.Time) int {
	d := at.Sub(r.Start)
	i := int(d / r.Step)
	if d < 0 && d%r.Step != 0 {
		i--
	}
	return i
}

// Aggregate returns the file system's total read and write rates: per
// sample, the sum over the OSTs that have data. A sample no OST covers is
// NaN.
func (r *Rates) Aggregate() (read, write []float64) {
	return sumOSTs(r.Read, r.Len()), sumOSTs(r.Write, r.Len())
}

func sumOSTs(per [][]float64, n int) []float64 {
	out := make([]float64, n)
	for t := range out {
		sum, seen := 0.0, false
		for _, s := range per {
			if v := s[t]; !math.IsNaN(v) {
				sum += v
				seen = true
			}
		}
		if !seen {
			sum = math.NaN()
		}
		out[t] = sum
	}
	return out
}

// Slice returns the samples from the one holding from to the one before
// the sample holding to, sharing memory with r. Times outside r are
// clipped.
func (r *Rates) Slice(from, to time.Time) *Rates {
	lo, hi := min(max(r.Index(from), 0), r.Len()), min(r.Index(to), r.Len())
	if to.After(r.Time(hi)) && hi < r.Len() {
		hi++
	}
	if hi < lo {
		hi = lo
	}
	out := &Rates{Start: r.Time(lo), Step: r.Step, OSTs: r.OSTs,
		Read: make([][]float64, len(r.Read)), Write: make([][]float64, len(r.Write))}
	for i := range r.Read {
		out.Read[i] = r.Read[i][lo:hi]
	}
	for i := range r.Write {
		out.Write[i] = r.Write[i][lo:hi]
	}
	return out
}

// Source is a server-side throughput log that can be read by time window:
// a database, a directory of snapshots, a CSV file or the local store.
type Source interface {
	// Span returns the time the source covers and its native sample
	// width.
	Span() (from, to time.Time, step time.Duration, err error)
	// OSTs lists the OSTs the source knows, in a stable order.
	OSTs() ([]string, error)
	// Window returns the rates of [from, to) on the source's grid: from
	// the sample holding from to the one holding the instant before to,
	// clipped to the span (zero times mean the span's edges).
	Window(from, to time.Time) (*Rates, error)
	// Close releases the source.
	Close() error
}

// Job is one job of the batch scheduler's log.
type Job struct {
	ID    string    // the scheduler's id ("1234567", "1234567.0" for a step)
	User  string    // owner
	Name  string    // job name as submitted
	Nodes int       // node count
	Start time.Time // start of execution
	End   time.Time // end of execution; zero for a job still running (read only with Options.Running)
	State string    // final state as the scheduler reports it: COMPLETED, FAILED, CANCELLED, TIMEOUT, ...

	// Submit and Limit are known from some logs only (zero otherwise):
	// when the job was submitted, and the run time it asked for.
	Submit time.Time
	Limit  time.Duration
}

// App returns the application the job is a run of.
func (j Job) App() App { return App{User: j.User, Name: j.Name, Nodes: j.Nodes} }

// Duration is the job's run time.
func (j Job) Duration() time.Duration { return j.End.Sub(j.Start) }

// App identifies an application the way IOSI and AID do: runs by the same
// user, under the same job name, on the same number of nodes.
type App struct {
	User  string
	Name  string
	Nodes int
}

// String writes the application as USER/NAME/NODES, the form ParseApp
// reads.
func (a App) String() string { return a.User + "/" + a.Name + "/" + strconv.Itoa(a.Nodes) }

// ParseApp reads USER/NAME/NODES. The job name may itself contain
// slashes: the user is up to the first one and the node count after the
// last one.
func ParseApp(s string) (App, error) {
	i, j := strings.IndexByte(s, '/'), strings.LastIndexByte(s, '/')
	if i <= 0 || j <= i+1 || j == len(s)-1 {
		return App{}, fmt.Errorf("application %q: want USER/NAME/NODES", s)
	}
	n, err := strconv.Atoi(s[j+1:])
	if err != nil || n <= 0 {
		return App{}, fmt.Errorf("application %q: node count %q is not a positive integer", s, s[j+1:])
	}
	return App{User: s[:i], Name: s[i+1 : j], Nodes: n}, nil
}
