// Package insights finds what a job's I/O does badly, as Drishti does
// from Darshan logs, from iopred traces: small, random or misaligned
// requests, metadata-heavy ranks, imbalance between ranks, files opened
// again and again, MPI-IO without collective calls, stdio for bulk data.
// Each finding carries its evidence (the figures and the files and ranks
// behind them), the threshold it crossed, and what to change. Checks that
// pass are kept too, with their figures, so that a person sees what was
// checked and how far from its threshold the job stayed.
//
// A Collector gathers the figures in the summary's single pass over the
// traces (it is a summary.Observer); Findings turns them into findings.
package insights

import (
	"sort"
	"strings"

	"iopred/analyzer/job"
	"iopred/analyzer/summary"
	"iopred/tracefmt"
	"iopred/tracefmt/darshan"
)

// SizeBins are the upper bounds of the request-size bins, Darshan's: 0-100
// B, 100 B-1 KiB, ..., 1 GiB and more (the last bin has no bound).
var SizeBins = []int64{100, 1 << 10, 10 << 10, 100 << 10, 1 << 20, 4 << 20, 10 << 20, 100 << 20, 1 << 30}

// SizeBinLabels name the bins of SizeBins, and the last one.
var SizeBinLabels = []string{"0-100 B", "100 B-1 KiB", "1-10 KiB", "10-100 KiB", "100 KiB-1 MiB", "1-4 MiB", "4-10 MiB", "10-100 MiB", "100 MiB-1 GiB", "1 GiB+"}

func sizeBin(n int64) int {
	for i, b := range SizeBins {
		if n < b {
			return i
		}
	}
	return len(SizeBins)
}

// Access counts the file-system requests of one direction: the POSIX
// data calls, including those an MPI library makes for MPI-IO calls (what
// the file system serves; stdio's buffered calls are not).
type Access struct {
	Requests uint64 `json:"requests"`
	Bytes    int64  `json:"bytes"`
	// Small requests moved fewer than Thresholds.SmallBytes.
	Small uint64 `json:"small"`
	// Misaligned requests started at an offset that is not a multiple of
	// Thresholds.Align.
	Misaligned uint64 `json:"misaligned"`
	// Each request after a process's first on a file, against the end of
	// its previous one in the same direction: Consecutive starts there,
	// Forward after it (a strided access), Backward before it (random).
	Consecutive uint64 `json:"consecutive"`
	Forward     uint64 `json:"forward"`
	Backward    uint64 `json:"backward"`
	// Sizes counts the requests by SizeBins.
	Sizes [10]uint64 `json:"sizes"`
}

func (a *Access) add(o *Access) {
	a.Requests += o.Requests
	a.Bytes += o.Bytes
	a.Small += o.Small
	a.Misaligned += o.Misaligned
	a.Consecutive += o.Consecutive
	a.Forward += o.Forward
	a.Backward += o.Backward
	for i := range a.Sizes {
		a.Sizes[i] += o.Sizes[i]
	}
}

// MPIIO counts the MPI-IO data calls of one direction.
type MPIIO struct {
	Collective  uint64 `json:"collective"`
	Independent uint64 `json:"independent"`
	Nonblocking uint64 `json:"nonblocking"`
}

// Times splits a process's time in its calls (the application's own: the
// POSIX calls inside MPI calls are the MPI calls' time) as Darshan does.
type Times struct {
	ReadNs  int64 `json:"read_ns"`
	WriteNs int64 `json:"write_ns"` // writes and syncs
	MetaNs  int64 `json:"meta_ns"`  // opens, closes, stats, seeks, views, ...
}

// IONs is the time in I/O calls.
func (t Times) IONs() int64 { return t.ReadNs + t.WriteNs + t.MetaNs }

// Proc is what one traced process did.
type Proc struct {
	Index       int      `json:"index"` // the trace's position in the summary
	Trace       string   `json:"trace"`
	Program     string   `json:"program"`
	Args        []string `json:"args"`
	Library     string   `json:"library"`
	Host        string   `json:"host"`
	PID         int      `json:"pid"`
	Rank        *int     `json:"rank"`
	StartUnixNs int64    `json:"start_unix_ns"`
	DurationNs  int64    `json:"duration_ns"`
	Times
	MPIStartNs int64 `json:"mpi_startup_ns"`
	MPIEndNs   int64 `json:"mpi_shutdown_ns"`
	// Calls of the application: data calls and metadata calls.
	Reads     uint64 `json:"reads"`
	Writes    uint64 `json:"writes"`
	MetaCalls uint64 `json:"meta_calls"`
	Opens     uint64 `json:"opens"`
	// Bytes the application read and wrote (tracefmt.DataFlow).
	BytesRead    int64  `json:"bytes_read"`
	BytesWritten int64  `json:"bytes_written"`
	Failed       uint64 `json:"failed"`
	StdioBytes   int64  `json:"stdio_bytes"`
	// ReadSignal and WriteSignal are the process's bandwidth over time,
	// at most SignalBins bins.
	ReadSignal  job.Histogram `json:"read_signal"`
	WriteSignal job.Histogram `json:"write_signal"`
}

// Label names the process for people: "rank 3", or "pid 1234".
func (p *Proc) Label() string {
	if p.Rank != nil {
		return "rank " + itoa(*p.Rank)
	}
	return "pid " + itoa(p.PID)
}

// SignalBins bounds the bins each process's bandwidth signal keeps.
const SignalBins = 512

// FileProc is one process's use of one file.
type FileProc struct {
	Opens        uint64 `json:"opens"`
	BytesRead    int64  `json:"bytes_read"`
	BytesWritten int64  `json:"bytes_written"`
	Times
	// the end of the previous request of each direction, -1 before the first
	lastEnd [2]int64
}

// File is what the processes did with one file.
type File struct {
	Path string `json:"path"`
	// Read and Write are the file-system requests (Access).
	Read  Access `json:"read"`
	Write Access `json:"write"`
	// MPIRead and MPIWrite are its MPI-IO data calls.
	MPIRead  MPIIO `json:"mpi_read"`
	MPIWrite MPIIO `json:"mpi_write"`
	// Stdio counts its stdio data calls.
	Stdio uint64 `json:"stdio_calls"`
	// Procs is each process's use, by Proc.Index.
	Procs map[int]*FileProc `json:"procs"`
	// FirstNs and LastNs bound its calls in wall-clock ns.
	FirstUnixNs int64 `json:"first_unix_ns"`
	LastUnixNs  int64 `json:"last_unix_ns"`
}

// Opens is the opens of every process.
func (f *File) Opens() uint64 {
	var n uint64
	for _, p := range f.Procs {
		n += p.Opens
	}
	return n
}

// Bytes is the bytes the application read and wrote.
func (f *File) Bytes() (read, written int64) {
	for _, p := range f.Procs {
		read += p.BytesRead
		written += p.BytesWritten
	}
	return read, written
}

// IONs is the time the processes spent in its calls.
func (f *File) IONs() int64 {
	var n int64
	for _, p := range f.Procs {
		n += p.IONs()
	}
	return n
}

// Collector gathers the figures of Findings while summary.Summarize reads
// the traces: pass it as summary.Options.Observer.
type Collector struct {
	th    Thresholds
	Procs []*Proc
	Files map[string]*File
	// Sizes counts the file-system requests by size, per direction, for
	// the most common sizes (at most maxSizes distinct ones; the rest in
	// OtherSizes).
	Sizes      [2]map[int64]uint64
	OtherSizes [2]uint64
	// sizeOrder lists each direction's Sizes in the order they were
	// first seen, which decides the sizes a later share may still add.
	sizeOrder [2][]int64
	// maxSizes bounds Sizes: the package's maxSizes, or more in a share
	// (NewShareCollector).
	maxSizes int

	// HeatmapBinNs is the time resolution of the bandwidth signals that
	// came from Darshan HEATMAP records (a log without DXT): the width of
	// their bins; 0 when every signal came from traced calls.
	HeatmapBinNs int64
	// Heatmap is the job's bandwidth from the Darshan HEATMAP records of
	// every rank (the same layers: each byte once), bin by bin from the
	// job's start at the heatmaps' own width: the signal for the job's
	// period when a log has no DXT, and a check of DXT's when it has
	// both. Nil when no trace is a Darshan log with heatmaps.
	Heatmap *job.Signal
	// HeatmapWithDXT tells that a log behind Heatmap has DXT segments
	// too, so the traced calls give the finer signal.
	HeatmapWithDXT bool
	// HeatmapSkipped counts the ranks' heatmaps left out of Heatmap: their
	// bins did not fit its grid (a width that is no multiple of the
	// other logs').
	HeatmapSkipped int

	cur *Proc
	t0  int64
	// the Darshan log whose heatmaps the previous trace used
	heatmapFile string
	heatmapLog  *darshan.Log
	// the file of the previous event and its process's use (consecutive
	// calls mostly name the same file)
	lastFile *File
	lastFP   *FileProc
}

const maxSizes = 4096

// Thresholds returns the thresholds the collector applies, defaults
// filled in.
func (c *Collector) Thresholds() Thresholds { return c.th }

// NewCollector returns a collector that applies th (the request size
// under which a request is small, the alignment).
func NewCollector(th Thresholds) *Collector {
	return &Collector{th: th.withDefaults(), Files: map[string]*File{},
		Sizes: [2]map[int64]uint64{{}, {}}, maxSizes: maxSizes}
}

var _ summary.Observer = (*Collector)(nil)

// Begin implements summary.Observer.
func (c *Collector) Begin(proc int, trace string, h tracefmt.Header) {
	c.cur = &Proc{Index: proc, Trace: trace, Program: h.Program, Args: h.Args, Library: h.Library, Host: h.Host, PID: h.PID,
		Rank: h.Rank, StartUnixNs: h.StartUnixNs}
	c.t0 = h.StartUnixNs
	c.Procs = append(c.Procs, c.cur)
	c.heatmap(trace, h)
}

// heatmap fills the bandwidth signals of a Darshan rank without DXT from
// the log's HEATMAP records of that rank: the bytes of each bin of the
// highest layer with a heatmap (MPI-IO, else POSIX) plus stdio's, so
// that a byte counts once, spread over the bin.
func (c *Collector) heatmap(trace string, h tracefmt.Header) {
	file, _, _ := strings.Cut(trace, "#")
	if !strings.HasPrefix(h.Source, "darshan") || h.Rank == nil || h.Shared {
		return
	}
	rank := int64(*h.Rank)
	if c.heatmapFile != file {
		c.heatmapFile = file
		c.heatmapLog, _ = darshan.Open(file) // what it read before a fault
	}
	l := c.heatmapLog
	if l == nil || len(l.Heatmaps) == 0 {
		return
	}
	dxt := len(l.DXT) > 0
	c.HeatmapWithDXT = c.HeatmapWithDXT || dxt
	top := "POSIX"
	for _, hm := range l.Heatmaps {
		if hm.Layer == "MPIIO" {
			top = "MPIIO"
		}
	}
	for _, hm := range l.Heatmaps {
		w := int64(hm.BinWidth * 1e9)
		if hm.Rank != rank || (hm.Layer != top && hm.Layer != "STDIO") || w <= 0 {
			continue
		}
		if !c.addHeatmap(c.t0, w, hm.Writes, hm.Reads) {
			c.HeatmapSkipped++
		}
		if dxt {
			continue // the traced calls fill the process's signals
		}
		c.HeatmapBinNs = w
		for i := range hm.Writes {
			start := c.t0 + int64(i)*w // bins count from the job's start
			c.cur.WriteSignal.Add(start, start+w, hm.Writes[i])
			if i < len(hm.Reads) {
				c.cur.ReadSignal.Add(start, start+w, hm.Reads[i])
			}
		}
	}
}

// addHeatmap adds one rank's heatmap bins (of width w ns from t0) to the
// job's heatmap signal, coarsening whichever grid is finer when the
// widths differ by a whole factor; it reports false, adding nothing, when
// they do not, or when t0 is not on the signal's grid.
func (c *Collector) addHeatmap(t0, w int64, writes, reads []int64) bool {
	h := c.Heatmap
	if h == nil {
		h = &job.Signal{StartUnixNs: t0, WidthNs: w, Fs: 1e9 / float64(w)}
		c.Heatmap = h
	}
	switch {
	case w < h.WidthNs && h.WidthNs%w == 0:
		writes, reads = mergeBins(writes, int(h.WidthNs/w)), mergeBins(reads, int(h.WidthNs/w))
		w = h.WidthNs
	case w > h.WidthNs && w%h.WidthNs == 0:
		k := int(w / h.WidthNs)
		h.Write, h.Read = mergeBins(h.Write, k), mergeBins(h.Read, k)
		h.WidthNs, h.Fs = w, 1e9/float64(w)
	case w != h.WidthNs:
		return false
	}
	// Ranks of one log share its start; another log's bins go where its
	// start falls, to the nearest bin.
	shift := (t0 - h.StartUnixNs + w/2) / w
	if t0 < h.StartUnixNs {
		shift = -((h.StartUnixNs - t0 + w/2) / w)
	}
	if shift < 0 {
		pad := make([]int64, -shift)
		h.Write = append(pad, h.Write...)
		h.Read = append(append([]int64(nil), pad...), h.Read...)
		h.StartUnixNs -= -shift * w
		shift = 0
	}
	n := int(shift) + max(len(writes), len(reads))
	for len(h.Write) < n {
		h.Write = append(h.Write, 0)
	}
	for len(h.Read) < len(h.Write) {
		h.Read = append(h.Read, 0)
	}
	for len(h.Write) < len(h.Read) {
		h.Write = append(h.Write, 0)
	}
	for i, b := range writes {
		h.Write[int(shift)+i] += b
	}
	for i, b := range reads {
		h.Read[int(shift)+i] += b
	}
	return true
}

// mergeBins sums each k consecutive bins into one.
func mergeBins(bins []int64, k int) []int64 {
	out := make([]int64, (len(bins)+k-1)/k)
	for i, b := range bins {
		out[i/k] += b
	}
	return out
}

// HeatmapPeriods is FTIO's analysis (job.PeriodsOf) of the job's heatmap
// signal: a direction without a byte has none. Zero when there is no
// heatmap signal.
func (c *Collector) HeatmapPeriods() job.Periods {
	if c.Heatmap == nil {
		return job.Periods{}
	}
	sig := *c.Heatmap
	if !anyBytes(sig.Write) {
		sig.Write = nil
	}
	if !anyBytes(sig.Read) {
		sig.Read = nil
	}
	return job.PeriodsOf(sig)
}

func anyBytes(bins []int64) bool {
	for _, b := range bins {
		if b != 0 {
			return true
		}
	}
	return false
}

// End implements summary.Observer.
func (c *Collector) End(p *summary.Process) {
	if c.cur == nil {
		return
	}
	c.lastFile, c.lastFP = nil, nil
	c.cur.DurationNs, c.cur.MPIStartNs, c.cur.MPIEndNs, c.cur.Failed = p.DurationNs, p.MPIStartNs, p.MPIEndNs, p.Errors
	// Each process keeps SignalBins bins, not MaxBins: the trace's
	// full-resolution array goes to the next trace's signal.
	c.cur.ReadSignal.Shrink(SignalBins)
	c.cur.WriteSignal.Shrink(SignalBins)
	c.cur = nil
}

func (c *Collector) file(path string) *File {
	f := c.Files[path]
	if f == nil {
		f = &File{Path: path, Procs: map[int]*FileProc{}}
		c.Files[path] = f
	}
	return f
}

func (f *File) proc(i int) *FileProc {
	fp := f.Procs[i]
	if fp == nil {
		fp = &FileProc{lastEnd: [2]int64{-1, -1}}
		f.Procs[i] = fp
	}
	return fp
}

// isOpen tells the calls that open a file for the application.
func isOpen(op string) bool {
	switch op {
	case "open", "open64", "openat", "openat64", "creat", "creat64", "fopen", "fopen64", "freopen", "freopen64", "MPI_File_open":
		return true
	}
	return false
}

// isSync tells the calls that flush written data, which Darshan counts
// as write time.
func isSync(op string) bool {
	switch op {
	case "fsync", "fdatasync", "sync_file_range", "fflush", "MPI_File_sync", "msync":
		return true
	}
	return false
}

// Event implements summary.Observer.
func (c *Collector) Event(e *tracefmt.Event, dir tracefmt.Direction) {
	p := c.cur
	if p == nil {
		return
	}
	// MPI_Init and MPI_Finalize are the runtime's start-up and shut-down,
	// which the summary times (End takes them).
	if tracefmt.IsMPIStart(e.Op) || tracefmt.IsMPIEnd(e.Op) {
		return
	}
	dur := max(e.EndNs-e.StartNs, 0)
	// The application's own calls: a POSIX or stdio call inside an MPI
	// call is the MPI library's, its time the MPI call's.
	own := e.Parent == 0 || e.Layer == tracefmt.LayerMPIIO
	var f *File
	var fp *FileProc
	if e.Path != "" {
		if c.lastFile != nil && c.lastFile.Path == e.Path {
			f, fp = c.lastFile, c.lastFP
		} else {
			f = c.file(e.Path)
			fp = f.proc(p.Index)
			c.lastFile, c.lastFP = f, fp
		}
		c.during(f, e)
	}
	if own {
		var t *Times
		if fp != nil {
			t = &fp.Times
		}
		c.time(p, t, e, dir, dur)
	}
	if dir != tracefmt.NoData && e.Bytes > 0 && e.Errno == 0 {
		if dir == tracefmt.Read {
			p.BytesRead += e.Bytes
			p.ReadSignal.Add(c.t0+e.StartNs, c.t0+e.StartNs+dur, e.Bytes)
		} else {
			p.BytesWritten += e.Bytes
			p.WriteSignal.Add(c.t0+e.StartNs, c.t0+e.StartNs+dur, e.Bytes)
		}
		if fp != nil {
			if dir == tracefmt.Read {
				fp.BytesRead += e.Bytes
			} else {
				fp.BytesWritten += e.Bytes
			}
		}
		if e.Layer == tracefmt.LayerStdio {
			p.StdioBytes += e.Bytes
		}
	}
	if own && isOpen(e.Op) && e.Errno == 0 {
		p.Opens++
		if fp != nil {
			fp.Opens++
			// A new open starts a new sequence: rewriting a file from its
			// start after reopening it is not random access.
			fp.lastEnd = [2]int64{-1, -1}
		}
	}
	if f == nil {
		return
	}
	switch e.Layer {
	case tracefmt.LayerMPIIO:
		c.mpiio(f, e)
	case tracefmt.LayerStdio:
		if tracefmt.IsData(e.Op) {
			f.Stdio++
		}
	case tracefmt.LayerPOSIX:
		c.access(f, fp, e)
	}
}

// time adds a call's time to the process's and the file's split.
func (c *Collector) time(p *Proc, ft *Times, e *tracefmt.Event, dir tracefmt.Direction, dur int64) {
	var slot func(t *Times) *int64
	switch {
	// A nonblocking call's start (no data yet) is read or write time; its
	// completion carries the data and counts as the call.
	case dir == tracefmt.Read || (dir == tracefmt.NoData && tracefmt.IsRead(e.Op)):
		slot = func(t *Times) *int64 { return &t.ReadNs }
		if dir == tracefmt.Read {
			p.Reads++
		}
	case dir == tracefmt.Write || (dir == tracefmt.NoData && tracefmt.IsWrite(e.Op)) || isSync(e.Op):
		slot = func(t *Times) *int64 { return &t.WriteNs }
		if dir == tracefmt.Write {
			p.Writes++
		}
	case strings.HasPrefix(e.Op, "MPI_Wait") || strings.HasPrefix(e.Op, "MPI_Test"):
		// Completes a request with no data of its own (a failed or empty
		// transfer): neither data nor metadata.
		return
	default:
		slot = func(t *Times) *int64 { return &t.MetaNs }
		p.MetaCalls++
	}
	*slot(&p.Times) += dur
	if ft != nil {
		*slot(ft) += dur
	}
}

// mpiio counts an MPI-IO data call as collective, independent or
// nonblocking (a nonblocking call counts at its start; its completion is
// MPI_Wait's).
func (c *Collector) mpiio(f *File, e *tracefmt.Event) {
	var m *MPIIO
	switch {
	case tracefmt.IsRead(e.Op):
		m = &f.MPIRead
	case tracefmt.IsWrite(e.Op):
		m = &f.MPIWrite
	default:
		return
	}
	switch {
	case tracefmt.IsCollective(e.Op):
		m.Collective++
	case strings.HasPrefix(e.Op, "MPI_File_i"):
		m.Nonblocking++
		m.Independent++
	default:
		m.Independent++
	}
}

// Copied implements summary.CopyObserver: the bytes a copy_file_range
// read (counted by Event) were also written into path, one request with
// no offset of its own in the trace.
func (c *Collector) Copied(e *tracefmt.Event, path string) {
	p := c.cur
	if p == nil || e.Errno != 0 || e.Bytes <= 0 {
		return
	}
	dur := max(e.EndNs-e.StartNs, 0)
	p.BytesWritten += e.Bytes
	p.WriteSignal.Add(c.t0+e.StartNs, c.t0+e.StartNs+dur, e.Bytes)
	f := c.file(path)
	fp := f.proc(p.Index)
	fp.BytesWritten += e.Bytes
	c.during(f, e)
	if e.Layer == tracefmt.LayerPOSIX || e.Layer == "" {
		written := *e
		written.Offset = tracefmt.NoOffset
		c.request(&f.Write, 1, fp, &written)
	}
}

// during widens the file's time span to take in the call e.
func (c *Collector) during(f *File, e *tracefmt.Event) {
	at := c.t0 + e.StartNs
	if f.FirstUnixNs == 0 || at < f.FirstUnixNs {
		f.FirstUnixNs = at
	}
	f.LastUnixNs = max(f.LastUnixNs, c.t0+e.EndNs)
}

// access counts a POSIX data call as a file-system request.
func (c *Collector) access(f *File, fp *FileProc, e *tracefmt.Event) {
	switch {
	case tracefmt.IsRead(e.Op):
		c.request(&f.Read, 0, fp, e)
	case tracefmt.IsWrite(e.Op):
		c.request(&f.Write, 1, fp, e)
	}
}

// request counts e as a request of direction d (0 read, 1 write) in a.
func (c *Collector) request(a *Access, d int, fp *FileProc, e *tracefmt.Event) {
	n := e.Bytes
	if e.Errno != 0 || n <= 0 {
		return
	}
	a.Requests++
	a.Bytes += n
	a.Sizes[sizeBin(n)]++
	if n < c.th.SmallBytes {
		a.Small++
	}
	if m := c.Sizes[d]; m[n] > 0 {
		m[n]++
	} else if len(m) < c.maxSizes {
		m[n]++
		c.sizeOrder[d] = append(c.sizeOrder[d], n)
	} else {
		c.OtherSizes[d]++
	}
	if e.Offset == tracefmt.NoOffset {
		return
	}
	if e.Offset%c.th.Align != 0 {
		a.Misaligned++
	}
	switch last := fp.lastEnd[d]; {
	case last < 0:
	case e.Offset == last:
		a.Consecutive++
	case e.Offset > last:
		a.Forward++
	default:
		a.Backward++
	}
	fp.lastEnd[d] = e.Offset + n
}

// SizeCount is one request size and how many requests had it.
type SizeCount struct {
	Size  int64  `json:"size"`
	Count uint64 `json:"count"`
}

// CommonSizes returns the n most frequent request sizes of a direction
// (0 reads, 1 writes), most frequent first.
func (c *Collector) CommonSizes(write bool, n int) []SizeCount {
	d := 0
	if write {
		d = 1
	}
	out := make([]SizeCount, 0, len(c.Sizes[d]))
	for s, k := range c.Sizes[d] {
		out = append(out, SizeCount{s, k})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Size < out[j].Size
	})
	if len(out) > n {
		out = out[:n]
	}
	return out
}

// Total adds the file-system requests of every file.
func (c *Collector) Total() (read, write Access) {
	for _, f := range c.Files {
		read.add(&f.Read)
		write.add(&f.Write)
	}
	return read, write
}

// SortedFiles returns the files, the longest in I/O first (ties by path).
func (c *Collector) SortedFiles() []*File {
	out := make([]*File, 0, len(c.Files))
	for _, f := range c.Files {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].IONs(), out[j].IONs()
		if a != b {
			return a > b
		}
		return out[i].Path < out[j].Path
	})
	return out
}
