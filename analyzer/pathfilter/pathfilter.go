// Package pathfilter decides which files an analysis leaves out by
// default: the system's own files (Darshan's default exclusions: /etc,
// /dev, /usr, /bin, /boot, /lib, /opt, /sbin, /sys, /proc, /var, and the
// same directories under the names a merged /usr gives them) and the MPI
// runtime's session and shared-memory files (Open MPI's session
// directories, shared-memory segments and shared-file-pointer lock files,
// MPICH's and ROMIO's, PMIx's, UCX's). A traced MPI job opens hundreds of
// them while it starts; they are what the runtime did, not what the
// application did, and they drown a summary.
//
// One Filter serves every analysis (the job view, summary, report), so
// that they leave out the same files.
package pathfilter

import (
	"fmt"
	"strings"
)

// Kind says why a rule excludes a path.
type Kind uint8

// The kinds of excluded paths.
const (
	// System paths: the operating system's and installed software's files.
	System Kind = iota + 1
	// MPIRuntime paths: files the MPI library and its launcher create for
	// their own use while the job runs.
	MPIRuntime
)

func (k Kind) String() string {
	switch k {
	case System:
		return "system"
	case MPIRuntime:
		return "MPI runtime"
	}
	return "kind(" + fmt.Sprint(uint8(k)) + ")"
}

// Rule is one exclusion.
type Rule struct {
	Kind Kind
	// Pattern describes the paths the rule matches, for people: "/etc/",
	// ".../ompi.*/..." (a directory of that name anywhere), "*.locktest.*"
	// (a file name).
	Pattern string
	// Owner says whose files they are: "Darshan's default", "Open MPI
	// session directory", ...
	Owner string
	match func(p *parsed) bool
}

// Filter is a set of exclusion rules. The nil *Filter excludes nothing.
type Filter struct {
	rules []Rule
	tops  map[string]int // top-level directory -> index of its rule
}

// systemDirs are Darshan's default exclusions (darshan-core.c), then the
// directories a merged /usr or a modern distribution adds beside them
// (/lib64 and /lib32 are /usr/lib*, /run is /var/run).
var systemDirs = []struct{ dir, owner string }{
	{"etc", "Darshan's default"}, {"dev", "Darshan's default"}, {"usr", "Darshan's default"},
	{"bin", "Darshan's default"}, {"boot", "Darshan's default"}, {"lib", "Darshan's default"},
	{"opt", "Darshan's default"}, {"sbin", "Darshan's default"}, {"sys", "Darshan's default"},
	{"proc", "Darshan's default"}, {"var", "Darshan's default"},
	{"lib64", "system libraries (/usr/lib64)"}, {"lib32", "system libraries (/usr/lib32)"},
	{"run", "run-time state (/var/run)"},
}

// mpiDirs are directories that only the MPI runtime creates, matched
// anywhere in a path (TMPDIR moves them): their name's prefix.
var mpiDirs = []struct{ prefix, owner string }{
	{"ompi.", "Open MPI session directory (ompi.<host>.<uid>)"},
	{"prte.", "Open MPI 5 / PRRTE session directory"},
	{"openmpi-sessions-", "Open MPI 1.x session directory"},
	{"pmix-", "PMIx rendezvous directory"},
	{"pmix.", "PMIx tool rendezvous directory"},
	{".openmpi", "Open MPI user parameters (~/.openmpi)"},
	{".pmix", "PMIx user parameters (~/.pmix)"},
}

// mpiNames are file names only the MPI runtime creates, wherever they
// are (some beside the application's own files).
var mpiNames = []struct {
	pattern, owner string
	match          func(base string) bool
}{
	{"vader_segment.*", "Open MPI shared-memory segment",
		func(b string) bool { return strings.HasPrefix(b, "vader_segment.") }},
	{"sm_segment.*", "Open MPI 5 shared-memory segment",
		func(b string) bool { return strings.HasPrefix(b, "sm_segment.") }},
	{"*.locktest.*", "Open MPI shared file pointer lock test (sharedfp)",
		func(b string) bool { return strings.Contains(b, ".locktest.") }},
	{"*.lockedfile", "Open MPI shared file pointer (sharedfp lockedfile)",
		func(b string) bool { return strings.HasSuffix(b, ".lockedfile") }},
	{".*.shfp.*", "ROMIO shared file pointer",
		func(b string) bool { return strings.HasPrefix(b, ".") && strings.Contains(b, ".shfp.") }},
	{"mpich_shar_tmp*", "MPICH shared-memory segment",
		func(b string) bool { return strings.HasPrefix(b, "mpich_shar_tmp") }},
	{"ucx_shm_posix_*", "UCX shared-memory segment (MPI transport)",
		func(b string) bool { return strings.HasPrefix(b, "ucx_shm_posix_") }},
}

// Default returns the filter every analysis uses unless told to keep
// every path: the system directories and the MPI runtime's files.
func Default() *Filter {
	f := &Filter{tops: map[string]int{}}
	for _, d := range systemDirs {
		dir := d.dir
		f.tops[dir] = len(f.rules)
		f.rules = append(f.rules, Rule{Kind: System, Pattern: "/" + dir + "/", Owner: d.owner,
			match: func(p *parsed) bool { return p.top == dir }})
	}
	for _, d := range mpiDirs {
		prefix := d.prefix
		f.rules = append(f.rules, Rule{Kind: MPIRuntime, Pattern: ".../" + prefix + "*/...", Owner: d.owner,
			match: func(p *parsed) bool { return p.hasDir(prefix) }})
	}
	for _, n := range mpiNames {
		m := n.match
		f.rules = append(f.rules, Rule{Kind: MPIRuntime, Pattern: n.pattern, Owner: n.owner,
			match: func(p *parsed) bool { return m(p.base) }})
	}
	return f
}

// Rules returns the filter's rules in the order they are tried.
func (f *Filter) Rules() []Rule {
	if f == nil {
		return nil
	}
	return f.rules
}

// parsed is a path cut into what the rules look at.
type parsed struct {
	path string
	top  string // first component of an absolute path ("etc"), "" otherwise
	dirs string // the path without its last component
	base string // the last component
}

func parse(path string) parsed {
	p := parsed{path: path}
	i := strings.LastIndexByte(path, '/')
	p.base = path[i+1:]
	if i > 0 {
		p.dirs = path[:i]
	}
	if strings.HasPrefix(path, "/") {
		rest := path[1:]
		if j := strings.IndexByte(rest, '/'); j >= 0 {
			p.top = rest[:j]
		} else {
			p.top = rest
		}
	}
	return p
}

// hasDir reports whether a directory of the path (not its last
// component) has a name that starts with prefix.
func (p *parsed) hasDir(prefix string) bool {
	d := p.dirs
	for {
		k := strings.Index(d, prefix)
		if k < 0 {
			return false
		}
		if k == 0 || d[k-1] == '/' {
			return true
		}
		d = d[k+1:]
	}
}

// Match returns the rule that excludes path, if any. A path named
// relative to a working directory is matched by its file and directory
// names only, as the working directory is not known.
func (f *Filter) Match(path string) (Rule, bool) {
	if f == nil || path == "" {
		return Rule{}, false
	}
	p := parse(path)
	// "/etc" itself is as much the system's as "/etc/passwd".
	if i, ok := f.tops[p.top]; ok && p.top != "" {
		return f.rules[i], true
	}
	for _, r := range f.rules {
		if r.Kind != System && r.match(&p) {
			return r, true
		}
	}
	return Rule{}, false
}

// Excludes reports whether the filter leaves path out.
func (f *Filter) Excludes(path string) bool {
	_, ok := f.Match(path)
	return ok
}

// Describe lists the rules on one line for people: the system directories,
// then the MPI runtime's patterns.
func (f *Filter) Describe() string {
	if f == nil {
		return "nothing"
	}
	var sys, mpi []string
	for _, r := range f.rules {
		switch r.Kind {
		case System:
			sys = append(sys, strings.TrimSuffix(r.Pattern, "/"))
		case MPIRuntime:
			mpi = append(mpi, r.Pattern)
		}
	}
	return "system directories " + strings.Join(sys, " ") + "; MPI runtime files " + strings.Join(mpi, " ")
}

// Tally counts what a filter left out.
type Tally struct {
	Files  int    `json:"files"`  // distinct paths
	Events uint64 `json:"events"` // calls on them
	Bytes  int64  `json:"bytes"`  // bytes read and written
	IONs   int64  `json:"io_ns"`  // time in the calls
	// ByKind counts the distinct paths of each kind ("system", "MPI runtime").
	ByKind map[string]int `json:"files_by_kind,omitempty"`
}

// Add counts one more excluded path.
func (t *Tally) Add(r Rule) {
	t.Files++
	if t.ByKind == nil {
		t.ByKind = map[string]int{}
	}
	t.ByKind[r.Kind.String()]++
}
