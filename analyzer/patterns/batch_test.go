package patterns

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"

	"iopred/predictor/pattern"
	"iopred/tracefmt"
)

// analyzeBatch is Analyze as it was before it streamed: every stream's
// requests held in memory, then the batch detection (pattern.BuildIndex,
// BuildTree, Runs). It is the reference the streaming Analyze is checked
// against.
func analyzeBatch(traces []string, window int) (*Report, error) {
	type seq struct{ logical, length, physical []int64 }
	streams := map[streamKey]*seq{}
	procs := make([]procInfo, len(traces))
	rep := &Report{}
	for i, path := range traces {
		procs[i].trace = path
		r, err := tracefmt.Open(path)
		if err != nil {
			return nil, err
		}
		h := r.Header()
		procs[i].pid, procs[i].rank = h.PID, h.Rank
		var flow tracefmt.DataFlow
		moved := map[streamKey]int64{}
		for {
			rec, err := r.Next()
			if err == io.EOF {
				break
			}
			var te *tracefmt.TruncatedError
			if errors.As(err, &te) {
				rep.Warnings = append(rep.Warnings, err.Error())
				break
			}
			if err != nil {
				r.Close()
				return nil, err
			}
			e := rec.Event
			if e == nil || e.Errno != 0 {
				continue
			}
			dir := flow.Of(e)
			if dir == tracefmt.NoData || e.Offset == tracefmt.NoOffset || e.Bytes <= 0 || e.Path == "" {
				continue
			}
			k := streamKey{path: e.Path, id: int64(i), write: dir == tracefmt.Write}
			s := streams[k]
			if s == nil {
				s = &seq{}
				streams[k] = s
			}
			s.logical = append(s.logical, e.Offset)
			s.length = append(s.length, e.Bytes)
			s.physical = append(s.physical, moved[k])
			moved[k] += e.Bytes
		}
		r.Close()
	}
	keys := make([]streamKey, 0, len(streams))
	for k := range streams {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.path != b.path {
			return a.path < b.path
		}
		if a.id != b.id {
			return a.id < b.id
		}
		return !a.write && b.write
	})
	var cur *File
	runs := map[bool][]pattern.Run{}
	var entries []pattern.Entry
	flush := func() error {
		if cur == nil {
			return nil
		}
		err := finishFileBatch(cur, entries, runs)
		rep.Files = append(rep.Files, *cur)
		cur, entries, runs = nil, nil, map[bool][]pattern.Run{}
		return err
	}
	for _, k := range keys {
		if cur == nil || cur.Path != k.path {
			if err := flush(); err != nil {
				return rep, err
			}
			cur = &File{Path: k.path, Local: []Local{}, Global: []Global{}}
		}
		s := streams[k]
		idx, err := pattern.BuildIndex(k.id, s.logical, s.length, s.physical, window)
		if err != nil {
			return rep, err
		}
		p := procs[k.id]
		loc := Local{ID: k.id, Trace: p.trace, PID: p.pid, Rank: p.rank, Kind: "read", Requests: int64(len(s.logical)), Entries: idx}
		if k.write {
			loc.Kind = "write"
		}
		if tr := pattern.BuildTree(s.logical, window, 4); tr.Depth() >= 2 && len(tr.Nodes) <= maxTreeNodes {
			loc.Tree = tr.String()
		}
		var covered int64
		for i := range idx {
			loc.Patterns = append(loc.Patterns, idx[i].Logical.String())
			if idx[i].Logical.Reps >= 2 {
				covered += idx[i].Len()
			}
		}
		cur.Requests += loc.Requests
		cur.Coverage += float64(covered)
		cur.Local = append(cur.Local, loc)
		entries = append(entries, idx...)
		runs[k.write] = append(runs[k.write], pattern.Runs(k.id, s.logical, s.length, s.physical)...)
	}
	return rep, flush()
}

// finishFileBatch is finishFile as it was: the runs held, merged by
// pattern.Merge, the global index encoded whole.
func finishFileBatch(f *File, entries []pattern.Entry, runs map[bool][]pattern.Run) error {
	if f.Requests > 0 {
		f.Coverage /= float64(f.Requests)
	}
	f.RawIndexBytes = RawEntryBytes * f.Requests
	local, err := (&pattern.Index{Entries: entries}).EncodedSize()
	if err != nil {
		return err
	}
	global := pattern.Index{}
	for _, write := range []bool{false, true} {
		g, rest := pattern.Merge(runs[write])
		global.Globals = append(global.Globals, g...)
		global.Runs = append(global.Runs, rest...)
		kind := "read"
		if write {
			kind = "write"
		}
		for i := range g {
			f.Global = append(f.Global, Global{Kind: kind, Pattern: g[i].String(), Entry: &g[i]})
		}
	}
	gsize, err := global.EncodedSize()
	if err != nil {
		return err
	}
	f.EncodedIndexBytes, f.IndexForm = int64(local), "local"
	if len(global.Globals) > 0 && gsize < local {
		f.EncodedIndexBytes, f.IndexForm = int64(gsize), "global"
	}
	if f.EncodedIndexBytes > 0 {
		f.CompressionRatio = float64(f.RawIndexBytes) / float64(f.EncodedIndexBytes)
	}
	return nil
}

// The streaming Analyze reports what the batch detection reports, field
// for field, on real traces (fio, the IOR-like job on 4 ranks, LAMMPS)
// and at several windows.
func TestStreamingMatchesBatch(t *testing.T) {
	root := filepath.Join("..", "centersim", "traces")
	dirs, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		traces, err := tracefmt.Discover(filepath.Join(root, d.Name()))
		if err != nil || len(traces) == 0 {
			t.Fatalf("%s: %v", d.Name(), err)
		}
		for _, w := range []int{0, 4, 32} {
			got, err := Analyze(traces, w)
			if err != nil {
				t.Fatal(err)
			}
			want, err := analyzeBatch(traces, w)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s window %d: streaming and batch reports differ:\n%+v\n%+v", d.Name(), w, got, want)
			}
			t.Logf("%s window %d: %d files, equal", d.Name(), w, len(got.Files))
		}
	}
}
