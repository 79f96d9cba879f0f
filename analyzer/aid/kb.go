package aid

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"iopred/internal/safefile"
)

// The knowledge base is a directory:
//
//	kb.json                 the manifest: version, generation, the names of the files below (written last, atomically)
//	state.G.json            what learning needs to go on: the days seen, their bursts, the runs of every application
//	apps.G.json             what was learnt: every application with its class and pattern (all that report and advise read)
//	agg/YYYY-MM-DD.G.agg    the aggregate log of one UTC day (see aggFile)
//
// G is the generation that wrote the file. An update writes new files
// under a new generation, syncs them, then replaces kb.json by renaming a
// synced temporary file over it, and only then removes the files of older
// generations. A crash at any point leaves either the old or the new
// manifest, and every file it names; files no manifest names are removed
// by the next update.

const (
	kbVersion    = 1
	manifestName = "kb.json"
	aggDir       = "agg"
	aggMagic     = "iopredAG"
)

// Manifest is kb.json.
type Manifest struct {
	Version    int       `json:"version"`
	Generation int64     `json:"generation"`
	Updated    time.Time `json:"updated"`
	State      string    `json:"state"`
	Apps       string    `json:"apps"`
}

// State is what learning keeps from one run to the next.
type State struct {
	Version int     `json:"version"`
	StepNS  int64   `json:"step_ns"`
	OSTs    int     `json:"osts"`
	Options Options `json:"options"`
	// Sources are the logs learnt from, as flags name them.
	Sources []string `json:"sources,omitempty"`
	Days    []Day    `json:"days"`
	Jobs    []Run    `json:"jobs"`
}

// Day is one UTC day of the aggregate log.
type Day struct {
	Day     string `json:"day"` // YYYY-MM-DD
	File    string `json:"file"`
	StartNS int64  `json:"start_ns"` // start of its first cell
	Cells   int    `json:"cells"`
	Known   int    `json:"known"` // cells with data
	// Complete: the source covered the whole day when it was read, so a
	// later learn does not read it again. Final: the next day was there
	// too, so its bursts (which may run past midnight) are final.
	Complete bool    `json:"complete"`
	Final    bool    `json:"final"`
	Bursts   []Burst `json:"bursts"`
}

// Burst is one I/O burst of the aggregate log with what the per-OST log
// says of it.
type Burst struct {
	StartNS int64   `json:"start_ns"`
	EndNS   int64   `json:"end_ns"`
	Peak    float64 `json:"peak"`  // bytes/s above the baseline, highest sample
	Rate    float64 `json:"rate"`  // bytes/s above the baseline, mean of the samples inside the burst
	Bytes   float64 `json:"bytes"` // above the baseline, whole file system
	Read    float64 `json:"read"`  // of which read
	// OSTs is how many OSTs carried the burst; Refined the bytes above
	// their own baselines on those OSTs only.
	OSTs    int     `json:"osts"`
	Refined float64 `json:"refined"`
	// PerOST: the burst was found OST by OST (too small for the
	// aggregate), as the group of OSTs it started and ended on together.
	PerOST bool `json:"per_ost,omitempty"`
}

// Run is one job of the job log.
type Run struct {
	ID      string `json:"id"`
	User    string `json:"user"`
	Name    string `json:"name"`
	Nodes   int    `json:"nodes"`
	StartNS int64  `json:"start_ns"`
	EndNS   int64  `json:"end_ns"`
	State   string `json:"state,omitempty"`
}

// ParseState reads a state file, checking what later steps rely on: days
// in order without overlap, bursts in order inside sane bounds, runs with
// an end after their start.
func ParseState(b []byte) (*State, error) {
	var s State
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("state: %w", err)
	}
	if s.Version != kbVersion {
		return nil, fmt.Errorf("state: version %d, want %d", s.Version, kbVersion)
	}
	if s.StepNS <= 0 && (len(s.Days) > 0 || s.StepNS < 0) {
		return nil, fmt.Errorf("state: step_ns %d is not positive", s.StepNS)
	}
	if s.OSTs < 0 {
		return nil, fmt.Errorf("state: osts %d", s.OSTs)
	}
	if err := s.Options.check(); err != nil {
		return nil, fmt.Errorf("state: options: %w", err)
	}
	for i, d := range s.Days {
		if _, err := time.Parse(time.DateOnly, d.Day); err != nil {
			return nil, fmt.Errorf("state: days[%d]: day %q", i, d.Day)
		}
		if d.Cells < 0 || d.Known < 0 || d.Known > d.Cells || d.Cells > int(86400e9/s.StepNS)+1 {
			return nil, fmt.Errorf("state: days[%d] (%s): cells %d, known %d", i, d.Day, d.Cells, d.Known)
		}
		if d.File != "" && (strings.ContainsAny(d.File, `/\`) || d.File == "." || d.File == "..") {
			return nil, fmt.Errorf("state: days[%d] (%s): file %q is not a plain name", i, d.Day, d.File)
		}
		if i > 0 && s.Days[i-1].Day >= d.Day {
			return nil, fmt.Errorf("state: days[%d] (%s) is not after %s", i, d.Day, s.Days[i-1].Day)
		}
		for k, b := range d.Bursts {
			if b.EndNS <= b.StartNS || (k > 0 && d.Bursts[k-1].StartNS > b.StartNS) {
				return nil, fmt.Errorf("state: days[%d] (%s): bursts[%d] out of order or empty", i, d.Day, k)
			}
			for _, v := range []float64{b.Peak, b.Rate, b.Bytes, b.Read, b.Refined} {
				if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
					return nil, fmt.Errorf("state: days[%d] (%s): bursts[%d]: a value is negative or not finite", i, d.Day, k)
				}
			}
			if b.OSTs < 0 {
				return nil, fmt.Errorf("state: days[%d] (%s): bursts[%d]: osts %d", i, d.Day, k, b.OSTs)
			}
		}
	}
	for i, r := range s.Jobs {
		if r.ID == "" || r.Nodes <= 0 || r.EndNS < r.StartNS {
			return nil, fmt.Errorf("state: jobs[%d] (%q): id, nodes or times are wrong", i, r.ID)
		}
	}
	return &s, nil
}

// KB is an open knowledge base.
type KB struct {
	Dir      string
	Manifest Manifest
	apps     *Knowledge
}

// OpenKB reads the manifest of the knowledge base in dir; an empty or
// missing directory is an empty knowledge base.
func OpenKB(dir string) (*KB, error) {
	kb := &KB{Dir: dir}
	b, err := os.ReadFile(filepath.Join(dir, manifestName))
	if errors.Is(err, os.ErrNotExist) {
		return kb, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &kb.Manifest); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, manifestName), err)
	}
	m := kb.Manifest
	if m.Version != kbVersion || m.Generation <= 0 || !plainName(m.State) || !plainName(m.Apps) {
		return nil, fmt.Errorf("%s: not a version %d manifest naming its files", filepath.Join(dir, manifestName), kbVersion)
	}
	return kb, nil
}

func plainName(s string) bool {
	return s != "" && s != "." && s != ".." && !strings.ContainsAny(s, `/\`)
}

// Empty tells whether nothing was learnt yet.
func (kb *KB) Empty() bool { return kb.Manifest.Generation == 0 }

// State reads the learning state.
func (kb *KB) State() (*State, error) {
	if kb.Empty() {
		return &State{Version: kbVersion, Options: DefaultOptions()}, nil
	}
	p := filepath.Join(kb.Dir, kb.Manifest.State)
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	s, err := ParseState(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return s, nil
}

// Knowledge reads what was learnt (an empty knowledge base knows nothing).
func (kb *KB) Knowledge() (*Knowledge, error) {
	if kb.apps != nil {
		return kb.apps, nil
	}
	if kb.Empty() {
		return &Knowledge{Version: kbVersion}, nil
	}
	p := filepath.Join(kb.Dir, kb.Manifest.Apps)
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	var k Knowledge
	if err := json.Unmarshal(b, &k); err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	if k.Version != kbVersion {
		return nil, fmt.Errorf("%s: version %d, want %d", p, k.Version, kbVersion)
	}
	kb.apps = &k
	return &k, nil
}

// commit writes a new generation: the day files already written with
// writeAgg, then state and knowledge, then the manifest.
func (kb *KB) commit(gen int64, st *State, k *Knowledge, now time.Time) error {
	sb, err := json.Marshal(st)
	if err != nil {
		return err
	}
	kb2, err := json.MarshalIndent(k, "", " ")
	if err != nil {
		return err
	}
	m := Manifest{Version: kbVersion, Generation: gen, Updated: now.UTC(),
		State: fmt.Sprintf("state.%d.json", gen), Apps: fmt.Sprintf("apps.%d.json", gen)}
	if err := writeSync(filepath.Join(kb.Dir, m.State), sb); err != nil {
		return err
	}
	if err := writeSync(filepath.Join(kb.Dir, m.Apps), kb2); err != nil {
		return err
	}
	if err := syncDir(filepath.Join(kb.Dir, aggDir)); err != nil {
		return err
	}
	if beforeManifest != nil {
		beforeManifest()
	}
	mb, _ := json.MarshalIndent(m, "", " ")
	if err := writeSync(filepath.Join(kb.Dir, manifestName), mb); err != nil {
		return err
	}
	if err := syncDir(kb.Dir); err != nil {
		return err
	}
	kb.Manifest, kb.apps = m, k
	return kb.removeUnnamed(st)
}

// beforeManifest, when set (by tests), runs when the new generation's
// files are on disk and the manifest still names the old ones.
var beforeManifest func()

// removeUnnamed deletes the files of other generations.
func (kb *KB) removeUnnamed(st *State) error {
	keep := map[string]bool{manifestName: true, kb.Manifest.State: true, kb.Manifest.Apps: true, aggDir: true, lockName: true}
	ents, err := os.ReadDir(kb.Dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range ents {
		if !keep[e.Name()] && (strings.HasPrefix(e.Name(), "state.") || strings.HasPrefix(e.Name(), "apps.") || strings.HasPrefix(e.Name(), ".tmp")) {
			errs = append(errs, os.Remove(filepath.Join(kb.Dir, e.Name())))
		}
	}
	days := map[string]bool{}
	for _, d := range st.Days {
		days[d.File] = true
	}
	ents, err = os.ReadDir(filepath.Join(kb.Dir, aggDir))
	if err != nil {
		return err
	}
	for _, e := range ents {
		if !days[e.Name()] {
			errs = append(errs, os.Remove(filepath.Join(kb.Dir, aggDir, e.Name())))
		}
	}
	return errors.Join(errs...)
}

const lockName = "lock"

// lock takes the knowledge base's update lock (one learn at a time).
func lock(dir string) (func(), error) {
	f, err := safefile.OpenLock(filepath.Join(dir, lockName), 0o666)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: another learn is updating this knowledge base", dir)
	}
	return func() { f.Close() }, nil
}

// writeSync writes a knowledge base file whole, synced, under a temporary
// name renamed into place: never through a link planted at its name.
func writeSync(path string, b []byte) error {
	return safefile.WriteFileWith(path, b, 0o666, safefile.Options{Sync: true})
}

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(f.Sync(), f.Close())
}

// An aggregate day file is the magic "iopredAG", then little-endian int64
// start (ns since the Unix epoch of the first cell), int64 step (ns),
// uint32 cell count, then the read rates and the write rates of the whole
// file system as float32 bytes/s, one per cell, NaN for a cell no OST
// logged.

func writeAgg(path string, startNS, stepNS int64, read, write []float64) error {
	b := make([]byte, 0, 28+8*len(read))
	b = append(b, aggMagic...)
	b = binary.LittleEndian.AppendUint64(b, uint64(startNS))
	b = binary.LittleEndian.AppendUint64(b, uint64(stepNS))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(read)))
	for _, v := range [][]float64{read, write} {
		for _, x := range v {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(x)))
		}
	}
	return writeSync(path, b)
}

func readAgg(path string) (startNS, stepNS int64, read, write []float64, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, nil, nil, err
	}
	if len(b) < 28 || string(b[:8]) != aggMagic {
		return 0, 0, nil, nil, fmt.Errorf("%s: not an aggregate day file", path)
	}
	startNS = int64(binary.LittleEndian.Uint64(b[8:]))
	stepNS = int64(binary.LittleEndian.Uint64(b[16:]))
	n := int(binary.LittleEndian.Uint32(b[24:]))
	if len(b) != 28+8*n || stepNS <= 0 {
		return 0, 0, nil, nil, fmt.Errorf("%s: %d bytes for %d cells: truncated or damaged", path, len(b), n)
	}
	read, write = make([]float64, n), make([]float64, n)
	for i := range n {
		read[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[28+4*i:])))
		write[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[28+4*(n+i):])))
	}
	return startNS, stepNS, read, write, nil
}

func sortRuns(r []Run) {
	sort.Slice(r, func(a, b int) bool {
		if r[a].StartNS != r[b].StartNS {
			return r[a].StartNS < r[b].StartNS
		}
		return r[a].ID < r[b].ID
	})
}
