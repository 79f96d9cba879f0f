package summary

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"iopred/tests/interop"
	"iopred/tracefmt"
	"iopred/tracefmt/darshan"
)

// darshanReference is what tests/interop/darshan/reference/regen.py wrote
// for one log from darshan-parser's and darshan-dxt-parser's output.
type darshanReference struct {
	Log         string            `json:"log"`
	Job         map[string]string `json:"job"`
	Modules     []string          `json:"modules"`
	Application LayerIO           `json:"application"`
	Counters    map[string]struct {
		Records int              `json:"records"`
		Sums    map[string]int64 `json:"sums"`
	} `json:"counters"`
	DXT map[string]struct {
		Segments int   `json:"segments"`
		Bytes    int64 `json:"bytes"`
	} `json:"dxt"`
	Heatmap map[string]struct {
		BinWidth     float64 `json:"bin_width_seconds"`
		Bins         int     `json:"bins"`
		BytesRead    int64   `json:"bytes_read"`
		BytesWritten int64   `json:"bytes_written"`
	} `json:"heatmap"`
	Lustre map[string]struct {
		StripeSize  int64   `json:"stripe_size"`
		StripeCount int64   `json:"stripe_count"`
		OSTs        []int64 `json:"osts"`
	} `json:"lustre"`
}

// loadReferences reads every expected-value file regen.py wrote, one per
// log kept in tests/interop/darshan.
func loadReferences(t *testing.T) []darshanReference {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(interop.Path(t, "darshan/reference"), "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	logs, _ := filepath.Glob(filepath.Join(interop.Dir(), "darshan", "*", "*.darshan"))
	if len(files) != len(logs) || len(logs) == 0 {
		t.Fatalf("%d expected-value files for %d logs: run tests/interop/darshan/reference/regen.py", len(files), len(logs))
	}
	var refs []darshanReference
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var r darshanReference
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		refs = append(refs, r)
	}
	return refs
}

// TestDarshanAgainstReferenceReaders proves, on every Darshan log kept in
// tests/interop, that iopred's figures are darshan-parser's and
// darshan-dxt-parser's: the job header (uid, job id, processes, start,
// end, run time as darshan-parser prints it, command line, format and
// library version), the modules present, every integer counter of the
// decoded modules summed over their records, each DXT module's segments
// and bytes, and the application's bytes counted once (a file's MPI-IO
// record, else its POSIX records, plus stdio), which the summary must
// give with every path kept.
func TestDarshanAgainstReferenceReaders(t *testing.T) {
	for _, ref := range loadReferences(t) {
		t.Run(filepath.Base(ref.Log), func(t *testing.T) {
			path := interop.Path(t, "darshan/"+ref.Log)
			l, err := darshan.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			j := l.Job
			got := map[string]string{
				"exe": j.Exe, "uid": strconv.FormatInt(j.UID, 10), "jobid": strconv.FormatInt(j.JobID, 10),
				"nprocs": strconv.FormatInt(j.NProcs, 10), "start_time": strconv.FormatInt(j.Start.Unix(), 10),
				"end_time": strconv.FormatInt(j.End.Unix(), 10), "run_time": fmt.Sprintf("%.4f", l.Runtime().Seconds()),
				"darshan_log_version": l.Version, "lib_ver": j.Metadata["lib_ver"],
			}
			for k, want := range ref.Job {
				if got[k] != want {
					t.Errorf("job %s: darshan-parser %q, iopred %q", k, want, got[k])
				}
			}
			var mods []string
			for _, m := range l.Modules {
				if m.Length > 0 {
					mods = append(mods, m.Name())
				}
			}
			if strings.Join(mods, ",") != strings.Join(ref.Modules, ",") {
				t.Errorf("modules: darshan-parser %v, iopred %v", ref.Modules, mods)
			}
			for mod, want := range ref.Counters {
				id := moduleByName(mod)
				if m := l.Module(id); m == nil || !m.Decoded {
					continue // not decoded by iopred: listed in the README
				} else if _, _, err := darshan.CounterNames(id, m.Version); err != nil {
					continue // LUSTRE: compared below, as layouts
				}
				recs, sums := 0, map[string]int64{}
				for _, r := range l.Records {
					if r.Module != id {
						continue
					}
					recs++
					if r.File != 0 {
						sums[mod+"_FILE_REC_ID"] += int64(r.File) // darshan-parser prints it as a counter
					}
					for _, name := range r.IntNames() {
						v, _ := r.Int(name)
						sums[name] += v
					}
				}
				if recs != want.Records {
					t.Errorf("%s records: darshan-parser %d, iopred %d", mod, want.Records, recs)
				}
				for name, v := range want.Sums {
					g, ok := sums[name]
					if !ok && (v == -int64(recs) || v == 0) {
						// A counter the log's module version did not have:
						// darshan-parser converts the record to today's
						// version and fills it with -1 (0 for RENAMED_FROM).
						continue
					}
					if !ok || g != v {
						t.Errorf("%s: sum of %s: darshan-parser %d, iopred %d (present %v)", mod, name, v, g, ok)
					}
				}
			}
			dxt := map[string][2]int64{}
			for _, d := range l.DXT {
				k := d.Module.String()
				c := dxt[k]
				for _, s := range append(append([]darshan.Segment(nil), d.Writes...), d.Reads...) {
					c[0]++
					c[1] += s.Length
				}
				dxt[k] = c
			}
			for mod, want := range ref.DXT {
				if g := dxt[mod]; g[0] != int64(want.Segments) || g[1] != want.Bytes {
					t.Errorf("%s: darshan-dxt-parser %d segments of %d bytes, iopred %d of %d", mod, want.Segments, want.Bytes, g[0], g[1])
				}
			}
			type heat struct {
				width       float64
				bins        int
				read, wrote int64
			}
			heats := map[string]heat{}
			for _, h := range l.Heatmaps {
				g := heats[h.Layer]
				g.width, g.bins = h.BinWidth, max(g.bins, len(h.Writes))
				for i := range h.Writes {
					g.read += h.Reads[i]
					g.wrote += h.Writes[i]
				}
				heats[h.Layer] = g
			}
			for layer, want := range ref.Heatmap {
				if g := heats[layer]; g.width != want.BinWidth || g.bins != want.Bins || g.read != want.BytesRead || g.wrote != want.BytesWritten {
					t.Errorf("heatmap %s: darshan-parser %+v, iopred %+v", layer, want, g)
				}
			}
			if len(heats) != len(ref.Heatmap) {
				t.Errorf("%d heatmaps, darshan-parser %d", len(heats), len(ref.Heatmap))
			}
			osts := map[string][]int64{}
			stripes := map[string][2]int64{}
			for _, r := range l.Lustre {
				p := l.Path(r.ID)
				osts[p] = append(osts[p], r.OSTs...)
				stripes[p] = [2]int64{r.StripeSize(), r.StripeCount()}
			}
			for p, want := range ref.Lustre {
				if g := stripes[p]; g != [2]int64{want.StripeSize, want.StripeCount} || fmt.Sprint(osts[p]) != fmt.Sprint(want.OSTs) {
					t.Errorf("lustre %s: darshan-parser %d, %d, %v; iopred %v, %v", p, want.StripeSize, want.StripeCount, want.OSTs, g, osts[p])
				}
			}
			if len(stripes) != len(ref.Lustre) {
				t.Errorf("%d files with a Lustre layout, darshan-parser %d", len(stripes), len(ref.Lustre))
			}
			traces, err := tracefmt.Discover(path)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := Summarize(traces, Options{AllPaths: true})
			if err != nil {
				t.Fatal(err)
			}
			if a := rep.Application; a.BytesRead != ref.Application.BytesRead || a.BytesWritten != ref.Application.BytesWritten {
				t.Errorf("application bytes read/written: darshan-parser %d/%d, iopred %d/%d", ref.Application.BytesRead,
					ref.Application.BytesWritten, a.BytesRead, a.BytesWritten)
			}
			union := map[int64]bool{}
			for _, f := range rep.Files {
				want, ok := ref.Lustre[f.Path]
				if ok != (f.Lustre != nil) {
					t.Errorf("%s: summary's layout %+v, darshan-parser's %v", f.Path, f.Lustre, ok)
				} else if ok && (f.Lustre.StripeSize != want.StripeSize || f.Lustre.StripeCount != want.StripeCount || fmt.Sprint(f.Lustre.OSTs) != fmt.Sprint(want.OSTs)) {
					t.Errorf("%s: summary's layout %+v, darshan-parser's %+v", f.Path, f.Lustre, want)
				}
			}
			// Every layout darshan-parser prints is in the summary: on a
			// file of the tables, or among the files with a layout and no
			// I/O record.
			shown := 0
			for _, f := range rep.Files {
				if f.Lustre != nil {
					shown++
				}
			}
			for _, f := range rep.LustreOnly {
				want, ok := ref.Lustre[f.Path]
				if !ok || f.StripeSize != want.StripeSize || f.StripeCount != want.StripeCount || fmt.Sprint(f.OSTs) != fmt.Sprint(want.OSTs) {
					t.Errorf("%s: summary's layout of a file without I/O %+v, darshan-parser's %+v (%v)", f.Path, f.LustreLayout, want, ok)
				}
				shown++
			}
			if shown != len(ref.Lustre) {
				t.Errorf("summary shows %d Lustre layouts, darshan-parser %d", shown, len(ref.Lustre))
			}
			for _, want := range ref.Lustre {
				for _, o := range want.OSTs {
					union[o] = true
				}
			}
			if len(rep.OSTs) != len(union) || fmt.Sprint(rep.OSTs) != fmt.Sprint(l.OSTs()) {
				t.Errorf("job's OSTs: summary %v, log %v, darshan-parser's layouts %d OSTs", rep.OSTs, l.OSTs(), len(union))
			}
			if s := rep.Source; s == nil || s.UID != j.UID || s.JobID != ref.Job["jobid"] || fmt.Sprintf("%.4f", float64(s.RunNs)/1e9) != ref.Job["run_time"] {
				t.Errorf("summary's job %+v", s)
			}
		})
	}
}

// moduleByName is the module of a name as Darshan prints it.
func moduleByName(name string) darshan.ModuleID {
	for id := darshan.ModNull; id <= darshan.ModDAOS; id++ {
		if id.String() == name {
			return id
		}
	}
	return darshan.ModUnknown
}
