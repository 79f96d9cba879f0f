package serverlog

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
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
	// Progress, when set, is called after each day.
	Progress func(ImportProgress)
}

// ImportProgress is where an import is.
type ImportProgress struct {
	Source      string // the source, as its flag names it
	Day         string // YYYY-MM-DD (UTC) just done
	Done, Total int    // days of this source done, and to do
	Skipped     bool   // the day was already complete in the store
}

// ImportStats sums up an import.
type ImportStats struct {
	Days    int   // days written
	Skipped int   // days already complete, left as they were
	Cells   int64 // OST samples written: per day, the OSTs with data times the cells from the first known to the last
	Known   int64 // of those, the known ones
}

// Import reads the sources into the store in dir, creating it if needed,
// day by day (UTC days). The store's step is opts.Step, or the first
// source's own sample width; every source is read on that grid. A day
// already in the store is merged: each known sample of the source
// replaces the store's, unknown ones leave it as it was, so importing the
// same data again changes nothing, and sources of different OSTs (or
// file systems) fill one store side by side. The context stops the
// import between days; what was written stays readable.
func Import(ctx context.Context, dir string, specs []Spec, opts Options, iopts ImportOptions) (ImportStats, error) {
	var stats ImportStats
	w, unlock, err := openWriter(dir)
	if err != nil {
		return stats, err
	}
	defer unlock()
	for _, spec := range specs {
		if err := w.importSpec(ctx, spec, opts, iopts, &stats); err != nil {
			return stats, err
		}
	}
	return stats, nil
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
	src, err := OpenSource(spec, opts)
	if err != nil {
		return err
	}
	defer src.Close()
	return w.importSource(ctx, src, sourceName(spec), iopts, stats)
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
	err = w.importSource(ctx, src, name, iopts, &stats)
	return stats, err
}

func (w *storeWriter) importSource(ctx context.Context, src Source, name string, iopts ImportOptions, stats *ImportStats) error {
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
	for i, k0 := range days {
		if err := ctx.Err(); err != nil {
			return err
		}
		_, n := dayCells(k0*st, st)
		day := dayOf(k0 * st)
		skip := !iopts.All && w.complete(day, name)
		if !skip {
			if err := w.importDay(src, name, k0, n, from, to, srcEnd, stats); err != nil {
				return err
			}
		} else {
			stats.Skipped++
		}
		if iopts.Progress != nil {
			iopts.Progress(ImportProgress{Source: name, Day: day, Done: i + 1, Total: len(days), Skipped: skip})
		}
	}
	if !slices.Contains(w.s.idx.Sources, name) && len(w.s.idx.Days) > 0 {
		w.s.idx.Sources = append(w.s.idx.Sources, name)
		return w.writeIndex()
	}
	return nil
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

// importDay merges one day of a source into the store.
func (w *storeWriter) importDay(src Source, name string, k0 int64, n int, from, to time.Time, srcEnd int64, stats *ImportStats) error {
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
	}
	off := int(r.Index(time.Unix(0, k0*st)))
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
			if v := r.Read[i][t]; !math.IsNaN(v) {
				read[j][c] = v
			}
			if v := r.Write[i][t]; !math.IsNaN(v) {
				write[j][c] = v
			}
		}
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
		os.Remove(filepath.Join(w.dir, daysDir, oldFile))
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
