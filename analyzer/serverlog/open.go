package serverlog

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// Spec names a throughput log: its kind and where it is.
type Spec struct {
	// Kind is one of the Kinds, or empty to find it from the content
	// (DetectKind).
	Kind string
	// Path is the file, directory or mysql:// address.
	Path string
}

// String writes the spec as the flag that names it ("--lmt PATH").
// The password of a mysql:// address is left out: the string goes into
// messages and knowledge bases.
func (s Spec) String() string {
	p := RedactPassword(s.Path)
	if s.Kind == "" {
		return p
	}
	return "--" + s.Kind + " " + p
}

// RedactPassword returns a mysql:// address without its password (other
// paths as they are), for messages, logs and stored names.
func RedactPassword(path string) string {
	if !IsMySQL(path) {
		return path
	}
	rest := strings.TrimPrefix(path, "mysql://")
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return path
	}
	user, _, _ := strings.Cut(rest[:at], ":")
	return "mysql://" + user + rest[at:]
}

// opener opens one kind of source.
type opener struct {
	open   func(path string, opts Options) (Source, error)
	detect func(path string, head []byte, isDir bool) bool
	help   string // the flag's help
}

var openers = map[string]opener{
	"lmt": {open: OpenLMT, help: "LMT database: SQLite file or mysql://USER:PASS@HOST:PORT/DB",
		detect: func(path string, head []byte, isDir bool) bool {
			return IsMySQL(path) || !isDir && strings.HasPrefix(string(head), sqliteMagic)
		}},
	"store": {open: OpenStore, help: "iopred store directory (made by iopred serverlog import)",
		detect: func(path string, head []byte, isDir bool) bool { return isDir && IsStore(path) }},
	"lustre": {open: OpenLustre, help: "directory of lctl get_param obdfilter.*.stats / job_stats snapshots",
		detect: func(path string, head []byte, isDir bool) bool { return isDir && looksLustre(path) }},
	"ldms": {open: OpenLDMS, help: "LDMS store_csv file of the lustre_ost schema",
		detect: func(path string, head []byte, isDir bool) bool {
			if isDir {
				return false
			}
			if _, ok := ldmsAltHeader(path); ok {
				return true
			}
			return strings.HasPrefix(string(head), "#Time,")
		}},
	"prometheus": {open: OpenPrometheus, help: "Prometheus server http://HOST:PORT with lustre_exporter's per-OST byte counters (names: --prometheus-*)",
		detect: func(path string, head []byte, isDir bool) bool { return IsPrometheusURL(path) }},
	"csv": {open: OpenCSV, help: "CSV with header time,ost,read_bytes,write_bytes (cumulative; see --rates)",
		detect: func(path string, head []byte, isDir bool) bool {
			line, _, _ := strings.Cut(strings.ToLower(string(head)), "\n")
			return !isDir && !strings.HasPrefix(line, "#") && strings.Contains(line, "time") && strings.Contains(line, ",ost") &&
				strings.Contains(line, "read_bytes") && strings.Contains(line, "write_bytes")
		}},
}

// looksLustre tells whether one of the first files under dir starts as
// lctl get_param output does.
func looksLustre(dir string) bool {
	seen := 0
	found := false
	filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil || found || seen > 20 {
			return filepath.SkipAll
		}
		if !e.Type().IsRegular() {
			return nil
		}
		seen++
		f, err := os.Open(path)
		if err != nil {
			return nil
		}
		defer f.Close()
		b := make([]byte, 64)
		n, _ := io.ReadFull(f, b)
		h := strings.TrimSpace(string(b[:n]))
		found = strings.HasPrefix(h, "obdfilter.") || strings.HasPrefix(h, "snapshot_time") || strings.HasPrefix(h, "job_stats:")
		return nil
	})
	return found
}

// Kinds lists the kinds of sources OpenSource knows, sorted.
func Kinds() []string {
	ks := make([]string, 0, len(openers))
	for k := range openers {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// OpenSource opens the throughput log spec names. Every command that reads
// server-side logs goes through it (or through Flags), so that each takes
// every kind of log and the local store alike.
func OpenSource(spec Spec, opts Options) (Source, error) {
	kind := spec.Kind
	if kind == "" {
		k, err := DetectKind(spec.Path)
		if err != nil {
			return nil, err
		}
		kind = k
	}
	o, ok := openers[kind]
	if !ok {
		return nil, fmt.Errorf("%s: unknown kind of log %q (want one of %s)", spec.Path, kind, strings.Join(Kinds(), ", "))
	}
	return o.open(spec.Path, opts)
}

// DetectKind finds the kind of log at path from its content: a mysql://
// address or an SQLite file is LMT, a directory with the store's index is
// a store, one with obdfilter stats files is Lustre snapshots, a CSV
// whose header starts with #Time is LDMS, one with time,ost,... is plain
// CSV.
func DetectKind(path string) (string, error) {
	var head []byte
	isDir := false
	if !IsMySQL(path) && !IsPrometheusURL(path) {
		st, err := os.Stat(path)
		if err != nil {
			return "", err
		}
		isDir = st.IsDir()
		if !isDir {
			f, err := os.Open(path)
			if err != nil {
				return "", err
			}
			head = make([]byte, 4096)
			n, _ := io.ReadFull(f, head)
			head = head[:n]
			f.Close()
		}
	}
	for _, k := range Kinds() {
		if openers[k].detect(path, head, isDir) {
			return k, nil
		}
	}
	return "", fmt.Errorf("%s: not a log iopred knows (%s); name its kind with a flag", path, strings.Join(Kinds(), ", "))
}

// Flags are the options every command that reads server-side logs takes:
// one flag per kind of source (--lmt, --store, ...), --jobs, --tz,
// --skip-bad, --rates, --step and --max-interval. Register them on a
// command's flag set, then call Open and ReadJobs.
type Flags struct {
	Sources map[string]*string // per kind, the flag's value
	Jobs    string
	TZ      string
	SkipBad bool
	Rates   bool
	Step    time.Duration
	MaxIv   time.Duration
	// DefaultsFile is --defaults-file: the MariaDB option file with a live
	// LMT database's credentials.
	DefaultsFile string
	// Bad counts the rows left out under --skip-bad, over every read.
	Bad BadRows
	// Prometheus names the counters --prometheus reads.
	Prometheus PrometheusConfig

	mu       sync.Mutex
	warnings []string
}

// Warnings returns what the readers repaired, each message once.
func (f *Flags) Warnings() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.warnings)
}

func (f *Flags) addWarning(msg string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !slices.Contains(f.warnings, msg) {
		f.warnings = append(f.warnings, msg)
	}
}

// Register adds the source flags and the reading options to fs; withJobs
// adds --jobs too.
func (f *Flags) Register(fs *flag.FlagSet, withJobs bool) {
	f.Sources = map[string]*string{}
	for _, k := range Kinds() {
		f.Sources[k] = fs.String(k, "", openers[k].help)
	}
	if withJobs {
		fs.StringVar(&f.Jobs, "jobs", "", "job log: sacct --parsable2 output, Torque accounting file or directory, or jobs SQLite")
	}
	fs.StringVar(&f.TZ, "tz", "", "zone of times written without one (IANA name such as Europe/Berlin, or UTC); default: the local zone")
	fs.BoolVar(&f.SkipBad, "skip-bad", false, "leave bad rows out (and say how many) instead of stopping at the first")
	fs.BoolVar(&f.Rates, "rates", false, "plain CSV values are bytes per interval, not cumulative counters")
	fs.DurationVar(&f.Step, "step", 0, "grid width of the rates; default: the log's own sample width")
	fs.DurationVar(&f.MaxIv, "max-interval", 0, "longest gap between two counter readings taken as measured; default: 1.5 sample widths")
	fs.StringVar(&f.DefaultsFile, "defaults-file", "", "MariaDB option `file` with the [client] user, password, host, socket and port of a mysql:// LMT database, instead of /etc/my.cnf, /etc/mysql/my.cnf and ~/.my.cnf (MYSQL_PWD is read too)")
	f.Prometheus.RegisterPrometheus(fs)
}

// Options are the reading options the flags give.
func (f *Flags) Options() (Options, error) {
	o := Options{SkipBad: f.SkipBad, Bad: &f.Bad, PerInterval: f.Rates, Step: f.Step, MaxInterval: f.MaxIv,
		MySQLDefaultsFile: f.DefaultsFile, Warn: f.addWarning}
	o.Prometheus = f.Prometheus
	if f.TZ != "" {
		loc, err := time.LoadLocation(f.TZ)
		if err != nil {
			return o, fmt.Errorf("--tz %s: %v", f.TZ, err)
		}
		o.TZ = loc
	}
	if f.Step < 0 || f.MaxIv < 0 {
		return o, errors.New("--step and --max-interval must be positive")
	}
	return o, nil
}

// Specs returns every source the flags name, in the order of Kinds.
func (f *Flags) Specs() []Spec {
	var specs []Spec
	for _, k := range Kinds() {
		if p := f.Sources[k]; p != nil && *p != "" {
			specs = append(specs, Spec{Kind: k, Path: *p})
		}
	}
	return specs
}

// Spec returns the one source the flags name; it is an error to name
// none or several.
func (f *Flags) Spec() (Spec, error) {
	specs := f.Specs()
	switch len(specs) {
	case 0:
		return Spec{}, fmt.Errorf("no throughput log: give one of --%s", strings.Join(Kinds(), ", --"))
	case 1:
		return specs[0], nil
	}
	return Spec{}, fmt.Errorf("several throughput logs (%v and %v): give one", specs[0], specs[1])
}

// Open opens the source the flags name.
func (f *Flags) Open() (Source, error) {
	spec, err := f.Spec()
	if err != nil {
		return nil, err
	}
	opts, err := f.Options()
	if err != nil {
		return nil, err
	}
	return OpenSource(spec, opts)
}

// ReadJobs reads the --jobs log.
func (f *Flags) ReadJobs() ([]Job, error) {
	if f.Jobs == "" {
		return nil, errors.New("no job log: give --jobs")
	}
	opts, err := f.Options()
	if err != nil {
		return nil, err
	}
	return ReadJobs(f.Jobs, opts)
}

// Report writes how many bad rows were skipped, if any, to w.
func (f *Flags) Report(w io.Writer) {
	for _, m := range f.Warnings() {
		fmt.Fprintf(w, "warning: %s\n", m)
	}
	if n := f.Bad.Count(); n > 0 {
		fmt.Fprintf(w, "warning: %s\n", f.Bad.String())
	}
}
