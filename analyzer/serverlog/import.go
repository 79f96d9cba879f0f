package serverlog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"iopred/internal/safefile"
)

// ImportOptions tune Import.
type ImportOptions struct {
	// From and To limit the import to a window of the sources; zero
	// means their whole span.
	From, To time.Time
	// All re-imports every day of the sources. By default a day a source
	// already filled completely in an earlier import is skipped, so that
	// a daily import of a growing log reads only the new days (and the
	// last, partial one again).
	All bool
	// Replace lets a source overwrite samples the store already holds
	// with different values from another source. Without it such an
	// import is refused, and the store left as it was.
	Replace bool
	// Progress, when set, is called after each day.
	Progress func(ImportProgress)
}

// ImportProgress is where an import is.
type ImportProgress struct {
	Source      string // the source, as its flag names it
	Day         string // YYYY-MM-DD (UTC) just done
	Done, Total int    // days of this source done, and to do
	Skipped     bool   // the day was already complete in the store
	Unchanged   bool   // the day was read and already held exactly this
	Refused     bool   // the day conflicts with the store: the import will be refused
}

// ImportStats sums up an import.
type ImportStats struct {
	Days      int   // days written
	Skipped   int   // days already complete, left as they were
	Unchanged int   // days read again that held exactly what the source gives: not rewritten
	Replaced  int64 // OST samples whose value another source had given, overwritten under Replace
	// Resets are the counter resets met in the days read.
	Resets []CounterReset
	Cells  int64 // OST samples written: per day, the OSTs with data times the cells from the first known to the last
	Known  int64 // of those, the known ones
}

// Import reads the sources into the store in dir, creating it if needed,
// day by day (UTC days). The store's step is opts.Step, or the first
// source's own sample width; every source is read on that grid. A day
// already in the store is merged: the source's known samples fill the
// store's unknown ones, so importing the same data again changes nothing
// (a day that would not change is not rewritten), and sources of
// different OSTs (or file systems) fill one store side by side.
//
// The store never changes silently: a known sample of another source
// that the new one gives a different value (another file for the same
// OSTs and times, the same file read in another zone under another name)
// is a conflict, and the import is refused with the OSTs and the time
// range named, the store left as it was, unless iopts.Replace; a source
// imported again in another zone (opts.TZ) is refused whatever
// iopts.Replace says. A source read again may change its own samples (a
// growing log's last, partial interval). Counter resets are recorded in
// the store and returned.
//
// The context stops the import between days; what was written stays
// readable.
func Import(ctx context.Context, dir string, specs []Spec, opts Options, iopts ImportOptions) (ImportStats, error) {
	var stats ImportStats
	w, unlock, err := openWriter(dir)
	if err != nil {
		return stats, err
	}
	defer unlock()
	for _, spec := range specs {
		if err := w.importSpec(ctx, spec, opts, iopts, &stats); err != nil {
			return stats, w.finish(err)
		}
	}
	return stats, w.finish(nil)
}

// finish ends an import: a refused one puts the index back as it was and
// removes the chunks it wrote; any other removes the chunks the new index
// no longer names.
func (w *storeWriter) finish(err error) error {
	var ce *ConflictError
	if errors.As(err, &ce) {
		if rerr := w.rollback(); rerr != nil {
			return fmt.Errorf("%v; putting the store back failed: %v", err, rerr)
		}
		return err
	}
	for _, f := range w.obsolete {
		os.Remove(filepath.Join(w.dir, daysDir, f))
	}
	w.obsolete = nil
	return err
}

// rollback writes the index the import started from and removes the
// chunks the import wrote.
func (w *storeWriter) rollback() error {
	if w.orig == nil {
		if err := os.Remove(filepath.Join(w.dir, indexName)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	} else {
		tmp := filepath.Join(w.dir, indexName+".tmp")
		if err := writeFileSync(tmp, w.orig); err != nil {
			return err
		}
		if err := os.Rename(tmp, filepath.Join(w.dir, indexName)); err != nil {
			return err
		}
		if err := safefile.SyncDir(w.dir); err != nil {
			return err
		}
	}
	for _, f := range w.written {
		os.Remove(filepath.Join(w.dir, daysDir, f))
	}
	w.written, w.obsolete = nil, nil
	return nil
}

// ConflictError is an import refused because its source gives other
// values than the store holds for some OSTs and times.
type ConflictError struct {
	Source   string    // the source refused
	Others   []string  // the sources the store's samples came from, when known
	OSTs     []string  // the OSTs of the conflicting samples
	From, To time.Time // the span of the conflicting samples
	Samples  int64     // how many OST samples differ (read and write counted once)
}

func (e *ConflictError) Error() string {
	osts := strings.Join(e.OSTs, ", ")
	if len(e.OSTs) > 6 {
		osts = strings.Join(e.OSTs[:3], ", ") + ", ..., " + e.OSTs[len(e.OSTs)-1]
	}
	others := "an earlier import"
	if len(e.Others) > 0 {
		others = strings.Join(e.Others, " and ")
	}
	return fmt.Sprintf("%s: %d OST samples differ from what the store holds from %s: %d OSTs (%s) from %s to %s; nothing was imported (--replace overwrites them with this source's)",
		e.Source, e.Samples, others, len(e.OSTs), osts, e.From.UTC().Format("2006-01-02 15:04:05 MST"), e.To.UTC().Format("2006-01-02 15:04:05 MST"))
}

// conflicts gathers the samples a source would change.
type conflicts struct {
	osts     map[string]bool
	others   map[string]bool
	from, to int64
	samples  int64
}

func (c *conflicts) add(ost string, at, end int64, others []string) {
	if c.osts == nil {
		c.osts, c.others, c.from, c.to = map[string]bool{}, map[string]bool{}, at, end
	}
	c.osts[ost] = true
	for _, o := range others {
		c.others[o] = true
	}
	c.from, c.to = min(c.from, at), max(c.to, end)
	c.samples++
}

func (c *conflicts) err(source string) error {
	if c.samples == 0 {
		return nil
	}
	e := &ConflictError{Source: source, From: time.Unix(0, c.from), To: time.Unix(0, c.to), Samples: c.samples}
	for o := range c.osts {
		e.OSTs = append(e.OSTs, o)
	}
	for o := range c.others {
		e.Others = append(e.Others, o)
	}
	sort.Strings(e.OSTs)
	sort.Strings(e.Others)
	return e
}

// openWriter creates the store's directories if needed, locks the store,
// reads its index and removes what an interrupted import left.
func openWriter(dir string) (*storeWriter, func(), error) {
	if err := os.MkdirAll(filepath.Join(dir, daysDir), 0o755); err != nil {
		return nil, nil, err
	}
	unlock, err := lockStore(dir)
	if err != nil {
		return nil, nil, err
	}
	w := &storeWriter{dir: dir}
	if IsStore(dir) {
		s, err := openStore(dir)
		if err != nil {
			unlock()
			return nil, nil, err
		}
		w.s = s
		if w.orig, err = json.MarshalIndent(&s.idx, "", " "); err != nil {
			unlock()
			return nil, nil, err
		}
		w.orig = append(w.orig, '\n')
	}
	if err := w.cleanup(); err != nil {
		unlock()
		return nil, nil, err
	}
	return w, unlock, nil
}

// lockStore keeps two imports from writing one store at once.
func lockStore(dir string) (func(), error) {
	f, err := safefile.OpenLock(filepath.Join(dir, ".lock"), 0o666)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: another import is writing this store", dir)
	}
	return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
}

type storeWriter struct {
	dir string
	s   *Store // nil until the first day is written to a new store
	// orig is the index the import started from (nil: no store yet), to
	// put back when the import is refused.
	orig []byte
	// written are the chunks this import wrote; obsolete those it
	// replaced, removed when the import ends unrefused.
	written, obsolete []string
	id                string // the content identity of the source being imported
}

// cleanup removes what an interrupted import left: temporary files and
// chunks no index names.
func (w *storeWriter) cleanup() error {
	named := map[string]bool{}
	if w.s != nil {
		for _, d := range w.s.idx.Days {
			named[d.File] = true
		}
	}
	ents, err := os.ReadDir(filepath.Join(w.dir, daysDir))
	if err != nil {
		return err
	}
	for _, e := range ents {
		if !named[e.Name()] {
			os.Remove(filepath.Join(w.dir, daysDir, e.Name()))
		}
	}
	os.Remove(filepath.Join(w.dir, indexName+".tmp")) // as stores before safefile named it
	if old, err := filepath.Glob(filepath.Join(w.dir, safefile.TempPrefix+indexName+".*")); err == nil {
		for _, p := range old {
			os.Remove(p)
		}
	}
	return nil
}

func sourceName(spec Spec) string {
	p := spec.Path
	if IsMySQL(p) {
		if _, name, err := parseMySQL(p); err == nil {
			p = name
		}
	} else if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	return Spec{Kind: spec.Kind, Path: p}.String()
}

func (w *storeWriter) importSpec(ctx context.Context, spec Spec, opts Options, iopts ImportOptions, stats *ImportStats) error {
	if spec.Kind == "" {
		k, err := DetectKind(spec.Path)
		if err != nil {
			return err
		}
		spec.Kind = k
	}
	if spec.Kind == "store" {
		return fmt.Errorf("%s: importing a store into a store: copy its directory instead", spec.Path)
	}
	if w.s != nil {
		opts.Step = time.Duration(w.s.idx.StepNS)
	}
	name, tz := sourceName(spec), ""
	if spec.Kind == "lmt" || spec.Kind == "csv" {
		// Their times may be written without a zone.
		tz = opts.loc().String()
	}
	src, err := OpenSource(spec, opts)
	if err != nil {
		return err
	}
	defer src.Close()
	id := ""
	if s, ok := src.(interface{ Identity() string }); ok {
		id = s.Identity()
	}
	if w.s != nil {
		for _, o := range w.s.idx.Origins {
			if (o.Source == name || id != "" && o.ID == id) && o.TZ != tz {
				what := "already in the store"
				if o.Source != name {
					what = "the same log as " + o.Source + ", already in the store"
				}
				return fmt.Errorf("%s: %s read in zone %s, now in %s: its times would move and its bytes count twice; import it with --tz %s (or into a new store)",
					name, what, o.TZ, tz, o.TZ)
			}
		}
	}
	w.id = id
	return w.importSource(ctx, src, name, tz, iopts, stats)
}

// ImportFrom imports one Source the caller made (the center simulator's
// rates, a source opened with its own options) into the store in dir, as
// Import does; name identifies it in the store (for skipping the days it
// filled). Its grid must be the store's: open it with Options.Step set to
// the store's step when the store exists.
func ImportFrom(ctx context.Context, dir string, src Source, name string, iopts ImportOptions) (ImportStats, error) {
	var stats ImportStats
	w, unlock, err := openWriter(dir)
	if err != nil {
		return stats, err
	}
	defer unlock()
	w.id = ""
	err = w.importSource(ctx, src, name, "", iopts, &stats)
	return stats, w.finish(err)
}

func (w *storeWriter) importSource(ctx context.Context, src Source, name, tz string, iopts ImportOptions, stats *ImportStats) error {
	from, to, step, err := src.Span()
	if err != nil {
		return err
	}
	if w.s == nil {
		w.s = &Store{dir: w.dir, idx: storeIndex{Version: storeVersion, StepNS: int64(step)}, pos: map[string]int{}}
	}
	if int64(step) != w.s.idx.StepNS {
		return fmt.Errorf("%s: sample width %v, the store's is %v (read it with Options.Step %v)", name, step,
			time.Duration(w.s.idx.StepNS), time.Duration(w.s.idx.StepNS))
	}
	if from.UnixNano()%w.s.idx.StepNS != 0 {
		return fmt.Errorf("%s: grid starts at %v, not on a whole multiple of %v since the Unix epoch as the store's", name, from, step)
	}
	if !iopts.From.IsZero() && iopts.From.After(from) {
		from = iopts.From
	}
	if !iopts.To.IsZero() && iopts.To.Before(to) {
		to = iopts.To
	}
	st := w.s.idx.StepNS
	var days []int64 // first cell of each day
	for k := floorDiv(from.UnixNano(), st); k*st < to.UnixNano(); {
		k0, n := dayCells(k*st, st)
		days = append(days, k0)
		k = k0 + int64(n)
	}
	srcEnd := to.UnixNano()
	osts, err := src.OSTs()
	if err != nil {
		return err
	}
	// The origins as they were: a sample is another source's when an
	// origin of another name covers it.
	origins := slices.Clone(w.s.idx.Origins)
	var clash conflicts
	for i, k0 := range days {
		if err := ctx.Err(); err != nil {
			return err
		}
		_, n := dayCells(k0*st, st)
		day := dayOf(k0 * st)
		skip := !iopts.All && w.complete(day, name)
		unchanged, clashes := stats.Unchanged, clash.samples
		if !skip {
			// After the first conflict the days are only checked, so that
			// the refusal names them all.
			check := clash.samples > 0
			if err := w.importDay(src, name, k0, n, from, to, srcEnd, origins, iopts.Replace, check, &clash, stats); err != nil {
				return err
			}
		} else {
			stats.Skipped++
		}
		if iopts.Progress != nil {
			iopts.Progress(ImportProgress{Source: name, Day: day, Done: i + 1, Total: len(days), Skipped: skip,
				Unchanged: stats.Unchanged > unchanged, Refused: clash.samples > clashes})
		}
	}
	if err := clash.err(name); err != nil {
		return err
	}
	changed := false
	if rr, ok := src.(ResetReporter); ok {
		for _, r := range rr.CounterResets() {
			if r.Before.Before(from) || !r.Before.Before(to) {
				continue
			}
			stats.Resets = append(stats.Resets, r)
			sr := storeReset{OST: r.OST, AfterNS: r.After.UnixNano(), BeforeNS: r.Before.UnixNano(), Source: name}
			if !slices.ContainsFunc(w.s.idx.Resets, func(x storeReset) bool { return x.OST == sr.OST && x.BeforeNS == sr.BeforeNS }) {
				w.s.idx.Resets = append(w.s.idx.Resets, sr)
				changed = true
			}
		}
		slices.SortFunc(w.s.idx.Resets, func(a, b storeReset) int {
			if c := cmpInt64(a.BeforeNS, b.BeforeNS); c != 0 {
				return c
			}
			return cmpString(a.OST, b.OST)
		})
	}
	if len(w.s.idx.Days) == 0 {
		return nil
	}
	if w.addOrigin(storeOrigin{Source: name, ID: w.id, TZ: tz, OSTs: osts, FromNS: from.UnixNano(), ToNS: to.UnixNano()}) {
		changed = true
	}
	if !slices.Contains(w.s.idx.Sources, name) {
		w.s.idx.Sources = append(w.s.idx.Sources, name)
		changed = true
	}
	if changed {
		return w.writeIndex()
	}
	return nil
}

// addOrigin records what a source brought, widening its earlier record;
// it tells whether the index changed.
func (w *storeWriter) addOrigin(o storeOrigin) bool {
	for i := range w.s.idx.Origins {
		old := &w.s.idx.Origins[i]
		if old.Source != o.Source {
			continue
		}
		changed := false
		for _, n := range o.OSTs {
			if !slices.Contains(old.OSTs, n) {
				old.OSTs = append(old.OSTs, n)
				changed = true
			}
		}
		if o.FromNS < old.FromNS {
			old.FromNS, changed = o.FromNS, true
		}
		if o.ToNS > old.ToNS {
			old.ToNS, changed = o.ToNS, true
		}
		return changed
	}
	w.s.idx.Origins = append(w.s.idx.Origins, o)
	return true
}

// othersAt lists the sources other than name that brought ost's data at
// ns; nil when none is known to (a store written before origins were
// recorded knows none: every different sample is then a conflict).
func othersAt(origins []storeOrigin, name, ost string, ns int64) (others []string, self bool) {
	for i := range origins {
		if origins[i].covers(ost, ns) {
			if origins[i].Source == name {
				self = true
			} else {
				others = append(others, origins[i].Source)
			}
		}
	}
	return others, self
}

// complete tells whether the store's day holds the source in full.
func (w *storeWriter) complete(day, source string) bool {
	for _, d := range w.s.idx.Days {
		if d.Day == day {
			return slices.Contains(d.Complete, source)
		}
	}
	return false
}

// importDay merges one day of a source into the store. A known sample
// that another source gave a different value is a conflict: noted in
// clash, and the day is not written unless replace. With check, the day
// is only checked.
func (w *storeWriter) importDay(src Source, name string, k0 int64, n int, from, to time.Time, srcEnd int64,
	origins []storeOrigin, replace, check bool, clash *conflicts, stats *ImportStats) error {
	st := w.s.idx.StepNS
	a, b := time.Unix(0, k0*st), time.Unix(0, (k0+int64(n))*st)
	if a.Before(from) {
		a = from
	}
	if b.After(to) {
		b = to
	}
	r, err := src.Window(a, b)
	if err != nil {
		return err
	}
	if r.Step != time.Duration(st) {
		return fmt.Errorf("%s: read on a %v grid, the store's is %v", name, r.Step, time.Duration(st))
	}
	// The day as it is, then the source's known samples over it.
	names := slices.Clone(w.s.idx.OSTs)
	for _, o := range r.OSTs {
		if _, ok := w.s.pos[o]; !ok {
			names = append(names, o)
		}
	}
	sort.Strings(names)
	pos := map[string]int{}
	for i, o := range names {
		pos[o] = i
	}
	read, write := make([][]float64, len(names)), make([][]float64, len(names))
	nanCol := func() []float64 {
		c := make([]float64, n)
		for i := range c {
			c[i] = math.NaN()
		}
		return c
	}
	day := dayOf(k0 * st)
	old := -1
	for i, d := range w.s.idx.Days {
		if d.Day == day {
			old = i
		}
	}
	var complete []string
	oldVersion := 0
	if old >= 0 {
		dd, err := readChunk(filepath.Join(w.dir, daysDir, w.s.idx.Days[old].File), w.s.pos, len(w.s.idx.OSTs), w.s.idx.StepNS)
		if err != nil {
			return err
		}
		if dd.cells != n || dd.start != k0*st {
			return fmt.Errorf("%s: chunk of %s holds %d cells from %d, want %d from %d", w.dir, day, dd.cells, dd.start, n, k0*st)
		}
		for i, o := range w.s.idx.OSTs {
			read[pos[o]], write[pos[o]] = dd.read[i], dd.write[i]
		}
		complete = slices.Clone(w.s.idx.Days[old].Complete)
		oldVersion = dd.version
	}
	off := int(r.Index(time.Unix(0, k0*st)))
	sec := float64(st) / 1e9
	changed, before := false, clash.samples
	// merge puts a known sample v over the store's old one, telling
	// whether it differs from another source's.
	merge := func(old *float64, v float64) (differs bool) {
		if math.IsNaN(v) {
			return false
		}
		switch {
		case math.IsNaN(*old):
			changed = true
		case cellBytes(*old, sec) != cellBytes(v, sec):
			changed, differs = true, true
		}
		*old = v
		return differs
	}
	for i, o := range r.OSTs {
		j := pos[o]
		if read[j] == nil {
			read[j], write[j] = nanCol(), nanCol()
		}
		for t := range r.Len() {
			c := t - off
			if c < 0 || c >= n {
				continue
			}
			dr := merge(&read[j][c], r.Read[i][t])
			dw := merge(&write[j][c], r.Write[i][t])
			if dr || dw {
				at := (k0 + int64(c)) * st
				if others, self := othersAt(origins, name, o, at); len(others) > 0 || !self {
					if replace {
						stats.Replaced++
					} else {
						clash.add(o, at, at+st, others)
					}
				}
			}
		}
	}
	if check || clash.samples > before {
		return nil // refused: nothing written
	}
	if old >= 0 && !changed && oldVersion == storeVersion {
		// The day holds exactly this already; only its completeness may be
		// news. (A version 1 chunk is written again in the new layout.)
		stats.Unchanged++
		if srcEnd >= (k0+int64(n))*st && !slices.Contains(complete, name) {
			w.s.setComplete(day, append(complete, name))
			return w.writeIndex()
		}
		return nil
	}
	for i := range names {
		if read[i] == nil {
			read[i], write[i] = nanCol(), nanCol()
		}
	}
	d := storeDay{Day: day, StartNS: k0 * st, Cells: n, First: n, Last: -1}
	for i := range names {
		known := false
		for c := range n {
			rk, wk := !math.IsNaN(read[i][c]), !math.IsNaN(write[i][c])
			if rk || wk {
				known = true
				d.First, d.Last = min(d.First, c), max(d.Last, c)
				stats.Known++
			}
			if rk {
				d.ReadBytes += read[i][c] * float64(st) / 1e9
			}
			if wk {
				d.WriteBytes += write[i][c] * float64(st) / 1e9
			}
		}
		if known {
			d.OSTs++
		}
	}
	d.Samples = int64(d.Last-d.First+1) * int64(d.OSTs)
	if d.Last < 0 {
		return nil // nothing known that day: no chunk
	}
	if srcEnd >= (k0+int64(n))*st && !slices.Contains(complete, name) {
		complete = append(complete, name)
	}
	body, err := encodeChunk(k0*st, time.Duration(st), names, read, write)
	if err != nil {
		return err
	}
	w.s.idx.Gen++
	d.File = fmt.Sprintf("%s.%d.day", day, w.s.idx.Gen)
	d.Bytes = int64(len(body))
	if err := writeFileSync(filepath.Join(w.dir, daysDir, d.File), body); err != nil {
		return err
	}
	w.written = append(w.written, d.File)
	stats.Days++
	stats.Cells += d.Samples
	// The index names the new chunk only now that it is on disk.
	var oldFile string
	w.s.idx.OSTs = names
	w.s.pos = pos
	if old >= 0 {
		oldFile = w.s.idx.Days[old].File
		w.s.idx.Days[old] = d
	} else {
		w.s.idx.Days = append(w.s.idx.Days, d)
		sort.Slice(w.s.idx.Days, func(i, j int) bool { return w.s.idx.Days[i].StartNS < w.s.idx.Days[j].StartNS })
	}
	w.s.setComplete(day, complete)
	w.s.idx.Version = storeVersion // the index may name a chunk older readers cannot read
	if err := w.writeIndex(); err != nil {
		return err
	}
	if oldFile != "" {
		// Removed when the import ends, unless it is refused and this
		// index put back.
		w.obsolete = append(w.obsolete, oldFile)
	}
	w.s.dropCache()
	return nil
}

// setComplete records the sources that filled a day completely.
func (s *Store) setComplete(day string, srcs []string) {
	for i := range s.idx.Days {
		if s.idx.Days[i].Day == day {
			s.idx.Days[i].Complete = srcs
		}
	}
}

func (w *storeWriter) writeIndex() error {
	b, err := json.MarshalIndent(&w.s.idx, "", " ")
	if err != nil {
		return err
	}
	return writeFileSync(filepath.Join(w.dir, indexName), append(b, '\n'))
}

// writeFileSync writes a file under a temporary name, syncs it and
// renames it into place.
func writeFileSync(path string, b []byte) error {
	return safefile.WriteFileWith(path, b, 0o666, safefile.Options{Sync: true})
}
