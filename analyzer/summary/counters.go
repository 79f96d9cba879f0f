package summary

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"iopred/tracefmt"
)

// ModuleStats is one layer's totals over the per-file counters of the
// traces (a Darshan log's POSIX, MPI-IO and STDIO modules). Each layer
// counts its own calls: the POSIX calls an MPI-IO call makes count in
// both.
type ModuleStats struct {
	Layer        string            `json:"layer"`
	Files        int               `json:"files"`   // distinct paths
	Records      int               `json:"records"` // counter records (a file may have one per process)
	Calls        map[string]uint64 `json:"calls"`
	BytesRead    int64             `json:"bytes_read"`
	BytesWritten int64             `json:"bytes_written"`
	ReadNs       int64             `json:"read_ns"`
	WriteNs      int64             `json:"write_ns"`
	MetaNs       int64             `json:"meta_ns"`
}

// countersAcc gathers the Counters records of the traces. The module
// totals always come from them; the file and process tables only when no
// trace has an event (events, when there are some, say more).
type countersAcc struct {
	records int
	events  uint64
	source  string // the first header that names its source, as a note
	modules map[tracefmt.Layer]*moduleAcc
	byTrace map[int]map[string]*fileCounters // trace index -> path -> totals
	lustre  map[string]*LustreLayout
}

// LustreLayout is a file's Lustre layout as the source recorded it (a
// Darshan log's LUSTRE module): stripe size and count of its first
// component, and the OSTs its stripes lie on.
type LustreLayout struct {
	StripeSize  int64   `json:"stripe_size"`
	StripeCount int64   `json:"stripe_count"`
	OSTs        []int64 `json:"osts"`
}

// LustreFile is a file's Lustre layout.
type LustreFile struct {
	Path string `json:"path"`
	LustreLayout
}

// addLustre keeps a file's layout (each rank that opened a file records
// the same one; the first is kept).
func (a *countersAcc) addLustre(c *tracefmt.Counters) {
	if a.lustre == nil {
		a.lustre = map[string]*LustreLayout{}
	}
	if a.lustre[c.Path] != nil {
		return
	}
	l := &LustreLayout{StripeSize: c.Ints["LUSTRE_STRIPE_SIZE"], StripeCount: c.Ints["LUSTRE_STRIPE_COUNT"]}
	for i := 0; ; i++ {
		o, ok := c.Ints["LUSTRE_OST_ID_"+strconv.Itoa(i)]
		if !ok && i >= int(l.StripeCount) {
			break
		}
		if i > 1<<20 {
			break
		}
		l.OSTs = append(l.OSTs, o) // a zero counter is left out of Ints: OST 0
	}
	a.lustre[c.Path] = l
}

// moduleAcc is one layer's totals and the files it saw.
type moduleAcc struct {
	tracefmt.Counters
	records int
	paths   map[string]bool
}

// fileCounters is one file's counters in one trace, by layer.
type fileCounters struct {
	layers map[tracefmt.Layer]*tracefmt.Counters
	procs  int
}

func (a *countersAcc) header(h tracefmt.Header) {
	if a.source != "" || h.Source == "" {
		return
	}
	a.source = h.Source
	if h.JobID != "" {
		a.source = fmt.Sprintf("job %s, %d processes (%s)", h.JobID, h.Procs, h.Source)
	}
}

// addCounters adds c's calls, bytes and times to dst.
func addCounters(dst, c *tracefmt.Counters) {
	if dst.Calls == nil {
		dst.Calls = map[string]uint64{}
	}
	for op, n := range c.Calls {
		dst.Calls[op] += n
	}
	dst.BytesRead += c.BytesRead
	dst.BytesWritten += c.BytesWritten
	dst.ReadNs += c.ReadNs
	dst.WriteNs += c.WriteNs
	dst.MetaNs += c.MetaNs
}

func (a *countersAcc) add(proc int, c *tracefmt.Counters, excluded bool) {
	a.records++
	if c.Layer == tracefmt.LayerLustre {
		a.addLustre(c)
		return
	}
	if a.modules == nil {
		a.modules = map[tracefmt.Layer]*moduleAcc{}
		a.byTrace = map[int]map[string]*fileCounters{}
	}
	m := a.modules[c.Layer]
	if m == nil {
		m = &moduleAcc{paths: map[string]bool{}}
		a.modules[c.Layer] = m
	}
	m.paths[c.Path] = true
	m.records++
	addCounters(&m.Counters, c)
	if excluded {
		return
	}
	files := a.byTrace[proc]
	if files == nil {
		files = map[string]*fileCounters{}
		a.byTrace[proc] = files
	}
	f := files[c.Path]
	if f == nil {
		f = &fileCounters{layers: map[tracefmt.Layer]*tracefmt.Counters{}}
		files[c.Path] = f
	}
	f.procs = max(f.procs, c.Procs)
	l := f.layers[c.Layer]
	if l == nil {
		l = &tracefmt.Counters{Layer: c.Layer}
		f.layers[c.Layer] = l
	}
	addCounters(l, c)
}

// countersOnly reports whether the traces hold counters and no event.
func (a *countersAcc) countersOnly() bool { return a.records > 0 && a.events == 0 }

// finish puts the module totals and the notes in the report, and, when no
// trace had an event, fills the file and process tables from the
// counters. A file's bytes and time are its application's: the MPI-IO
// layer's when it has one (the POSIX calls under it repeat them),
// otherwise POSIX's and stdio's added.
func (a *countersAcc) finish(rep *Report, files map[string]*fileAcc) {
	if a.records == 0 {
		return
	}
	if len(a.lustre) > 0 {
		seen := map[int64]bool{}
		for _, l := range a.lustre {
			for _, o := range l.OSTs {
				if !seen[o] {
					seen[o] = true
					rep.OSTs = append(rep.OSTs, o)
				}
			}
		}
		sort.Slice(rep.OSTs, func(i, j int) bool { return rep.OSTs[i] < rep.OSTs[j] })
		defer func() {
			for path, l := range a.lustre {
				if f := files[path]; f != nil {
					f.Lustre = l
				} else {
					rep.LustreOnly = append(rep.LustreOnly, LustreFile{path, *l})
				}
			}
			sort.Slice(rep.LustreOnly, func(i, j int) bool { return rep.LustreOnly[i].Path < rep.LustreOnly[j].Path })
		}()
	}
	for layer, m := range a.modules {
		rep.Modules = append(rep.Modules, ModuleStats{Layer: string(layer), Files: len(m.paths), Records: m.records,
			Calls: m.Calls, BytesRead: m.BytesRead, BytesWritten: m.BytesWritten, ReadNs: m.ReadNs, WriteNs: m.WriteNs, MetaNs: m.MetaNs})
	}
	sort.Slice(rep.Modules, func(i, j int) bool { return layerOrder(rep.Modules[i].Layer) < layerOrder(rep.Modules[j].Layer) })
	if a.source != "" {
		rep.Notes = append(rep.Notes, a.source)
	}
	if !a.countersOnly() {
		rep.Notes = append(rep.Notes, "the modules' totals come from per-file counters; the file and process tables from the traced calls, "+
			"and from the counters for the files and layers no call was traced on")
	} else {
		rep.Notes = append(rep.Notes, "per-file counters only, no traced call: the tables come from the counters, and the time-resolved analyses "+
			"(period, patterns, replay, events) need a trace of each call; for a Darshan log, run with DXT (DXT_ENABLE_IO_TRACE=1)")
	}
	// A file's application figures come from its highest layer over the
	// whole job: a file written through MPI-IO has its MPI-IO record in
	// the shared trace and its POSIX records in the ranks' traces.
	viaMPIIO := map[string]bool{}
	for _, byPath := range a.byTrace {
		for path, fc := range byPath {
			if fc.layers[tracefmt.LayerMPIIO] != nil {
				viaMPIIO[path] = true
			}
		}
	}
	for proc, byPath := range a.byTrace {
		p := &rep.Processes[proc]
		for path, fc := range byPath {
			f := fileOf(files, path)
			// Events on the file (DXT) already gave its figures; the
			// counters fill in the layers no event showed (stdio, which
			// DXT does not trace).
			traced := len(f.traced) > 0
			if !traced {
				f.procs[proc] = true
				f.shared = max(f.shared, fc.procs)
			}
			layers := []tracefmt.Layer{tracefmt.LayerMPIIO, tracefmt.LayerPOSIX, tracefmt.LayerStdio}
			for l := range fc.layers {
				if l != tracefmt.LayerMPIIO && l != tracefmt.LayerPOSIX && l != tracefmt.LayerStdio {
					layers = append(layers, l) // HDF5, PnetCDF: a view of their own
				}
			}
			for _, l := range layers {
				c := fc.layers[l]
				if c == nil || f.traced[l] {
					continue
				}
				var n uint64
				for op, k := range c.Calls {
					f.Calls[op] += k
					n += k
				}
				f.Layers.add(l, n, c.BytesRead, c.BytesWritten)
				p.Layers.add(l, n, c.BytesRead, c.BytesWritten)
				// The application's bytes: the layer's counters unless events
				// gave them (DXT traced this layer, or POSIX beneath an
				// untraced MPI-IO) or a higher layer holds them.
				if (l == tracefmt.LayerPOSIX && viaMPIIO[path]) || (l == tracefmt.LayerMPIIO && f.traced[tracefmt.LayerPOSIX]) ||
					(l != tracefmt.LayerMPIIO && l != tracefmt.LayerPOSIX && l != tracefmt.LayerStdio) {
					continue
				}
				ns := c.ReadNs + c.WriteNs + c.MetaNs
				f.BytesRead += c.BytesRead
				f.BytesWritten += c.BytesWritten
				f.IONs += ns
				p.BytesRead += c.BytesRead
				p.BytesWritten += c.BytesWritten
				p.IONs += ns
				p.Calls += n
			}
		}
	}
}

// writeModules prints the module totals and the notes, when there are.
func writeModules(w io.Writer, rep *Report) {
	if len(rep.Modules) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "MODULE\tFILES\tRECORDS\tREAD\tWRITTEN\tREAD TIME\tWRITE TIME\tMETA TIME\tCALLS")
		for _, m := range rep.Modules {
			fmt.Fprintf(w, "%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", m.Layer, m.Files, m.Records, size(m.BytesRead), size(m.BytesWritten),
				duration(m.ReadNs), duration(m.WriteNs), duration(m.MetaNs), calls(m.Calls))
		}
	}
	for _, n := range rep.Notes {
		fmt.Fprintf(w, "\nnote: %s\n", strings.TrimSpace(n))
	}
}
