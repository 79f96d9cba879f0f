// Package centersim simulates a computing center's shared parallel file
// system and batch queue, and writes what the center would log: the
// per-OST throughput of the servers (as LMT does, cumulative counters
// every few seconds) and the scheduler's job log, together with the
// ground truth of every application (its I/O signature and pattern). No
// public data set pairs long server logs with job logs and the truth, so
// IOSI and AID are evaluated here.
//
// The file system is a fluid model: every I/O burst is a flow striped
// over a set of OSTs; each OST's bandwidth is shared among the flows on it
// in proportion to what they ask (weighted max-min filling), and a burst
// advances at the pace of its most contended OST, so contention prolongs
// runs and drifts their bursts. Persistent background traffic and
// interactive transfers share the servers with the jobs. Jobs go through
// a scheduler (FIFO or EASY backfill, on a finite or unlimited machine)
// that can ask an Advisor whether to start a job now or hold it.
package centersim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
)

// Scenario describes a center and its workload. The zero value of an
// optional field takes the default Validate gives it.
type Scenario struct {
	Name string `json:"name"`
	// Family is the generator: "" for the fluid engine and the scenario
	// as given, FamilyDrift for the second family, which draws the
	// center and its applications from the seed (see FamilyDrift).
	Family string    `json:"family,omitempty"`
	Start  time.Time `json:"start"`
	Days   float64   `json:"days"`
	// StepS is the width of one log sample in seconds (LMT logs every 2
	// to 5 s): a whole number.
	StepS int    `json:"step_s"`
	FS    string `json:"filesystem"` // file system name, prefix of the OST names
	OSTs  int    `json:"osts"`
	// OSTBandwidth is what one OST delivers, in bytes per second.
	OSTBandwidth float64 `json:"ost_bandwidth"`
	// ContentionPenalty is the fraction of an OST's bandwidth lost to
	// seeks per additional flow sharing it: with n flows the OST delivers
	// OSTBandwidth / (1 + penalty*(n-1)).
	ContentionPenalty float64 `json:"contention_penalty"`
	// Nodes is the machine's compute node count; 0 means unlimited (every
	// job starts when it is submitted).
	Nodes int `json:"nodes"`
	// Policy is the scheduler: "fifo" or "backfill" (EASY).
	Policy string `json:"policy"`
	// Noise scales the I/O of everything that is not a listed application:
	// background, interactive transfers and foreign jobs.
	Noise float64 `json:"noise"`
	// Outages is the number of monitoring gaps (5 to 20 minutes without
	// log samples) over the period.
	Outages     int         `json:"outages"`
	Background  Background  `json:"background"`
	Interactive Interactive `json:"interactive"`
	Apps        []AppSpec   `json:"apps"`
	Foreign     Foreign     `json:"foreign"`
	// MaxDelayS bounds how long advice can hold a job: past it the job is
	// started at the next chance whatever the advice.
	MaxDelayS float64 `json:"max_delay_s"`
	// TickS is how often held jobs are considered again when nothing else
	// happens (AID refreshes its load table every 5 minutes).
	TickS float64 `json:"tick_s"`
}

// Background is the persistent traffic of each OST (scrubbing, small
// users, metadata-heavy work), a log-normal AR(1) process per OST around
// its own mean, modulated over the day.
type Background struct {
	WriteMean   float64 `json:"write_mean"` // bytes/s per OST, over all OSTs
	ReadMean    float64 `json:"read_mean"`
	Sigma       float64 `json:"sigma"`       // spread of the log rate
	Correlation float64 `json:"correlation"` // AR(1) coefficient from one sample to the next
	Diurnal     float64 `json:"diurnal"`     // relative amplitude of the daily cycle (peak mid-afternoon)
}

// Interactive is traffic outside the batch system: data movers, copies,
// users on login nodes. Transfers arrive as a Poisson process (busier by
// day) and share the OSTs like jobs do.
type Interactive struct {
	PerHour      float64 `json:"per_hour"`
	MedianBytes  float64 `json:"median_bytes"`
	Sigma        float64 `json:"sigma"`         // log-normal spread of the volumes
	Bandwidth    float64 `json:"bandwidth"`     // bytes/s one transfer can drive
	MaxOSTs      int     `json:"max_osts"`      // footprint drawn from 1..MaxOSTs
	ReadFraction float64 `json:"read_fraction"` // share of transfers that read
}

// Phase is one iteration of an application: compute, then one I/O burst.
type Phase struct {
	ComputeS   float64 `json:"compute_s"`
	WriteBytes float64 `json:"write_bytes,omitempty"`
	ReadBytes  float64 `json:"read_bytes,omitempty"`
}

// Layout is how an application's files sit on the OSTs, which fixes its
// OST footprint: n-to-1 writes one shared file striped over Stripe OSTs,
// n-to-m writes Files shared files, n-to-n one file per process
// (Files = processes). Files are placed as Lustre's round-robin allocator
// does, on consecutive OSTs from a random start.
type Layout struct {
	Model  string `json:"model"` // "n-to-1", "n-to-m", "n-to-n"
	Files  int    `json:"files,omitempty"`
	Stripe int    `json:"stripe,omitempty"`
	// SameFiles keeps one placement for the whole run; by default every
	// burst creates new files, so the OSTs used migrate between bursts.
	SameFiles bool `json:"same_files,omitempty"`
}

// Class names what an application is, in the ground truth.
const (
	ClassIOIntensive = "io-intensive" // consistent, recurring I/O bursts
	ClassLight       = "light"        // steady low-rate I/O, no bursts
	ClassRandom      = "non-periodic" // bursts at random times and sizes
	ClassNested      = "nested"       // runs sit inside an I/O-intensive application's runs
	ClassNone        = "none"         // no I/O
)

// AppSpec is one application of the scenario: its identity, how often it
// runs and what each run does.
type AppSpec struct {
	User  string `json:"user"`
	Name  string `json:"name"`
	Nodes int    `json:"nodes"`
	Class string `json:"class"`
	// Runs with I/O, and runs with the I/O switched off (test and tuning
	// runs: the same compute, no output).
	Runs          int `json:"runs"`
	RunsWithoutIO int `json:"runs_without_io,omitempty"`
	// Iterations per run, drawn uniformly from [min, max]; one iteration
	// is one phase of Cycle, taken in turn.
	Iterations [2]int  `json:"iterations,omitempty"`
	Cycle      []Phase `json:"cycle,omitempty"`
	// Prologue runs once before the iterations (reading the input);
	// TailS is compute after the last burst.
	Prologue *Phase  `json:"prologue,omitempty"`
	TailS    float64 `json:"tail_s,omitempty"`
	// Trace takes the cycle from a traced run (a directory, or
	// builtin:ior|lammps|fio) stretched to TraceIntervalS between burst
	// starts and TraceBurstBytes per median burst; one iteration is then
	// one pass over the whole trace.
	Trace           string  `json:"trace,omitempty"`
	TraceIntervalS  float64 `json:"trace_interval_s,omitempty"`
	TraceBurstBytes float64 `json:"trace_burst_bytes,omitempty"`
	Layout          Layout  `json:"layout"`
	// Bandwidth is the most the application's clients drive, bytes/s.
	Bandwidth float64 `json:"bandwidth,omitempty"`
	// Jitter is the relative standard deviation of each compute phase;
	// RunNoise that of a whole run's compute speed.
	Jitter   float64 `json:"jitter,omitempty"`
	RunNoise float64 `json:"run_noise,omitempty"`
	// DurationS bounds the run time of applications without a cycle
	// (light, non-periodic, nested, none), drawn log-uniformly.
	DurationS [2]float64 `json:"duration_s,omitempty"`
	// LightRate is the steady rate of a light application, bytes/s.
	LightRate float64 `json:"light_rate,omitempty"`
	// RandomPerHour and RandomBytes shape a non-periodic application's
	// bursts (Poisson in time, log-normal volumes with spread 1.2).
	RandomPerHour float64 `json:"random_per_hour,omitempty"`
	RandomBytes   float64 `json:"random_bytes,omitempty"`
	// Within makes the runs nested in the runs of another application
	// (USER/NAME/NODES): each starts shortly after one of them starts and
	// ends well before it ends.
	Within string `json:"within,omitempty"`
	// SubmitS, when given, are the submission times of the runs in
	// seconds from the start, the runs with I/O first; otherwise the runs
	// are spread over the period at random.
	SubmitS []float64 `json:"submit_s,omitempty"`
	// FromDay and ToDay bound when the runs are submitted (ToDay 0: the
	// end of the period).
	FromDay float64 `json:"from_day,omitempty"`
	ToDay   float64 `json:"to_day,omitempty"`
}

// Foreign is the rest of the center's workload: many applications that
// nobody watches, drawn at random.
type Foreign struct {
	Jobs  int     `json:"jobs"`
	Apps  int     `json:"apps"`  // distinct applications among them
	Users int     `json:"users"` // distinct users
	Zipf  float64 `json:"zipf"`  // popularity exponent of the applications
	// Run times are log-normal with this median and spread, capped.
	MedianS float64 `json:"median_s"`
	Sigma   float64 `json:"sigma"`
	MaxS    float64 `json:"max_s"`
	// Shares of the applications that do light steady I/O and random
	// bursts; the rest do no I/O.
	Light         float64 `json:"light"`
	Random        float64 `json:"random"`
	LightRate     float64 `json:"light_rate"` // median, bytes/s
	RandomPerHour float64 `json:"random_per_hour"`
	RandomBytes   float64 `json:"random_bytes"` // median per burst
	// Failed and Cancelled are the shares of jobs that fail partway and
	// that are cancelled while waiting.
	Failed    float64 `json:"failed"`
	Cancelled float64 `json:"cancelled"`
}

// End is the end of the simulated period.
func (s *Scenario) End() time.Time {
	return s.Start.Add(time.Duration(s.Days * 24 * float64(time.Hour)))
}

// Step is the log sample width.
func (s *Scenario) Step() time.Duration { return time.Duration(s.StepS) * time.Second }

// OSTName returns the LMT name of OST i.
func (s *Scenario) OSTName(i int) string { return fmt.Sprintf("%s-OST%04x", s.FS, i) }

// OSTNames returns the names of all the scenario's OSTs, in index order.
func (s *Scenario) OSTNames() []string {
	names := make([]string, s.OSTs)
	for i := range names {
		names[i] = s.OSTName(i)
	}
	return names
}

// Validate fills the defaults and checks the scenario, naming the field
// at fault.
func (s *Scenario) Validate() error {
	if s.Start.IsZero() {
		s.Start = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	def := func(v *float64, d float64) {
		if *v == 0 {
			*v = d
		}
	}
	defInt := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	if s.Family == FamilyDrift {
		if s.FS == "" {
			s.FS = "drift"
		}
		switch {
		case s.Days <= 0:
			return errors.New("scenario: days must be positive")
		case s.StepS < 0 || s.StepS > 600:
			return fmt.Errorf("scenario: step_s %d out of [1, 600] (0: drawn from the seed)", s.StepS)
		case s.OSTs < 0 || s.OSTs > 65536:
			return fmt.Errorf("scenario: osts %d out of [1, 65536] (0: drawn from the seed)", s.OSTs)
		case len(s.Apps) > 0 || s.Foreign.Jobs > 0:
			return errors.New("scenario: the drift family draws its applications from the seed: give no apps or foreign jobs")
		}
		return nil
	} else if s.Family != "" {
		return fmt.Errorf("scenario: family %q (want none or %q)", s.Family, FamilyDrift)
	}
	defInt(&s.StepS, 5)
	if s.FS == "" {
		s.FS = "sim"
	}
	def(&s.OSTBandwidth, 400e6)
	if s.Policy == "" {
		s.Policy = "backfill"
	}
	def(&s.Noise, 1)
	def(&s.MaxDelayS, 3600)
	def(&s.TickS, 300)
	switch {
	case s.Days <= 0:
		return errors.New("scenario: days must be positive")
	case s.StepS < 1 || s.StepS > 600:
		return fmt.Errorf("scenario: step_s %d out of [1, 600]", s.StepS)
	case s.OSTs < 1 || s.OSTs > 65536:
		return fmt.Errorf("scenario: osts %d out of [1, 65536]", s.OSTs)
	case s.OSTBandwidth <= 0:
		return errors.New("scenario: ost_bandwidth must be positive")
	case s.ContentionPenalty < 0:
		return errors.New("scenario: contention_penalty must not be negative")
	case s.Nodes < 0:
		return errors.New("scenario: nodes must not be negative")
	case s.Policy != "fifo" && s.Policy != "backfill":
		return fmt.Errorf("scenario: policy %q (want fifo or backfill)", s.Policy)
	case s.Noise < 0:
		return errors.New("scenario: noise must not be negative")
	case s.Background.Correlation < 0 || s.Background.Correlation >= 1:
		return errors.New("scenario: background.correlation must be in [0, 1)")
	case s.Outages < 0:
		return errors.New("scenario: outages must not be negative")
	}
	if s.Interactive.MaxOSTs <= 0 {
		s.Interactive.MaxOSTs = 1
	}
	def(&s.Interactive.Bandwidth, 1e9)
	seen := map[string]bool{}
	for i := range s.Apps {
		a := &s.Apps[i]
		where := fmt.Sprintf("scenario: apps[%d] (%s/%s/%d)", i, a.User, a.Name, a.Nodes)
		if err := a.validate(s); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		id := a.ID()
		if seen[id] {
			return fmt.Errorf("%s: listed twice", where)
		}
		seen[id] = true
	}
	for i := range s.Apps {
		if w := s.Apps[i].Within; w != "" && !seen[w] {
			return fmt.Errorf("scenario: apps[%d]: within %q is not an application of the scenario", i, w)
		}
	}
	f := &s.Foreign
	if f.Jobs < 0 || f.Light < 0 || f.Random < 0 || f.Light+f.Random > 1 || f.Failed < 0 || f.Cancelled < 0 || f.Failed+f.Cancelled > 1 {
		return errors.New("scenario: foreign: jobs and shares must be non-negative, light+random and failed+cancelled at most 1")
	}
	if f.Jobs > 0 {
		defInt(&f.Apps, max(1, f.Jobs/20))
		defInt(&f.Users, max(1, f.Apps/4))
		def(&f.Zipf, 1.1)
		def(&f.MedianS, 1800)
		def(&f.Sigma, 1)
		def(&f.MaxS, 86400)
		def(&f.LightRate, 20e6)
		def(&f.RandomPerHour, 4)
		def(&f.RandomBytes, 20e9)
	}
	return nil
}

func (a *AppSpec) toDay(s *Scenario) float64 {
	if a.ToDay == 0 {
		return s.Days
	}
	return a.ToDay
}

// ID is the application as USER/NAME/NODES.
func (a *AppSpec) ID() string { return fmt.Sprintf("%s/%s/%d", a.User, a.Name, a.Nodes) }

func (a *AppSpec) validate(s *Scenario) error {
	if a.User == "" || a.Name == "" || strings.ContainsAny(a.User+a.Name, "|\n") || a.Nodes <= 0 {
		return errors.New("needs a user, a name (without | or newline) and a positive node count")
	}
	if a.Runs < 0 || a.RunsWithoutIO < 0 || a.Runs+a.RunsWithoutIO == 0 {
		return errors.New("needs at least one run")
	}
	switch a.Class {
	case ClassIOIntensive, ClassLight, ClassRandom, ClassNested, ClassNone:
	default:
		return fmt.Errorf("class %q (want %s, %s, %s, %s or %s)", a.Class, ClassIOIntensive, ClassLight, ClassRandom, ClassNested, ClassNone)
	}
	if a.Trace != "" && len(a.Cycle) > 0 {
		return errors.New("give a cycle or a trace, not both")
	}
	if len(a.Cycle) > 0 || a.Trace != "" {
		if a.Iterations[0] == 0 && a.Iterations[1] == 0 {
			a.Iterations = [2]int{1, 1}
		}
		if a.Iterations[1] == 0 {
			a.Iterations[1] = a.Iterations[0]
		}
		if a.Iterations[0] < 1 || a.Iterations[1] < a.Iterations[0] {
			return fmt.Errorf("iterations %v: want 1 <= min <= max", a.Iterations)
		}
	} else {
		if a.Class == ClassIOIntensive {
			return errors.New("an io-intensive application needs a cycle or a trace")
		}
		if a.DurationS[0] <= 0 || a.DurationS[1] < a.DurationS[0] {
			return fmt.Errorf("duration_s %v: want 0 < min <= max", a.DurationS)
		}
	}
	for i, p := range a.Cycle {
		if p.ComputeS < 0 || p.WriteBytes < 0 || p.ReadBytes < 0 {
			return fmt.Errorf("cycle[%d]: negative value", i)
		}
	}
	if a.Bandwidth == 0 {
		a.Bandwidth = 1e9
	}
	if a.Bandwidth < 0 || a.Jitter < 0 || a.RunNoise < 0 || a.LightRate < 0 || a.RandomBytes < 0 || a.RandomPerHour < 0 {
		return errors.New("bandwidth, jitter, run_noise and the light and random settings must not be negative")
	}
	if len(a.SubmitS) > 0 {
		if a.Within != "" || len(a.SubmitS) != a.Runs+a.RunsWithoutIO {
			return fmt.Errorf("submit_s: want one time per run (%d), and no within", a.Runs+a.RunsWithoutIO)
		}
		for _, t := range a.SubmitS {
			if t < 0 || t >= s.Days*86400 {
				return fmt.Errorf("submit_s: %g is outside the period", t)
			}
		}
	}
	if to := a.toDay(s); a.FromDay < 0 || to > s.Days || a.FromDay >= to {
		return fmt.Errorf("from_day %g, to_day %g: want 0 <= from < to <= %g", a.FromDay, a.ToDay, s.Days)
	}
	l := &a.Layout
	switch l.Model {
	case "", "n-to-1":
		l.Model, l.Files = "n-to-1", 1
	case "n-to-m":
		if l.Files < 1 {
			return errors.New("layout n-to-m needs files >= 1")
		}
	case "n-to-n":
		if l.Files < 1 {
			l.Files = a.Nodes * 16
		}
	default:
		return fmt.Errorf("layout model %q (want n-to-1, n-to-m or n-to-n)", l.Model)
	}
	if l.Stripe <= 0 {
		l.Stripe = 4
	}
	return nil
}

// ReadScenario reads a scenario from a JSON file (as --print-config writes
// one).
func ReadScenario(path string) (*Scenario, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s, err := ParseScenario(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// ParseScenario reads a scenario from JSON; unknown fields are errors.
func ParseScenario(b []byte) (*Scenario, error) {
	var s Scenario
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, err
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return &s, nil
}
