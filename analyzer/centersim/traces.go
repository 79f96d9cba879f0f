package centersim

import (
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"path"
	"sort"
	"strings"

	"iopred/tracefmt"
)

// builtinTraces are real runs recorded with libiopred.so by
// traces/record.sh: the project's IOR-like MPI-IO workload (4 ranks),
// LAMMPS writing snapshots, and fio writing checkpoints and reading its
// input.
//
//go:embed traces/ior traces/lammps traces/fio
var builtinTraces embed.FS

// BuiltinTraces lists the names of the embedded traces, usable as
// "builtin:NAME" wherever a trace directory is expected.
func BuiltinTraces() []string { return []string{"fio", "ior", "lammps"} }

// TraceBurst is one burst of a traced run: a stretch of data calls with no
// pause longer than the gap between them. Times are seconds from the start
// of the run.
type TraceBurst struct {
	StartS     float64 `json:"start_s"`
	EndS       float64 `json:"end_s"`
	WriteBytes float64 `json:"write_bytes"`
	ReadBytes  float64 `json:"read_bytes"`
}

// TraceProfile is the burst structure of one traced run, all processes
// together on the wall clock.
type TraceProfile struct {
	Source    string       `json:"source"`
	DurationS float64      `json:"duration_s"`
	GapS      float64      `json:"gap_s"` // pause that separates two bursts
	Bursts    []TraceBurst `json:"bursts"`
}

// systemPrefixes are the paths whose I/O is the runtime's (MPI reading
// /proc and /sys, shared-memory segments), not the application's data.
var systemPrefixes = []string{"/proc/", "/sys/", "/dev/", "/etc/", "/run/", "/usr/", "/lib/", "/lib64/"}

func applicationPath(p string) bool {
	for _, s := range systemPrefixes {
		if strings.HasPrefix(p, s) {
			return false
		}
	}
	// Per-user configuration files the MPI libraries probe.
	return !strings.Contains(p, "/.openmpi/") && !strings.Contains(p, "/.pmix/")
}

type span struct {
	start, end int64 // wall clock, ns
	w, r       int64
}

// LoadTraceProfile reads the traces of one run (a directory of iopred
// traces or any format tracefmt reads, or "builtin:NAME" for an embedded
// one) and returns its bursts. gapS is the pause, in seconds, that ends a
// burst; 0 chooses it from the run: the geometric mean of the median and
// the longest pause between data calls, at least 1 ms.
func LoadTraceProfile(dir string, gapS float64) (*TraceProfile, error) {
	var spans []span
	var t0, t1 int64 = math.MaxInt64, math.MinInt64
	add := func(s tracefmt.Stream) error {
		h := s.Header()
		t0 = min(t0, h.StartUnixNs)
		var flow tracefmt.DataFlow
		err := s.Each(func(rec tracefmt.Record) error {
			switch {
			case rec.Event != nil:
				e := rec.Event
				t1 = max(t1, h.StartUnixNs+e.EndNs)
				dir := flow.Of(e) // every event: a nonblocking call's completion needs its start
				if e.Bytes <= 0 || !applicationPath(e.Path) {
					return nil
				}
				sp := span{start: h.StartUnixNs + e.StartNs, end: h.StartUnixNs + e.EndNs}
				switch dir {
				case tracefmt.Write:
					sp.w = e.Bytes
				case tracefmt.Read:
					sp.r = e.Bytes
				default:
					return nil
				}
				spans = append(spans, sp)
			case rec.Footer != nil:
				t1 = max(t1, h.StartUnixNs+rec.Footer.EndNs)
			}
			return nil
		})
		var te *tracefmt.TruncatedError
		if errors.As(err, &te) {
			return nil // every complete record counts
		}
		return err
	}
	if name, ok := strings.CutPrefix(dir, "builtin:"); ok {
		sub, err := fs.Sub(builtinTraces, path.Join("traces", name))
		if err != nil {
			return nil, err
		}
		ents, err := fs.ReadDir(sub, ".")
		if err != nil || len(ents) == 0 {
			return nil, fmt.Errorf("%s: no such built-in trace (have %s)", dir, strings.Join(BuiltinTraces(), ", "))
		}
		for _, e := range ents {
			if !strings.HasSuffix(e.Name(), tracefmt.FileSuffix) {
				continue
			}
			if err := readEmbedded(sub, e.Name(), add); err != nil {
				return nil, fmt.Errorf("%s/%s: %w", dir, e.Name(), err)
			}
		}
	} else {
		names, err := tracefmt.Discover(dir)
		if err != nil {
			return nil, err
		}
		for _, n := range names {
			s, err := tracefmt.Open(n)
			if err != nil {
				return nil, err
			}
			err = add(s)
			s.Close()
			if err != nil {
				return nil, fmt.Errorf("%s: %w", n, err)
			}
		}
	}
	if len(spans) == 0 {
		return nil, fmt.Errorf("%s: the traces hold no data call on an application file", dir)
	}
	return profileOf(dir, spans, t0, t1, gapS), nil
}

func readEmbedded(fsys fs.FS, name string, fn func(tracefmt.Stream) error) error {
	f, err := fsys.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	r, err := tracefmt.NewReader(f.(io.Reader), name)
	if err != nil {
		return err
	}
	defer r.Close()
	return fn(r)
}

// profileOf merges the data calls into bursts.
func profileOf(src string, spans []span, t0, t1 int64, gapS float64) *TraceProfile {
	sort.Slice(spans, func(i, j int) bool { return spans[i].start < spans[j].start })
	var gaps []float64
	end := spans[0].end
	for _, s := range spans[1:] {
		if s.start > end {
			gaps = append(gaps, float64(s.start-end)/1e9)
		}
		end = max(end, s.end)
	}
	if gapS <= 0 {
		gapS = naturalBreak(gaps)
	}
	p := &TraceProfile{Source: src, DurationS: float64(t1-t0) / 1e9, GapS: gapS}
	var cur *TraceBurst
	var curEnd int64
	for _, s := range spans {
		if cur == nil || float64(s.start-curEnd)/1e9 > gapS {
			p.Bursts = append(p.Bursts, TraceBurst{StartS: float64(s.start-t0) / 1e9})
			cur, curEnd = &p.Bursts[len(p.Bursts)-1], s.end
		}
		curEnd = max(curEnd, s.end)
		cur.EndS = float64(curEnd-t0) / 1e9
		cur.WriteBytes += float64(s.w)
		cur.ReadBytes += float64(s.r)
	}
	// Calls of a few bytes between the bursts (a header line, a small
	// input file) are no burst at a center's scale.
	biggest := 0.0
	for _, b := range p.Bursts {
		biggest = max(biggest, b.WriteBytes+b.ReadBytes)
	}
	kept := p.Bursts[:0]
	for _, b := range p.Bursts {
		if b.WriteBytes+b.ReadBytes >= biggest/100 {
			kept = append(kept, b)
		}
	}
	p.Bursts = kept
	return p
}

// naturalBreak chooses the pause that separates bursts, from the long
// pauses of the run (those at least a tenth of the longest, or a
// hundredth... until there are three): a quarter of their median, at
// least 1 ms. The pauses between bursts are the long ones, alike in a
// periodic run; the short ones inside a burst (between calls, or ranks
// a few milliseconds apart) fall below a quarter of them.
func naturalBreak(gaps []float64) float64 {
	const floor = 1e-3
	longest := 0.0
	for _, g := range gaps {
		longest = max(longest, g)
	}
	for frac := 0.1; frac >= 1e-4; frac /= 10 {
		var sel []float64
		for _, g := range gaps {
			if g >= frac*longest {
				sel = append(sel, g)
			}
		}
		if len(sel) >= 3 {
			return max(floor, median(sel)/4)
		}
	}
	return floor
}

// Program turns the profile into the I/O program of a center job: the
// pauses between bursts stretched so that the median interval between
// burst starts becomes intervalS, and the volumes scaled so that the
// median burst moves burstBytes. The relative sizes, the read/write mix
// and the irregular spacing of the traced run are kept.
func (p *TraceProfile) Program(intervalS, burstBytes float64) (cycle []Phase, tailS float64) {
	var ivals, vols []float64
	for i, b := range p.Bursts {
		vols = append(vols, b.WriteBytes+b.ReadBytes)
		if i > 0 {
			ivals = append(ivals, b.StartS-p.Bursts[i-1].StartS)
		}
	}
	timeScale := 1.0
	if m := median(ivals); m > 0 && intervalS > 0 {
		timeScale = intervalS / m
	}
	volScale := 1.0
	if m := median(vols); m > 0 && burstBytes > 0 {
		volScale = burstBytes / m
	}
	prevEnd := 0.0
	for _, b := range p.Bursts {
		cycle = append(cycle, Phase{ComputeS: (b.StartS - prevEnd) * timeScale,
			WriteBytes: b.WriteBytes * volScale, ReadBytes: b.ReadBytes * volScale})
		prevEnd = b.EndS
	}
	return cycle, max(p.DurationS-prevEnd, 0) * timeScale
}

func median(x []float64) float64 {
	if len(x) == 0 {
		return 0
	}
	s := append([]float64(nil), x...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
