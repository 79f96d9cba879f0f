package serverlog

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Lustre `lctl get_param` snapshots: a directory (searched recursively)
// of files, each the output of one collection, such as
//
//	lctl get_param obdfilter.*.stats obdfilter.*.job_stats > DIR/$(date +%s)
//
// A file holds sections headed "obdfilter.FS-OSTxxxx.stats=" and
// "obdfilter.FS-OSTxxxx.job_stats=", or is the bare content of one OST's
// stats or job_stats file, named after the OST (OST0000.stats,
// OST0000.job_stats: the OST is the name up to its first dot).
//
// The time of a stats section is its snapshot_time. A job_stats section
// has no time of its own (each job's snapshot_time is its last activity),
// so it takes the snapshot_time of its OST's stats section in the same
// file, else a time written as the file's name or its directory's name
// (Unix seconds, 2006-01-02T15:04:05, 20060102T150405), else the file's
// modification time.

// lustreSnap is one snapshot of one OST.
type lustreSnap struct {
	ost  string
	t    int64 // Unix ns
	r, w uint64
	has  bool                 // a stats section: r and w hold its sums
	jobs map[string][2]uint64 // a job_stats section: per job, read and write sums
	isJS bool
}

// lustreDir is every snapshot of a directory.
type lustreDir struct {
	stats map[string][]reading               // per OST, from stats sections
	jobs  map[string]map[string][]jobReading // per OST, per job
	times map[string][]int64                 // per OST, the times of its job_stats sections
}

type jobReading struct {
	t    int64
	r, w uint64
}

func readLustreDir(dir string, opts *Options) (*lustreDir, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s: not a directory of lctl get_param snapshots", dir)
	}
	d := &lustreDir{stats: map[string][]reading{}, jobs: map[string]map[string][]jobReading{}, times: map[string][]int64{}}
	err = filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.HasPrefix(e.Name(), ".") && path != dir {
			if e.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !e.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		snaps, err := parseLustre(path, b, opts)
		if err != nil {
			return err
		}
		d.add(snaps)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(d.stats) == 0 && len(d.jobs) == 0 {
		return nil, fmt.Errorf("%s: no obdfilter stats or job_stats snapshots", dir)
	}
	return d, nil
}

func (d *lustreDir) add(snaps []lustreSnap) {
	for _, s := range snaps {
		if s.has {
			d.stats[s.ost] = append(d.stats[s.ost], reading{t: s.t, r: s.r, w: s.w})
		}
		if s.isJS {
			d.times[s.ost] = append(d.times[s.ost], s.t)
			per := d.jobs[s.ost]
			if per == nil {
				per = map[string][]jobReading{}
				d.jobs[s.ost] = per
			}
			for id, v := range s.jobs {
				per[id] = append(per[id], jobReading{t: s.t, r: v[0], w: v[1]})
			}
		}
	}
}

// fileTime is the time a snapshot file's name, its directory's name or its
// modification time gives.
func fileTime(path string) int64 {
	for _, name := range []string{filepath.Base(path), filepath.Base(filepath.Dir(path))} {
		if t, ok := nameTime(name); ok {
			return t.UnixNano()
		}
	}
	if st, err := os.Stat(path); err == nil {
		return st.ModTime().UnixNano()
	}
	return 0
}

func nameTime(name string) (time.Time, bool) {
	for _, n := range []string{name, strings.SplitN(name, ".", 2)[0]} {
		if t, err := ParseTime(n, time.UTC); err == nil && t.Year() >= 1990 && t.Year() < 2200 {
			return t, true
		}
		for _, layout := range []string{"20060102T150405", "20060102-150405", "20060102150405"} {
			if t, err := time.ParseInLocation(layout, n, time.Local); err == nil {
				return t, true
			}
		}
	}
	return time.Time{}, false
}

// parseLustre reads one file's sections.
func parseLustre(path string, b []byte, opts *Options) ([]lustreSnap, error) {
	var snaps []lustreSnap
	var cur *lustreSnap
	var curJob string
	bare := strings.SplitN(filepath.Base(path), ".", 2)[0]
	lines := bytes.Split(b, []byte("\n"))
	truncated := len(b) > 0 && b[len(b)-1] != '\n'
	bad := func(n int, format string, args ...any) error {
		err := fmt.Errorf("%s: line %d: %s", path, n, fmt.Sprintf(format, args...))
		if truncated && n == len(lines) {
			opts.Bad.add(err) // the collection was cut off: keep what came before
			return nil
		}
		return opts.bad(err)
	}
	start := func(ost string, isJS bool) {
		snaps = append(snaps, lustreSnap{ost: ost, isJS: isJS})
		cur = &snaps[len(snaps)-1]
		if isJS {
			cur.jobs = map[string][2]uint64{}
		}
		curJob = ""
	}
	for i, raw := range lines {
		n := i + 1
		line := strings.TrimRight(string(raw), "\r")
		trim := strings.TrimSpace(line)
		if trim == "" {
			continue
		}
		if strings.HasSuffix(trim, "=") && strings.Count(trim, ".") >= 2 && !strings.ContainsAny(trim, " \t") {
			// A parameter header: obdfilter.FS-OST0000.stats=
			param := strings.TrimSuffix(trim, "=")
			first, last := strings.Index(param, "."), strings.LastIndex(param, ".")
			if kind := param[last+1:]; (kind == "stats" || kind == "job_stats") && last <= first+1 {
				if err := bad(n, "%s names no OST", trim); err != nil {
					return nil, err
				}
				cur = nil
				continue
			}
			switch param[last+1:] {
			case "stats":
				start(param[first+1:last], false)
			case "job_stats":
				start(param[first+1:last], true)
			default:
				cur = nil // another parameter: its lines are not ours
			}
			continue
		}
		if cur == nil {
			if len(snaps) > 0 {
				continue // lines of a parameter we do not read
			}
			// A bare file: its first line tells which kind.
			switch {
			case strings.HasPrefix(trim, "job_stats:"):
				start(bare, true)
			case strings.HasPrefix(trim, "snapshot_time"):
				start(bare, false)
			default:
				return nil, opts.bad(fmt.Errorf("%s: line %d: not lctl get_param output (want obdfilter.*.stats or job_stats)", path, n))
			}
		}
		if cur.isJS {
			if err := jobStatsLine(cur, &curJob, trim, n, bad); err != nil {
				return nil, err
			}
			continue
		}
		f := strings.Fields(trim)
		switch f[0] {
		case "snapshot_time":
			t, err := parseUnix(f[min(1, len(f)-1)])
			if len(f) < 2 || err != nil {
				if err := bad(n, "snapshot_time %q", trim); err != nil {
					return nil, err
				}
				continue
			}
			cur.t = t.UnixNano()
			cur.has = true
		case "read_bytes", "write_bytes":
			// name count samples [bytes] min max sum [sumsq]
			var sum uint64
			var err error
			if len(f) < 7 || f[2] != "samples" {
				err = fmt.Errorf("want NAME COUNT samples [bytes] MIN MAX SUM")
			} else {
				sum, err = strconv.ParseUint(f[6], 10, 64)
			}
			if err != nil {
				if err := bad(n, "%s: %v", f[0], err); err != nil {
					return nil, err
				}
				continue
			}
			if f[0] == "read_bytes" {
				cur.r = sum
			} else {
				cur.w = sum
			}
		}
	}
	// Sections without a time of their own take their OST's stats time in
	// this file, else the file's.
	var ft int64
	statsTime := map[string]int64{}
	for _, s := range snaps {
		if s.has {
			statsTime[s.ost] = s.t
		}
	}
	out := snaps[:0]
	for _, s := range snaps {
		if !s.isJS && !s.has {
			if err := opts.bad(fmt.Errorf("%s: stats of %s without snapshot_time", path, s.ost)); err != nil {
				return nil, err
			}
			continue
		}
		if s.isJS {
			if t, ok := statsTime[s.ost]; ok {
				s.t = t
			} else {
				if ft == 0 {
					ft = fileTime(path)
				}
				s.t = ft
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// jobStatsLine reads one line of a job_stats section.
func jobStatsLine(cur *lustreSnap, job *string, trim string, n int, bad func(int, string, ...any) error) error {
	key, val, ok := strings.Cut(strings.TrimPrefix(trim, "- "), ":")
	if !ok {
		return bad(n, "job_stats line without a key")
	}
	key, val = strings.TrimSpace(key), strings.TrimSpace(val)
	switch key {
	case "job_stats":
	case "job_id":
		if !strings.HasPrefix(trim, "- ") {
			return bad(n, "job_id outside a list item")
		}
		*job = strings.Trim(val, `"'`)
		if *job == "" {
			return bad(n, "empty job_id")
		}
		cur.jobs[*job] = [2]uint64{}
	case "read_bytes", "write_bytes":
		if *job == "" {
			return bad(n, "%s before any job_id", key)
		}
		sum, err := braceSum(val)
		if err != nil {
			return bad(n, "job %s: %s: %v", *job, key, err)
		}
		v := cur.jobs[*job]
		if key == "read_bytes" {
			v[0] = sum
		} else {
			v[1] = sum
		}
		cur.jobs[*job] = v
	}
	return nil
}

// braceSum reads the sum of "{ samples: N, unit: bytes, min: A, max: B, sum: S, ... }".
func braceSum(v string) (uint64, error) {
	if !strings.HasPrefix(v, "{") || !strings.HasSuffix(v, "}") {
		return 0, fmt.Errorf("want { samples: N, ..., sum: S }")
	}
	for _, kv := range strings.Split(strings.Trim(v, "{}"), ",") {
		k, x, _ := strings.Cut(kv, ":")
		if strings.TrimSpace(k) == "sum" {
			return strconv.ParseUint(strings.TrimSpace(x), 10, 64)
		}
	}
	samples := ""
	for _, kv := range strings.Split(strings.Trim(v, "{}"), ",") {
		if k, x, _ := strings.Cut(kv, ":"); strings.TrimSpace(k) == "samples" {
			samples = strings.TrimSpace(x)
		}
	}
	if samples == "0" {
		return 0, nil // Lustre leaves min, max and sum out of an unused counter
	}
	return 0, fmt.Errorf("no sum")
}

// OpenLustre opens a directory of Lustre snapshots (see the package's
// notes on the layout) as a Source: the per-OST rates of the stats
// sections' read_bytes and write_bytes sums, or, in a directory with only
// job_stats, of the sums over the jobs.
func OpenLustre(dir string, opts Options) (Source, error) {
	d, err := readLustreDir(dir, &opts)
	if err != nil {
		return nil, err
	}
	var names []string
	var rs [][]reading
	if len(d.stats) > 0 {
		for ost := range d.stats {
			names = append(names, ost)
		}
		sort.Strings(names)
		for _, ost := range names {
			rs = append(rs, d.stats[ost])
		}
	} else {
		js := d.jobStats(dir)
		names = js.OSTs
		for i := range names {
			rs = append(rs, js.totalReadings(i))
		}
	}
	m, err := newMemLog(dir, names, rs)
	if err != nil {
		return nil, err
	}
	return newCounterSource(m, &opts), nil
}

// JobStats holds what Lustre's job_stats say each job moved on each OST:
// the bytes the servers attribute to the job directly, without cutting a
// window out of the aggregate.
type JobStats struct {
	// OSTs are the OSTs with job_stats, sorted; Jobs the job ids seen
	// (as Lustre's jobid_var makes them: "1234", "slurm.1234", "dd.0"),
	// sorted.
	OSTs, Jobs []string
	dir        string
	// cum[ost][job]: the job's cumulative bytes at each of its OST's
	// snapshot times, made monotonic.
	cum   []map[string][]reading
	times [][]int64
}

// ReadJobStats reads the job_stats sections of a directory of Lustre
// snapshots. A job absent from a snapshot of its OST has zero bytes there
// (Lustre drops a job's entry after job_cleanup_interval idle seconds), so
// a counter that comes back lower counts from zero again rather than
// going negative.
func ReadJobStats(dir string, opts Options) (*JobStats, error) {
	d, err := readLustreDir(dir, &opts)
	if err != nil {
		return nil, err
	}
	if len(d.jobs) == 0 {
		return nil, fmt.Errorf("%s: no job_stats snapshots", dir)
	}
	js := d.jobStats(dir)
	if len(js.OSTs) == 0 {
		return nil, fmt.Errorf("%s: no job_stats snapshots", dir)
	}
	return js, nil
}

func (d *lustreDir) jobStats(dir string) *JobStats {
	js := &JobStats{dir: dir}
	jobs := map[string]bool{}
	for ost, per := range d.jobs {
		js.OSTs = append(js.OSTs, ost)
		for id := range per {
			jobs[id] = true
		}
	}
	sort.Strings(js.OSTs)
	for id := range jobs {
		js.Jobs = append(js.Jobs, id)
	}
	sort.Strings(js.Jobs)
	for _, ost := range js.OSTs {
		ts := slices.Clone(d.times[ost])
		slices.Sort(ts)
		ts = slices.Compact(ts)
		js.times = append(js.times, ts)
		per := map[string][]reading{}
		for id, rs := range d.jobs[ost] {
			per[id] = monotonic(ts, rs)
		}
		js.cum = append(js.cum, per)
	}
	return js
}

// monotonic turns a job's readings at some of its OST's snapshot times
// into cumulative bytes at every one of them: absent is zero, and a drop
// starts a new count from zero.
func monotonic(ts []int64, rs []jobReading) []reading {
	slices.SortFunc(rs, func(a, b jobReading) int { return cmpInt64(a.t, b.t) })
	out := make([]reading, len(ts))
	var prevR, prevW, cumR, cumW uint64
	j := 0
	for i, t := range ts {
		var r, w uint64
		for j < len(rs) && rs[j].t < t {
			j++
		}
		if j < len(rs) && rs[j].t == t {
			r, w = rs[j].r, rs[j].w
		}
		if r >= prevR {
			cumR += r - prevR
		} else {
			cumR += r
		}
		if w >= prevW {
			cumW += w - prevW
		} else {
			cumW += w
		}
		prevR, prevW = r, w
		out[i] = reading{t: t, r: cumR, w: cumW}
	}
	return out
}

// totalReadings sums the jobs' cumulative bytes on OST i.
func (js *JobStats) totalReadings(i int) []reading {
	out := make([]reading, len(js.times[i]))
	for k, t := range js.times[i] {
		out[k].t = t
	}
	for _, rs := range js.cum[i] {
		for k, x := range rs {
			out[k].r += x.r
			out[k].w += x.w
		}
	}
	return out
}

// Bytes returns what the job read and wrote on each OST (indexed like
// OSTs) over the snapshots: the sum of its counters' increases, so
// bytes moved before its first snapshot on an OST are not counted.
func (js *JobStats) Bytes(job string) (read, write []uint64) {
	read, write = make([]uint64, len(js.OSTs)), make([]uint64, len(js.OSTs))
	for i, per := range js.cum {
		if rs := per[job]; len(rs) > 0 {
			read[i], write[i] = rs[len(rs)-1].r-rs[0].r, rs[len(rs)-1].w-rs[0].w
		}
	}
	return read, write
}

// Rates returns the job's per-OST rates on the grid of the snapshots
// (their typical interval, aligned as every Source's grid is) over
// [from, to); zero times mean the snapshots' first and last. An unknown
// job has zero rates wherever the snapshots cover.
func (js *JobStats) Rates(job string, from, to time.Time, opts Options) (*Rates, error) {
	rs := make([][]reading, len(js.OSTs))
	for i, per := range js.cum {
		if r, ok := per[job]; ok {
			rs[i] = r
		} else {
			rs[i] = make([]reading, len(js.times[i]))
			for k, t := range js.times[i] {
				rs[i][k].t = t
			}
		}
	}
	m, err := newMemLog(js.dir, js.OSTs, rs)
	if err != nil {
		return nil, err
	}
	return newCounterSource(m, &opts).Window(from, to)
}
