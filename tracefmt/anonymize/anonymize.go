// Package anonymize replaces the names in traces (paths, command-line
// arguments, host names, program and module paths) with keyed hashes, so
// that a trace can be shared without them and still be analysed.
//
// Equal names give equal hashes under one key, in every trace of a job
// and across jobs, so per-file tables, patterns, periods and the process
// tree come out the same. Paths are hashed one component at a time: the
// directory structure survives (files of one directory still share it),
// and so do the pieces the analyses look at, which are no secret:
//
//   - the separators, ".", "..", a hidden file's leading dot;
//   - a short extension (".h5", ".nc", ".0001": up to 8 letters or
//     digits), which tells a file's kind;
//   - the top directory of a system path (/usr, /etc, /proc, ... as
//     pathfilter names them), and the literal parts of the MPI runtime's
//     names pathfilter knows ("ompi." of ompi.node7.1000, ".locktest."),
//     so that the same files are left out of the analyses.
//
// Everything else, including each argument but the program as a whole,
// becomes 12 characters of base32 from HMAC-SHA256 under the user's key.
// Function names in call-stack frames are kept: they name code, not data,
// and make the contexts readable; module paths are hashed like any path.
// Without the key, a hash cannot be turned back into a name except by
// guessing the name and the key together.
package anonymize

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"iopred/analyzer/pathfilter"
	"iopred/internal/safefile"
	"iopred/tracefmt"
)

// KeyEnv names the environment variable that names the key file.
const KeyEnv = "IOPRED_ANONYMIZE_KEY"

// KeyBytes is the length of a generated key.
const KeyBytes = 32

// HashLen is the length of each hashed name.
const HashLen = 12

// DefaultKeyPath is where the key is kept unless IOPRED_ANONYMIZE_KEY or a
// flag says otherwise: ~/.config/iopred/anonymize.key.
func DefaultKeyPath() (string, error) {
	if p := os.Getenv(KeyEnv); p != "" {
		return p, nil
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("no key file named (%s) and no home directory for the default: %w", KeyEnv, err)
	}
	return filepath.Join(dir, "iopred", "anonymize.key"), nil
}

// LoadKey reads the key file at path, creating it (0600, with a random
// key, its directory 0700) if it does not exist. Of processes that create
// it at once (the ranks of a job), one writes it and all read that one.
func LoadKey(path string) ([]byte, error) {
	return LoadKeyWith(path, KeyIO{})
}

// KeyIO says how a key file is read and created: the preloaded library
// does both through descriptors out of the traced program's way.
type KeyIO struct {
	Create safefile.Options
	// Read reads a whole file; nil means os.ReadFile.
	Read func(path string) ([]byte, error)
}

// LoadKeyWith is LoadKey with the key file's I/O.
func LoadKeyWith(path string, kio KeyIO) ([]byte, error) {
	read := kio.Read
	if read == nil {
		read = os.ReadFile
	}
	key, err := readKey(path, read)
	if !errors.Is(err, fs.ErrNotExist) {
		return key, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("anonymization key: %w", err)
	}
	fresh := make([]byte, KeyBytes)
	rand.Read(fresh)
	err = safefile.WriteNew(path, []byte(hex.EncodeToString(fresh)+"\n"), 0o600, kio.Create)
	if err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("anonymization key: %w", err)
	}
	return readKey(path, read)
}

func readKey(path string, read func(string) ([]byte, error)) ([]byte, error) {
	st, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("anonymization key %s: not a regular file", path)
	}
	b, err := read(path)
	if err != nil {
		return nil, fmt.Errorf("anonymization key: %w", err)
	}
	s := strings.TrimSpace(string(b))
	key, err := hex.DecodeString(s)
	if err != nil || len(key) < 16 {
		return nil, fmt.Errorf("anonymization key %s: want at least 32 hexadecimal digits", path)
	}
	return key, nil
}

// Anonymizer hashes names under one key. It is safe for concurrent use.
type Anonymizer struct {
	key    []byte
	mu     sync.Mutex
	cache  map[string]string
	filter *pathfilter.Filter
	globs  [][]string // the literal pieces of the filter's name patterns
}

var b32 = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// New returns an Anonymizer with key.
func New(key []byte) *Anonymizer {
	a := &Anonymizer{key: key, cache: map[string]string{}, filter: pathfilter.Default()}
	for _, r := range a.filter.Rules() {
		if r.Kind != pathfilter.MPIRuntime {
			continue
		}
		// ".../ompi.*/..." names a directory, "*.locktest.*" a file: the
		// component's pattern either way.
		p := strings.TrimSuffix(strings.TrimPrefix(r.Pattern, ".../"), "/...")
		a.globs = append(a.globs, strings.Split(p, "*"))
	}
	return a
}

// Token returns the hash of a whole name (a host, an argument).
func (a *Anonymizer) Token(s string) string {
	if s == "" {
		return ""
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if h, ok := a.cache[s]; ok {
		return h
	}
	m := hmac.New(sha256.New, a.key)
	m.Write([]byte(s))
	h := b32.EncodeToString(m.Sum(nil))[:HashLen]
	if len(a.cache) < 1<<20 {
		a.cache[s] = h
	}
	return h
}

// Path returns a path with each component hashed (see the package
// comment for what is kept).
func (a *Anonymizer) Path(p string) string {
	if p == "" {
		return ""
	}
	parts := strings.Split(p, "/")
	for i, c := range parts {
		if i == 1 && parts[0] == "" && len(parts) > 1 {
			if r, ok := a.filter.Match("/" + c + "/"); ok && r.Kind == pathfilter.System {
				continue // /usr, /etc, /proc: the system's, and what leaves them out
			}
		}
		parts[i] = a.component(c)
	}
	return strings.Join(parts, "/")
}

func (a *Anonymizer) component(c string) string {
	if c == "" || c == "." || c == ".." {
		return c
	}
	for _, g := range a.globs {
		if out, ok := a.keepLiterals(c, g); ok {
			return out
		}
	}
	lead := ""
	for strings.HasPrefix(c, ".") {
		lead += "."
		c = c[1:]
	}
	if c == "" {
		return lead
	}
	stem, ext := c, ""
	if i := strings.LastIndexByte(c, '.'); i > 0 && isExtension(c[i+1:]) {
		stem, ext = c[:i], c[i:]
	}
	out := lead + a.Token(stem) + ext
	// A hash must not make a name the analyses leave out: hash again,
	// deterministically, in the rare case it would.
	for salt := "\x00"; a.matchesRule(out); salt += "\x00" {
		out = lead + a.Token(stem+salt) + ext
	}
	return out
}

// keepLiterals matches c against a pattern's literal pieces (the parts
// between its *s, which may overlap as the rules' own tests do: ".*.shfp.*"
// matches ".shfp.1"); on a match the bytes the pieces cover stay and each
// run of other bytes is hashed.
func (a *Anonymizer) keepLiterals(c string, lits []string) (string, bool) {
	keep, ok := globCover(c, lits)
	if !ok {
		return "", false
	}
	var b strings.Builder
	for i := 0; i < len(c); {
		j := i
		for j < len(c) && keep[j] == keep[i] {
			j++
		}
		if keep[i] {
			b.WriteString(c[i:j])
		} else {
			b.WriteString(a.Token(c[i:j]))
		}
		i = j
	}
	return b.String(), true
}

// globCover tells whether c matches the pattern whose literal pieces are
// lits (a prefix, pieces contained in order, a suffix), and which bytes
// the pieces cover.
func globCover(c string, lits []string) ([]bool, bool) {
	if len(lits) < 2 {
		return nil, false // no *: not a pattern of names
	}
	first, last := lits[0], lits[len(lits)-1]
	if !strings.HasPrefix(c, first) || !strings.HasSuffix(c, last) {
		return nil, false
	}
	keep := make([]bool, len(c))
	mark := func(at, n int) {
		for k := at; k < at+n; k++ {
			keep[k] = true
		}
	}
	mark(0, len(first))
	from := 0
	for _, lit := range lits[1 : len(lits)-1] {
		j := strings.Index(c[from:], lit)
		if j < 0 {
			return nil, false
		}
		mark(from+j, len(lit))
		from += j + len(lit)
	}
	if len(c)-len(last) < 0 {
		return nil, false
	}
	mark(len(c)-len(last), len(last))
	return keep, true
}

// matchesRule tells whether a hashed name would pass for one of the MPI
// runtime's (".pmix" + a hash that happens to start so).
func (a *Anonymizer) matchesRule(c string) bool {
	for _, g := range a.globs {
		if _, ok := globCover(c, g); ok {
			return true
		}
	}
	return false
}

func isExtension(s string) bool {
	if s == "" || len(s) > 8 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// Header returns h with its program, arguments and host hashed. The
// program and arguments that look like paths are hashed as paths, so that
// they match the file table's hashes.
func (a *Anonymizer) Header(h tracefmt.Header) tracefmt.Header {
	h.Program = a.Path(h.Program)
	h.Host = a.Token(h.Host)
	if h.Args != nil {
		args := make([]string, len(h.Args))
		for i, s := range h.Args {
			if i == 0 || strings.Contains(s, "/") {
				args[i] = a.Path(s)
			} else {
				args[i] = a.Token(s)
			}
		}
		h.Args = args
	}
	return h
}

// Context returns c with its modules' paths hashed; its id, offsets and
// function names stay.
func (a *Anonymizer) Context(c tracefmt.Context) tracefmt.Context {
	frames := make([]tracefmt.Frame, len(c.Frames))
	for i, f := range c.Frames {
		f.Module = a.Path(f.Module)
		frames[i] = f
	}
	c.Frames = frames
	return c
}

// File returns f with its path hashed.
func (a *Anonymizer) File(f tracefmt.File) tracefmt.File {
	f.Path = a.Path(f.Path)
	return f
}

// Proc returns p with the program it exec'd hashed.
func (a *Anonymizer) Proc(p tracefmt.Proc) tracefmt.Proc {
	p.Path = a.Path(p.Path)
	return p
}

// Region returns g with its name and the values of its arguments hashed
// (a function's name can say what the application is); the category and
// the arguments' keys stay.
func (a *Anonymizer) Region(g tracefmt.Region) tracefmt.Region {
	g.Name = a.Token(g.Name)
	if g.Args != nil {
		args := make(map[string]string, len(g.Args))
		for k, v := range g.Args {
			args[k] = a.Token(v)
		}
		g.Args = args
	}
	return g
}

// TraceName returns the name of h's trace file with its program and host
// hashed: <exe>.<host>.<rest> becomes <hash>.<hash>.<rest>, any other
// name is hashed whole but for its suffix.
func (a *Anonymizer) TraceName(base string, h tracefmt.Header) string {
	stem, suffix := base, ""
	for _, s := range []string{tracefmt.FileSuffix, ".iopspill"} {
		if strings.HasSuffix(base, s) {
			stem, suffix = strings.TrimSuffix(base, s), s
			break
		}
	}
	lead := filepath.Base(h.Program) + "." + h.Host + "."
	if h.Program != "" && h.Host != "" && strings.HasPrefix(stem, lead) {
		return a.Token(filepath.Base(h.Program)) + "." + a.Token(h.Host) + "." + stem[len(lead):] + suffix
	}
	return a.Token(stem) + suffix
}

// Copy writes every record of s to w with its names hashed. What s held
// before a read error is written; the error is returned.
func (a *Anonymizer) Copy(w *tracefmt.Writer, s tracefmt.Stream) error {
	return s.Each(func(rec tracefmt.Record) error {
		switch {
		case rec.Context != nil:
			return w.Context(a.Context(*rec.Context))
		case rec.File != nil:
			return w.File(a.File(*rec.File))
		case rec.Counters != nil:
			return w.Counters(rec.Counters)
		case rec.Event != nil:
			return w.Event(rec.Event)
		case rec.Proc != nil:
			return w.Proc(a.Proc(*rec.Proc))
		case rec.Region != nil:
			g := a.Region(*rec.Region)
			return w.Region(&g)
		case rec.Footer != nil:
			return w.Close(*rec.Footer)
		}
		return nil
	})
}
