package insights

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Thresholds are the limits the checks apply. The zero value of a field
// means its default, Drishti's where Drishti has the check.
type Thresholds struct {
	// SmallBytes: a request that moves fewer bytes is small (1 MiB).
	SmallBytes int64 `json:"small_bytes"`
	// SmallShare and SmallCount: small requests are a problem when they
	// are more than this share of a direction's requests (0.1) and more
	// than this many (1000).
	SmallShare float64 `json:"small_share"`
	SmallCount uint64  `json:"small_count"`
	// Align is the alignment requests should start at (4096 bytes, the
	// page and the usual file-system block; a Lustre stripe is 1 MiB).
	Align int64 `json:"align"`
	// MisalignedShare and MisalignedCount: misaligned requests are a
	// problem when they are more than this share of the requests (0.1)
	// and at least this many (100; Drishti has no floor).
	MisalignedShare float64 `json:"misaligned_share"`
	MisalignedCount uint64  `json:"misaligned_count"`
	// RandomShare and RandomCount: requests that go back in the file are
	// a problem when they are more than this share (0.2) and more than
	// this many (1000).
	RandomShare float64 `json:"random_share"`
	RandomCount uint64  `json:"random_count"`
	// MetaSeconds: a process that spends longer in metadata calls is
	// metadata-heavy (30 s). MetaShare and MetaCalls: so is one whose
	// metadata calls take more than this share of its I/O time (0.5)
	// when it makes at least this many (100).
	MetaSeconds float64 `json:"meta_seconds"`
	MetaShare   float64 `json:"meta_share"`
	MetaCalls   uint64  `json:"meta_calls"`
	// Imbalance: the ranks' I/O times are imbalanced when the slowest's
	// exceeds the fastest's by more than this share of the slowest's
	// (0.15) and by at least ImbalanceSeconds (0.1 s; Drishti has no
	// floor).
	Imbalance        float64 `json:"imbalance"`
	ImbalanceSeconds float64 `json:"imbalance_seconds"`
	// DataImbalance and DataImbalanceBytes: a shared file's data is
	// imbalanced when the rank that moved most moved more than the one
	// that moved least by this share of the most (0.3) and the file holds
	// at least this many bytes (1 MiB).
	DataImbalance      float64 `json:"data_imbalance"`
	DataImbalanceBytes int64   `json:"data_imbalance_bytes"`
	// RepeatedOpens: a process that opens the same file more times has a
	// repeated-open problem (10).
	RepeatedOpens uint64 `json:"repeated_opens"`
	// CollectiveCount: a shared file that gets more independent MPI-IO
	// data calls and no collective one (1000) should use collective I/O.
	CollectiveCount uint64 `json:"collective_count"`
	// StdioShare: stdio moving more than this share of the bytes (0.1).
	StdioShare float64 `json:"stdio_share"`
}

// DefaultThresholds are the thresholds of the zero Thresholds.
func DefaultThresholds() Thresholds { return Thresholds{}.withDefaults() }

func (t Thresholds) withDefaults() Thresholds {
	def := func(v *float64, d float64) {
		if *v <= 0 {
			*v = d
		}
	}
	defU := func(v *uint64, d uint64) {
		if *v == 0 {
			*v = d
		}
	}
	defI := func(v *int64, d int64) {
		if *v <= 0 {
			*v = d
		}
	}
	defI(&t.SmallBytes, 1<<20)
	def(&t.SmallShare, 0.1)
	defU(&t.SmallCount, 1000)
	defI(&t.Align, 4096)
	def(&t.MisalignedShare, 0.1)
	defU(&t.MisalignedCount, 100)
	def(&t.RandomShare, 0.2)
	defU(&t.RandomCount, 1000)
	def(&t.MetaSeconds, 30)
	def(&t.MetaShare, 0.5)
	defU(&t.MetaCalls, 100)
	def(&t.Imbalance, 0.15)
	def(&t.ImbalanceSeconds, 0.1)
	def(&t.DataImbalance, 0.3)
	defI(&t.DataImbalanceBytes, 1<<20)
	defU(&t.RepeatedOpens, 10)
	defU(&t.CollectiveCount, 1000)
	def(&t.StdioShare, 0.1)
	return t
}

// Severity ranks findings.
type Severity string

// The severities, most serious first.
const (
	High    Severity = "high"
	Warning Severity = "warning"
	Info    Severity = "info"
	OK      Severity = "ok"
)

func (s Severity) rank() int {
	switch s {
	case High:
		return 0
	case Warning:
		return 1
	case Info:
		return 2
	}
	return 3
}

// Finding is one check's outcome.
type Finding struct {
	ID       string   `json:"id"`
	Severity Severity `json:"severity"`
	Title    string   `json:"title"`
	// Evidence are the figures behind the finding, the largest
	// contributors first.
	Evidence []string `json:"evidence"`
	// Threshold is the limit the check applies, in words.
	Threshold string   `json:"threshold"`
	Advice    []string `json:"advice,omitempty"`
}

// maxListed bounds the files or ranks a finding names.
const maxListed = 5

// Findings runs every check on the collected figures and returns one
// finding per check (problems first, then information, then the checks
// that passed), each with its evidence and threshold.
func (c *Collector) Findings() []Finding {
	var out []Finding
	read, write := c.Total()
	usesMPIIO := false
	for _, f := range c.Files {
		if f.MPIRead != (MPIIO{}) || f.MPIWrite != (MPIIO{}) {
			usesMPIIO = true
		}
	}
	ranked := 0
	for _, p := range c.Procs {
		if p.Rank != nil {
			ranked++
		}
	}
	out = append(out, c.timeShare())
	out = append(out, c.small("read", &read, usesMPIIO, ranked > 1, func(f *File) *Access { return &f.Read }))
	out = append(out, c.small("write", &write, usesMPIIO, ranked > 1, func(f *File) *Access { return &f.Write }))
	out = append(out, c.random("read", &read, func(f *File) *Access { return &f.Read }))
	out = append(out, c.random("write", &write, func(f *File) *Access { return &f.Write }))
	out = append(out, c.misaligned(&read, &write))
	out = append(out, c.metadata())
	out = append(out, c.imbalance())
	out = append(out, c.dataImbalance())
	out = append(out, c.repeatedOpens())
	out = append(out, c.collective(ranked))
	out = append(out, c.stdio())
	var kept []Finding
	for _, f := range out {
		if f.ID != "" {
			kept = append(kept, f)
		}
	}
	sort.SliceStable(kept, func(i, j int) bool { return kept[i].Severity.rank() < kept[j].Severity.rank() })
	return kept
}

func (c *Collector) timeShare() Finding {
	f := Finding{ID: "io-time", Severity: Info, Title: "Time in I/O",
		Threshold: "information: the share of each process's run time spent in its I/O calls (MPI_Init and MPI_Finalize apart)"}
	var worst *Proc
	var total, run int64
	for _, p := range c.Procs {
		total += p.IONs()
		run += p.DurationNs
		if worst == nil || p.IONs() > worst.IONs() {
			worst = p
		}
	}
	if worst == nil {
		f.Evidence = []string{"no process"}
		return f
	}
	f.Evidence = append(f.Evidence, fmt.Sprintf("%s spent the longest in I/O: %s of its %s (%s): reads %s, writes %s, metadata %s",
		worst.Label(), Dur(worst.IONs()), Dur(worst.DurationNs), Pct(float64(worst.IONs()), float64(worst.DurationNs)),
		Dur(worst.ReadNs), Dur(worst.WriteNs), Dur(worst.MetaNs)))
	if len(c.Procs) > 1 {
		f.Evidence = append(f.Evidence, fmt.Sprintf("all %d processes: %s of I/O in %s of run time (%s)",
			len(c.Procs), Dur(total), Dur(run), Pct(float64(total), float64(run))))
	}
	var mpi int64
	for _, p := range c.Procs {
		mpi = max(mpi, p.MPIStartNs+p.MPIEndNs)
	}
	if mpi > 0 {
		f.Evidence = append(f.Evidence, fmt.Sprintf("MPI start-up and shut-down (not I/O) took up to %s per process", Dur(mpi)))
	}
	return f
}

// topFiles lists the files with the most of a count, largest first.
func (c *Collector) topFiles(count func(f *File) uint64, total uint64, what string) []string {
	type fc struct {
		path string
		n    uint64
	}
	var fs []fc
	for _, f := range c.Files {
		if n := count(f); n > 0 {
			fs = append(fs, fc{f.Path, n})
		}
	}
	sort.Slice(fs, func(i, j int) bool {
		if fs[i].n != fs[j].n {
			return fs[i].n > fs[j].n
		}
		return fs[i].path < fs[j].path
	})
	return listed(len(fs), "files", func(i int) string {
		return fmt.Sprintf("%s %s to %s (%s)", Count(fs[i].n), what, fs[i].path, Pct(float64(fs[i].n), float64(total)))
	})
}

// listed returns each(i) for the first maxListed of n items, then how
// many more there are.
func listed(n int, what string, each func(i int) string) []string {
	var out []string
	for i := range min(n, maxListed) {
		out = append(out, each(i))
	}
	if n > maxListed {
		out = append(out, fmt.Sprintf("and %d more %s", n-maxListed, what))
	}
	return out
}

func (c *Collector) small(dir string, a *Access, mpiio, parallel bool, of func(*File) *Access) Finding {
	th := c.th
	f := Finding{ID: "small-" + dir + "s", Title: "Small " + dir + " requests",
		Threshold: fmt.Sprintf("more than %s of the %s requests and more than %s of them under %s (Drishti's defaults)",
			Pct(th.SmallShare, 1), dir, Count(th.SmallCount), Size(th.SmallBytes))}
	if a.Requests == 0 {
		f.Severity, f.Evidence = OK, []string{"no " + dir + " request reached the file system"}
		return f
	}
	f.Evidence = append(f.Evidence, fmt.Sprintf("%s of %s %s requests (%s) moved less than %s; mean size %s",
		Count(a.Small), Count(a.Requests), dir, Pct(float64(a.Small), float64(a.Requests)), Size(th.SmallBytes),
		Size(a.Bytes/int64(a.Requests))))
	var common []string
	for _, s := range c.CommonSizes(dir == "write", 3) {
		common = append(common, fmt.Sprintf("%s × %s", Size(s.Size), Count(s.Count)))
	}
	f.Evidence = append(f.Evidence, "most common sizes: "+strings.Join(common, ", "))
	if float64(a.Small) <= th.SmallShare*float64(a.Requests) || a.Small <= th.SmallCount {
		f.Severity = OK
		return f
	}
	f.Severity = High
	f.Evidence = append(f.Evidence, c.topFiles(func(x *File) uint64 { return of(x).Small }, a.Small, "small "+dir+"s")...)
	f.Advice = append(f.Advice, fmt.Sprintf("Gather the %ss into larger, contiguous requests: buffer records in memory and %s whole blocks of 1 MiB or more.", dir, dir))
	switch {
	case mpiio:
		f.Advice = append(f.Advice, fmt.Sprintf("The job uses MPI-IO: collective calls (MPI_File_%s_all, MPI_File_%s_at_all) let the MPI library aggregate the ranks' requests into large ones (two-phase I/O).", dir, dir))
	case parallel:
		f.Advice = append(f.Advice, "The ranks use POSIX directly: MPI-IO collective I/O, or HDF5, PnetCDF or ADIOS2 on top of it, aggregates requests across ranks.")
	}
	return f
}

func (c *Collector) random(dir string, a *Access, of func(*File) *Access) Finding {
	th := c.th
	f := Finding{ID: "random-" + dir + "s", Title: "Random " + dir + "s",
		Threshold: fmt.Sprintf("more than %s of the %s requests and more than %s of them start before the end of the process's previous %s on the file (Drishti's defaults)",
			Pct(th.RandomShare, 1), dir, Count(th.RandomCount), dir)}
	if a.Requests == 0 {
		f.Severity, f.Evidence = OK, []string{"no " + dir + " request with an offset"}
		return f
	}
	f.Evidence = append(f.Evidence, fmt.Sprintf("of %s %s requests, %s continue where the previous one ended (consecutive), %s skip forward (strided), %s go back (random, %s)",
		Count(a.Requests), dir, Count(a.Consecutive), Count(a.Forward), Count(a.Backward), Pct(float64(a.Backward), float64(a.Requests))))
	if float64(a.Backward) <= th.RandomShare*float64(a.Requests) || a.Backward <= th.RandomCount {
		f.Severity = OK
		return f
	}
	f.Severity = High
	f.Evidence = append(f.Evidence, c.topFiles(func(x *File) uint64 { return of(x).Backward }, a.Backward, "backward "+dir+"s")...)
	f.Advice = []string{
		fmt.Sprintf("Order each process's %ss by offset, or give each process a contiguous region of the file.", dir),
		"When the order is inherent, read or write larger blocks and index them in memory; MPI-IO collective calls sort the requests across ranks.",
	}
	return f
}

func (c *Collector) misaligned(read, write *Access) Finding {
	th := c.th
	f := Finding{ID: "misaligned", Title: "Misaligned requests",
		Threshold: fmt.Sprintf("more than %s of the requests, and at least %s of them, start at an offset that is not a multiple of %s (Drishti's share; the floor is iopred's; set the alignment to the file system's block or stripe size)",
			Pct(th.MisalignedShare, 1), Count(th.MisalignedCount), Size(th.Align))}
	n, m := read.Requests+write.Requests, read.Misaligned+write.Misaligned
	if n == 0 {
		f.Severity, f.Evidence = OK, []string{"no request with an offset"}
		return f
	}
	f.Evidence = append(f.Evidence, fmt.Sprintf("%s of %s requests (%s) start off a %s boundary: %s reads, %s writes",
		Count(m), Count(n), Pct(float64(m), float64(n)), Size(th.Align), Count(read.Misaligned), Count(write.Misaligned)))
	if float64(m) <= th.MisalignedShare*float64(n) || m < th.MisalignedCount {
		f.Severity = OK
		return f
	}
	f.Severity = High
	f.Evidence = append(f.Evidence, c.topFiles(func(x *File) uint64 { return x.Read.Misaligned + x.Write.Misaligned }, m, "misaligned requests")...)
	f.Advice = []string{
		fmt.Sprintf("Start requests at multiples of %s: pad records to it, or write headers in a separate file.", Size(th.Align)),
		"On Lustre, match the stripe size (lfs getstripe; MPI-IO hint striping_unit); HDF5: H5Pset_alignment.",
	}
	return f
}

func (c *Collector) metadata() Finding {
	th := c.th
	f := Finding{ID: "metadata-heavy", Title: "Metadata-heavy processes",
		Threshold: fmt.Sprintf("a process spends more than %.3g s in metadata calls (open, close, stat, seek, set_view, ...: Drishti's), or more than %s of its I/O time in at least %s of them (iopred's)",
			th.MetaSeconds, Pct(th.MetaShare, 1), Count(th.MetaCalls))}
	var heavy []*Proc
	high := false
	var most *Proc
	for _, p := range c.Procs {
		if most == nil || p.MetaNs > most.MetaNs {
			most = p
		}
		long := float64(p.MetaNs) > th.MetaSeconds*1e9
		share := float64(p.MetaNs) > th.MetaShare*float64(p.IONs()) && p.MetaCalls >= th.MetaCalls
		if long || share {
			heavy = append(heavy, p)
			high = high || long
		}
	}
	if most == nil {
		f.Severity, f.Evidence = OK, []string{"no process"}
		return f
	}
	if len(heavy) == 0 {
		f.Severity = OK
		f.Evidence = []string{fmt.Sprintf("the most, %s: %s in %s metadata calls, %s of its I/O time",
			most.Label(), Dur(most.MetaNs), Count(most.MetaCalls), Pct(float64(most.MetaNs), float64(most.IONs())))}
		return f
	}
	f.Severity = Warning
	if high {
		f.Severity = High
	}
	sort.Slice(heavy, func(i, j int) bool { return heavy[i].MetaNs > heavy[j].MetaNs })
	f.Evidence = append(f.Evidence, fmt.Sprintf("%d of %d processes", len(heavy), len(c.Procs)))
	f.Evidence = append(f.Evidence, listed(len(heavy), "processes", func(i int) string {
		p := heavy[i]
		return fmt.Sprintf("%s: %s in %s metadata calls (%s of its I/O time), %s opens",
			p.Label(), Dur(p.MetaNs), Count(p.MetaCalls), Pct(float64(p.MetaNs), float64(p.IONs())), Count(p.Opens))
	})...)
	var files []*File
	for _, x := range c.Files {
		files = append(files, x)
	}
	meta := func(x *File) int64 {
		var n int64
		for _, p := range x.Procs {
			n += p.MetaNs
		}
		return n
	}
	sort.Slice(files, func(i, j int) bool {
		if a, b := meta(files[i]), meta(files[j]); a != b {
			return a > b
		}
		return files[i].Path < files[j].Path
	})
	for i, x := range files {
		if i == 3 || meta(x) == 0 {
			break
		}
		f.Evidence = append(f.Evidence, fmt.Sprintf("%s of metadata calls on %s", Dur(meta(x)), x.Path))
	}
	f.Advice = []string{
		"Open each file once and keep it open; cache stat results; create files in advance or in fewer directories.",
		"In MPI jobs let one rank create, stat or open-check and broadcast the result; HDF5: collective metadata (H5Pset_all_coll_metadata_ops, H5Pset_coll_metadata_write).",
	}
	return f
}

func (c *Collector) imbalance() Finding {
	th := c.th
	f := Finding{ID: "rank-imbalance", Title: "Imbalance of I/O time between processes",
		Threshold: fmt.Sprintf("the slowest process's I/O time exceeds the fastest's by more than %s of the slowest's (Drishti's stragglers) and by at least %.3g s (iopred's floor)",
			Pct(th.Imbalance, 1), th.ImbalanceSeconds)}
	if len(c.Procs) < 2 {
		f.Severity, f.Evidence = OK, []string{"one process: nothing to balance"}
		return f
	}
	procs := append([]*Proc(nil), c.Procs...)
	sort.Slice(procs, func(i, j int) bool { return procs[i].IONs() > procs[j].IONs() })
	slow, fast := procs[0], procs[len(procs)-1]
	diff := slow.IONs() - fast.IONs()
	med := procs[len(procs)/2]
	f.Evidence = append(f.Evidence, fmt.Sprintf("slowest %s: %s in I/O; median %s: %s; fastest %s: %s (%s less than the slowest)",
		slow.Label(), Dur(slow.IONs()), med.Label(), Dur(med.IONs()), fast.Label(), Dur(fast.IONs()), Pct(float64(diff), float64(slow.IONs()))))
	if float64(diff) <= th.Imbalance*float64(slow.IONs()) || float64(diff) < th.ImbalanceSeconds*1e9 {
		f.Severity = OK
		return f
	}
	f.Severity = High
	for i, p := range procs[:min(maxListed, len(procs))] {
		if i > 0 {
			f.Evidence = append(f.Evidence, fmt.Sprintf("%s: %s (reads %s, writes %s, metadata %s)", p.Label(), Dur(p.IONs()), Dur(p.ReadNs), Dur(p.WriteNs), Dur(p.MetaNs)))
		}
	}
	f.Advice = []string{
		"Give the ranks equal shares of the data, or let the slow ones do less; a rank that also gathers (rank 0 writing for all) makes the others wait.",
		"If the data is balanced but the time is not, the file system serves the ranks unevenly: spread the files over more servers (Lustre: a larger stripe count).",
	}
	return f
}

func (c *Collector) dataImbalance() Finding {
	th := c.th
	f := Finding{ID: "shared-file-imbalance", Title: "Imbalance of data on shared files",
		Threshold: fmt.Sprintf("on a file that several processes use, holding at least %s, the process that moved most moved more than the one that moved least by more than %s of the most",
			Size(th.DataImbalanceBytes), Pct(th.DataImbalance, 1))}
	type imb struct {
		path      string
		most, lst int64
		who       int
	}
	var bad []imb
	shared := 0
	for _, x := range c.Files {
		if len(x.Procs) < 2 {
			continue
		}
		r, w := x.Bytes()
		if r+w == 0 {
			continue
		}
		shared++
		most, least, who := int64(-1), int64(-1), 0
		for i, p := range x.Procs {
			b := p.BytesRead + p.BytesWritten
			if b > most || (b == most && i < who) {
				most, who = b, i
			}
			if least < 0 || b < least {
				least = b
			}
		}
		if r+w >= th.DataImbalanceBytes && float64(most-least) > th.DataImbalance*float64(most) {
			bad = append(bad, imb{x.Path, most, least, who})
		}
	}
	if len(bad) == 0 {
		f.Severity = OK
		f.Evidence = []string{fmt.Sprintf("%d shared files with data, none imbalanced", shared)}
		return f
	}
	f.Severity = Warning
	sort.Slice(bad, func(i, j int) bool {
		if a, b := bad[i].most-bad[i].lst, bad[j].most-bad[j].lst; a != b {
			return a > b
		}
		return bad[i].path < bad[j].path
	})
	f.Evidence = append(f.Evidence, fmt.Sprintf("%d of %d shared files with data", len(bad), shared))
	f.Evidence = append(f.Evidence, listed(len(bad), "files", func(i int) string {
		b := bad[i]
		return fmt.Sprintf("%s: %s moved %s, another process %s", b.path, c.procLabel(b.who), Size(b.most), Size(b.lst))
	})...)
	f.Advice = []string{
		"Spread the data evenly over the ranks that write the file, or let every rank take part in collective calls so that the MPI library balances the aggregators' work.",
	}
	return f
}

func (c *Collector) procLabel(index int) string {
	for _, p := range c.Procs {
		if p.Index == index {
			return p.Label()
		}
	}
	return "process " + itoa(index)
}

func (c *Collector) repeatedOpens() Finding {
	th := c.th
	f := Finding{ID: "repeated-opens", Title: "Files opened again and again",
		Threshold: fmt.Sprintf("a process opens the same file more than %s times", Count(th.RepeatedOpens))}
	type rep struct {
		path  string
		proc  int
		opens uint64
		meta  int64
		bytes int64
	}
	var reps []rep
	var most rep
	for _, x := range c.Files {
		for i, p := range x.Procs {
			r := rep{x.Path, i, p.Opens, p.MetaNs, p.BytesRead + p.BytesWritten}
			// Ties go to the first path, then the first process: the
			// processes' map has no order of its own.
			if r.opens > most.opens || (r.opens == most.opens && (r.path < most.path || (r.path == most.path && r.proc < most.proc))) {
				most = r
			}
			if p.Opens > th.RepeatedOpens {
				reps = append(reps, r)
			}
		}
	}
	if len(reps) == 0 {
		f.Severity = OK
		if most.opens == 0 {
			f.Evidence = []string{"no file opened"}
		} else {
			f.Evidence = []string{fmt.Sprintf("at most %s opens of one file by one process (%s, %s)", Count(most.opens), most.path, c.procLabel(most.proc))}
		}
		return f
	}
	f.Severity = Warning
	sort.Slice(reps, func(i, j int) bool {
		if reps[i].opens != reps[j].opens {
			return reps[i].opens > reps[j].opens
		}
		return reps[i].path < reps[j].path
	})
	var total uint64
	for _, r := range reps {
		total += r.opens
	}
	f.Evidence = append(f.Evidence, fmt.Sprintf("%d file and process pairs, %s opens in all", len(reps), Count(total)))
	f.Evidence = append(f.Evidence, listed(len(reps), "pairs", func(i int) string {
		r := reps[i]
		return fmt.Sprintf("%s opened %s times by %s: %s in metadata calls, %s moved per open",
			r.path, Count(r.opens), c.procLabel(r.proc), Dur(r.meta), Size(r.bytes/int64(r.opens)))
	})...)
	f.Advice = []string{
		"Open the file once and keep the descriptor (or MPI_File handle) across iterations; each open and close is a round trip to the file system's metadata service.",
		"A checkpoint file per step is fine; re-opening one file for every small record is not.",
	}
	return f
}

func (c *Collector) collective(ranked int) Finding {
	th := c.th
	f := Finding{ID: "no-collective", Title: "MPI-IO without collective calls",
		Threshold: fmt.Sprintf("a file that several processes access with MPI-IO gets more than %s independent data calls and no collective one (Drishti's count)", Count(th.CollectiveCount))}
	var mpiFiles, posixShared []*File
	anyColl := false
	for _, x := range c.Files {
		m := MPIIO{x.MPIRead.Collective + x.MPIWrite.Collective, x.MPIRead.Independent + x.MPIWrite.Independent, 0}
		anyColl = anyColl || m.Collective > 0
		if m.Collective+m.Independent > 0 && len(x.Procs) > 1 {
			mpiFiles = append(mpiFiles, x)
		} else if m.Collective+m.Independent == 0 && len(x.Procs) > 1 && x.Read.Requests+x.Write.Requests > 0 {
			posixShared = append(posixShared, x)
		}
	}
	if len(mpiFiles) == 0 {
		f.Severity = OK
		f.Evidence = []string{"no file shared by processes through MPI-IO"}
		if ranked > 1 && len(posixShared) > 0 {
			f.ID, f.Severity, f.Title = "no-mpiio", Warning, "Shared files without MPI-IO"
			f.Threshold = "an MPI job's ranks share files through POSIX calls only (Drishti's M01)"
			sort.Slice(posixShared, func(i, j int) bool { return posixShared[i].Path < posixShared[j].Path })
			f.Evidence = []string{fmt.Sprintf("%d files shared by ranks, written and read with POSIX calls only", len(posixShared))}
			f.Evidence = append(f.Evidence, listed(len(posixShared), "files", func(i int) string {
				x := posixShared[i]
				return fmt.Sprintf("%s: %d processes, %s requests", x.Path, len(x.Procs), Count(x.Read.Requests+x.Write.Requests))
			})...)
			f.Advice = []string{"MPI-IO (or HDF5, PnetCDF, ADIOS2 on top of it) lets the MPI library coordinate the ranks' requests on shared files: collective buffering, fewer and larger requests, fewer lock conflicts."}
		}
		return f
	}
	var bad []*File
	for _, x := range mpiFiles {
		ind := x.MPIRead.Independent + x.MPIWrite.Independent
		if x.MPIRead.Collective+x.MPIWrite.Collective == 0 && ind > th.CollectiveCount {
			bad = append(bad, x)
		}
	}
	sort.Slice(mpiFiles, func(i, j int) bool { return mpiFiles[i].Path < mpiFiles[j].Path })
	f.Evidence = append(f.Evidence, listed(len(mpiFiles), "files", func(i int) string {
		x := mpiFiles[i]
		return fmt.Sprintf("%s: %s collective and %s independent (%s nonblocking) data calls",
			x.Path, Count(x.MPIRead.Collective+x.MPIWrite.Collective), Count(x.MPIRead.Independent+x.MPIWrite.Independent),
			Count(x.MPIRead.Nonblocking+x.MPIWrite.Nonblocking))
	})...)
	if len(bad) == 0 {
		f.Severity = OK
		return f
	}
	f.Severity = Warning
	if !anyColl {
		f.Severity = High
	}
	f.Evidence = append([]string{fmt.Sprintf("%d shared files get only independent MPI-IO data calls", len(bad))}, f.Evidence...)
	f.Advice = []string{
		"Use the collective forms (MPI_File_write_all, MPI_File_write_at_all, MPI_File_read_all, ...) where every rank takes part: the MPI library then merges the ranks' requests into large, aligned ones (two-phase I/O).",
		"Set one aggregator per node (MPI-IO hints cb_nodes, romio_cb_write=enable).",
	}
	return f
}

func (c *Collector) stdio() Finding {
	th := c.th
	f := Finding{ID: "stdio", Title: "Bulk data through stdio",
		Threshold: fmt.Sprintf("stdio calls (fwrite, fread, fprintf, ...) move more than %s of the bytes (Drishti's S01)", Pct(th.StdioShare, 1))}
	var stdio, all int64
	for _, p := range c.Procs {
		stdio += p.StdioBytes
		all += p.BytesRead + p.BytesWritten
	}
	if all == 0 {
		f.Severity, f.Evidence = OK, []string{"no data moved"}
		return f
	}
	f.Evidence = []string{fmt.Sprintf("stdio moved %s of %s (%s)", Size(stdio), Size(all), Pct(float64(stdio), float64(all)))}
	if float64(stdio) <= th.StdioShare*float64(all) {
		f.Severity = OK
		return f
	}
	f.Severity = Warning
	var calls uint64
	for _, x := range c.Files {
		calls += x.Stdio
	}
	f.Evidence = append(f.Evidence, c.topFiles(func(x *File) uint64 { return x.Stdio }, calls, "stdio data calls")...)
	f.Advice = []string{"stdio copies every byte through a small buffer (4 KiB by default): for bulk data use write/pwrite, or MPI-IO, HDF5 or NetCDF; at least enlarge the buffer with setvbuf."}
	return f
}

// Count prints a count with thousands separators.
func Count(n uint64) string {
	s := strconv.FormatUint(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// Pct prints a/b as a percentage ("-" when b is 0).
func Pct(a, b float64) string {
	if b == 0 {
		return "-"
	}
	p := 100 * a / b
	switch {
	case p == 0 || p >= 10:
		return strconv.FormatFloat(p, 'f', 0, 64) + "%"
	case p >= 1:
		return strconv.FormatFloat(p, 'f', 1, 64) + "%"
	}
	return strconv.FormatFloat(p, 'f', 2, 64) + "%"
}

// Size prints a byte count in binary units.
func Size(n int64) string {
	const unit = 1024
	if n < unit && n > -unit {
		return strconv.FormatInt(n, 10) + " B"
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit || m <= -unit; m /= unit {
		div *= unit
		exp++
	}
	v := float64(n) / float64(div)
	if v == float64(int64(v)) {
		return fmt.Sprintf("%d %ciB", int64(v), "KMGTPE"[exp])
	}
	return fmt.Sprintf("%.1f %ciB", v, "KMGTPE"[exp])
}

// Dur prints a duration to three significant figures.
func Dur(ns int64) string {
	d := time.Duration(ns)
	switch {
	case d >= 100*time.Second:
		return d.Round(time.Second).String()
	case d >= time.Second:
		return strconv.FormatFloat(d.Seconds(), 'f', 2, 64) + " s"
	case d >= time.Millisecond:
		return strconv.FormatFloat(float64(d)/1e6, 'f', 2, 64) + " ms"
	case d >= time.Microsecond:
		return strconv.FormatFloat(float64(d)/1e3, 'f', 1, 64) + " µs"
	}
	return strconv.FormatInt(ns, 10) + " ns"
}

func itoa(i int) string { return strconv.Itoa(i) }
