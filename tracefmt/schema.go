// Package tracefmt defines the iopred trace: its records, a streaming writer
// that emits JSON lines in independent zstd frames, a reader that tolerates a
// truncated tail, and importers for other tools' traces.
//
// A trace is one file per process, named
// <exe>.<host>.<pid>[.r<rank>].iopred.zst. Its content is a sequence of
// independent zstd frames; each frame holds whole JSON lines, one record per
// line. Because every frame is self-contained (the delta encoding of events
// restarts in each frame), a process killed mid-run loses at most its last
// unclosed frame. The on-disk field names are short; the types below carry
// the long names that programs and the `iopred events` output use.
package tracefmt

// FormatVersion is the version written in every header and the highest one
// the reader accepts.
const FormatVersion = 2

// FileSuffix ends the name of every iopred trace file.
const FileSuffix = ".iopred.zst"

// Layer names the interface through which the application made a call.
type Layer string

// The layers iopred records.
const (
	LayerPOSIX Layer = "posix"
	LayerStdio Layer = "stdio"
	LayerMPIIO Layer = "mpiio"
)

// LayerLustre marks a Counters record that holds a file's Lustre layout
// (a Darshan log's LUSTRE record), not I/O: Ints LUSTRE_STRIPE_SIZE,
// LUSTRE_STRIPE_COUNT, LUSTRE_COMPONENTS and LUSTRE_OST_ID_0, _1, ...
const LayerLustre Layer = "lustre"

// Kind tells which record a trace line holds.
type Kind string

// Record kinds, as written in the "k" field of each line.
const (
	KindHeader  Kind = "h"
	KindContext Kind = "c"
	KindFile    Kind = "f"
	KindEvent   Kind = "e"
	KindProc    Kind = "p"
	KindFooter  Kind = "z"
	// KindCounters is a file's totals from a tool that counts instead of
	// tracing (Darshan without DXT).
	KindCounters Kind = "a"
	// KindRegion is a span of the application's own work that another
	// tool recorded (a DFTracer trace's functions, epochs and steps).
	KindRegion Kind = "g"
)

// Header is the first record of a trace.
type Header struct {
	Version      int      `json:"v"`
	Program      string   `json:"prog"`
	Args         []string `json:"args,omitempty"`
	Host         string   `json:"host"`
	PID          int      `json:"pid"`
	PPID         int      `json:"ppid"`
	Rank         *int     `json:"rank"`
	StartUnixNs  int64    `json:"t0_unix_ns"` // wall clock at the time anchor
	StartMonoNs  int64    `json:"t0_mono_ns"` // CLOCK_MONOTONIC at the anchor; event times count from it
	ContextDepth int      `json:"ctx_depth"`
	Library      string   `json:"lib"` // iopred version that wrote the trace
	// Source names the tool whose data the trace was converted from
	// ("darshan 3.4.7, log format 3.41"); empty for iopred's own traces.
	Source string `json:"src,omitempty"`
	// JobID and Procs are the batch job and its number of processes when
	// the source records them (a Darshan log does).
	JobID string `json:"job,omitempty"`
	Procs int    `json:"procs,omitempty"`
	// ForkUnixNs is the wall clock when a child that forked without exec
	// was forked (its trace's time anchor); 0 for a process that started
	// from an exec.
	ForkUnixNs int64 `json:"fork_unix_ns,omitempty"`
	// Shared marks the trace of the records that cover all of the job's
	// processes (a Darshan log's shared records, rank -1): the job's
	// shared files, not a process of its own.
	Shared bool `json:"shared,omitempty"`
	// Partial says what the source lacks when it is incomplete (a Darshan
	// log cut short, or whose Darshan ran out of memory for a module), so
	// that a copy (iopred import) stays marked; empty when complete.
	Partial string `json:"partial,omitempty"`
	// Job is the batch job as the source recorded it (a Darshan log's job
	// record), nil for iopred's own traces.
	Job *SourceJob `json:"src_job,omitempty"`
	// Notes say what the source did not record and the analyses therefore
	// lack (a DFTracer trace made without sizes or paths).
	Notes []string `json:"notes,omitempty"`
}

// SourceJob is what another tool recorded about the whole job (a Darshan
// log's job record and header).
type SourceJob struct {
	UID int64 `json:"uid"`
	// CommandLine is the command line as the source kept it (Darshan's
	// may be cut short).
	CommandLine string `json:"cmdline,omitempty"`
	StartUnixNs int64  `json:"start_unix_ns"`
	EndUnixNs   int64  `json:"end_unix_ns"`
	// RunNs is the run time as the source's own tools report it (Darshan:
	// end minus start, plus one second for the logs that keep whole
	// seconds).
	RunNs int64 `json:"run_ns"`
	// FormatVersion is the log's format ("3.41"), Library the version of
	// the tool that wrote it ("3.4.7"), when it says.
	FormatVersion string `json:"format_version,omitempty"`
	Library       string `json:"library,omitempty"`
	// Modules names the log's modules, those it holds data of.
	Modules []string `json:"modules,omitempty"`
}

// Frame is one call-stack frame of a context, symbolised so that it is
// stable across runs despite address randomisation.
type Frame struct {
	Module   string `json:"mod"`          // path of the executable or shared object
	Offset   uint64 `json:"off"`          // return address minus the module's load base
	Function string `json:"fn,omitempty"` // symbol name where the module exports one
}

// Context defines a context symbol: the call stack above an interposed
// call. ID is a hash of the frames (modules and offsets), kept below 2^53 so
// that it survives JSON tools that read numbers as doubles.
type Context struct {
	ID     uint64  `json:"id"`
	Frames []Frame `json:"frames"`
}

// File defines a file id used by events.
type File struct {
	ID   uint32 `json:"id"`
	Path string `json:"path"`
}

// NoOffset marks an event without a file offset (metadata calls such as
// stat, unlink or close).
const NoOffset int64 = -1

// Event is one intercepted call.
type Event struct {
	Layer   Layer  // derived from Op
	Op      string // the function the program called: "pwrite", "fwrite", ...
	FileID  uint32 // 0 when the call names no file known to the trace
	Path    string // filled in by the reader from the file table
	Offset  int64  // byte offset the call started at, or NoOffset
	Size    int64  // bytes requested (0 for calls without a size)
	Ret     int64  // return value as the program saw it (pointers: 1, or 0 for NULL)
	Bytes   int64  // bytes the call moved: for fwrite, items times item size
	StartNs int64  // ns since Header.StartMonoNs
	EndNs   int64
	Tid     int32
	Ctx     uint64 // context id (0 when capture is off)
	Errno   int32  // 0 when the call succeeded
	Rank    *int   // from the header, filled in by the reader
	PID     int    // from the header, filled in by the reader
	// Aux carries a second operand: the other fd's file for dup and
	// copy_file_range, the flags of open, the whence of lseek.
	Aux int64
	// Seq numbers the process's MPI-IO events (1, 2, ...) so that other
	// events can refer to them; 0 for events nobody refers to.
	Seq int64
	// Parent is the Seq of the MPI-IO call this event happened inside
	// (the pwrite that ROMIO issues for an MPI_File_write_all), or, for the
	// completion of a nonblocking request (MPI_Wait, MPI_Test, ...), the Seq
	// of the call that started it; 0 when none.
	Parent int64
}

// Proc is a process event: fork (Child set), exec (Path set), or exit.
type Proc struct {
	Op     string `json:"op"` // "fork", "exec", "exit"
	TimeNs int64  `json:"t"`
	Child  int    `json:"child,omitempty"`
	Path   string `json:"path,omitempty"`
	Status int    `json:"status,omitempty"`
}

// Footer closes a trace. A trace whose process exec'd and failed to exec
// may hold records after a footer; the last footer counts.
type Footer struct {
	Reason  string `json:"reason"` // "exit" or "exec"
	EndNs   int64  `json:"t"`
	Events  uint64 `json:"events"`
	Bytes   uint64 `json:"bytes"`   // bytes moved by data calls
	Dropped uint64 `json:"dropped"` // events lost (drop mode only)
	// Model is the per-process model's summary, if a model ran.
	Model map[string]any `json:"model,omitempty"`
	// Prefetch is what the library's prefetching did, when it was on
	// (IOPRED_PREFETCH=1).
	Prefetch *Prefetch `json:"prefetch,omitempty"`
}

// Prefetch counts the library's prefetching in one process: ranges it
// asked the kernel for ahead of the reads (posix_fadvise WILLNEED), and
// what the reads made of them.
type Prefetch struct {
	Reads   uint64 `json:"reads"`   // reads seen while prefetching was on
	Covered uint64 `json:"covered"` // reads whose every byte had been prefetched
	// PrefetchedBytes were asked for; UsedBytes of them a later read fell
	// on; WastedBytes no read used by the file's close or the process's
	// end. PrefetchedBytes = UsedBytes + WastedBytes.
	PrefetchedBytes uint64 `json:"prefetched_bytes"`
	UsedBytes       uint64 `json:"used_bytes"`
	WastedBytes     uint64 `json:"wasted_bytes"`
	Calls           uint64 `json:"calls"`            // posix_fadvise calls
	Misses          uint64 `json:"misses"`           // predicted reads that did not come
	Capped          uint64 `json:"capped,omitempty"` // predictions left out by the per-process bound
	// TableFiles is how many files had an earlier run's read sequence to
	// follow (IOPRED_MODEL).
	TableFiles int `json:"table_files,omitempty"`
}

// Counters are one file's totals over a run, from a tool that counts
// calls instead of recording each (a Darshan log, whose DXT module alone
// traces calls). They cover this process, or, when Procs is above 1, every
// process that shared the file (Darshan reduces a file all ranks opened to
// one record). The summary reads them where a trace has no events; the
// time-resolved analyses (period, patterns, replay) cannot.
type Counters struct {
	FileID uint32 `json:"f"`
	Path   string `json:"-"` // filled in by the reader from the file table
	Layer  Layer  `json:"layer"`
	// Procs is how many processes the totals cover when more than this
	// one; 0 for this process alone.
	Procs int `json:"procs,omitempty"`
	// Calls counts calls by family, named after the call that stands for
	// it: "read" counts read, pread, readv and the like; "open" every open.
	Calls        map[string]uint64 `json:"calls,omitempty"`
	BytesRead    int64             `json:"bytes_read,omitempty"`
	BytesWritten int64             `json:"bytes_written,omitempty"`
	// Time spent in reads, in writes and in other calls (open, stat, seek,
	// sync, close), summed over the calls and the processes.
	ReadNs  int64 `json:"read_ns,omitempty"`
	WriteNs int64 `json:"write_ns,omitempty"`
	MetaNs  int64 `json:"meta_ns,omitempty"`
	// Source names the source module ("darshan POSIX v4"); Ints and Floats
	// keep its counters by their own names, zeros left out.
	Source string             `json:"src,omitempty"`
	Ints   map[string]int64   `json:"ints,omitempty"`
	Floats map[string]float64 `json:"floats,omitempty"`
}

// Region is a span of the application's own work, not an I/O call: a
// function, a training epoch or step, a phase, as a tool that annotates
// applications recorded it (DFTracer's events of categories other than
// POSIX and STDIO). The analyses of I/O leave regions out; `iopred events`,
// the report and the Perfetto export show them beside the calls.
type Region struct {
	Name string `json:"name"`
	// Category is the source's grouping ("PyTorch", "dlio_benchmark").
	Category string `json:"cat,omitempty"`
	StartNs  int64  `json:"t"` // ns since Header.StartMonoNs
	EndNs    int64  `json:"end"`
	Tid      int32  `json:"tid,omitempty"`
	// Args keeps the source's scalar arguments of the region ("epoch":
	// "2", "step": "40"), as text.
	Args map[string]string `json:"args,omitempty"`
}

// Record is one decoded trace line; exactly one of the pointers is set,
// the one Kind names.
type Record struct {
	Kind     Kind
	Header   *Header
	Context  *Context
	File     *File
	Event    *Event
	Proc     *Proc
	Footer   *Footer
	Counters *Counters
	Region   *Region
}
