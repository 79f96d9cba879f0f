// Package darshan reads Darshan logs: the job record and its metadata, the
// file names, the POSIX, MPI-IO and STDIO counters, and the calls that
// Darshan's extended tracing (DXT) records one by one. It reads every log
// format Darshan 3 wrote (3.00, 3.10, 3.20, 3.21 and 3.41), in either byte
// order (logs from ppc64 machines are big-endian), compressed with zlib or
// bzip2 or not at all.
//
// Importing the package registers the "darshan" format with tracefmt, so
// that every iopred analysis reads a .darshan file as one trace per rank
// (see Format).
//
// A log is what Darshan wrote at the end of a job: a header that maps the
// regions of the file, then the job record, the name map and one region per
// module, each compressed on its own (by each rank, so a region may hold
// several compressed streams one after another). A log cut short, or whose
// Darshan ran out of memory for a module, is read as far as it goes.
package darshan

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// MaxNameLen bounds a file name in the name map: Darshan's are at most
// 4096 bytes, and a corrupt log must not make the reader buffer more.
const MaxNameLen = 64 << 10

// Compression is the method the regions of a log are compressed with.
type Compression uint8

// The compression methods of darshan-log-format.h.
const (
	Zlib  Compression = 0
	Bzip2 Compression = 1
	None  Compression = 2
)

func (c Compression) String() string {
	switch c {
	case Zlib:
		return "zlib"
	case Bzip2:
		return "bzip2"
	case None:
		return "none"
	}
	return fmt.Sprintf("compression %d", uint8(c))
}

// ModuleID names a module as current Darshan numbers them. Older log
// formats number them otherwise (H5D arrived in 3.20, PNETCDF_VAR in
// 3.41); the reader translates.
type ModuleID int

// The modules Darshan knows, in its order.
const (
	ModNull ModuleID = iota
	ModPOSIX
	ModMPIIO
	ModH5F
	ModH5D
	ModPnetCDFFile
	ModPnetCDFVar
	ModBGQ
	ModLustre
	ModSTDIO
	ModDXTPOSIX
	ModDXTMPIIO
	ModMDHIM
	ModAPXC
	ModAPMPI
	ModHeatmap
	ModDFS
	ModDAOS
	// ModUnknown is a module past the ones this reader knows.
	ModUnknown ModuleID = -1
)

var moduleNames = [...]string{"NULL", "POSIX", "MPI-IO", "H5F", "H5D", "PNETCDF_FILE", "PNETCDF_VAR", "BG/Q",
	"LUSTRE", "STDIO", "DXT_POSIX", "DXT_MPIIO", "MDHIM", "APXC", "APMPI", "HEATMAP", "DFS", "DAOS"}

func (m ModuleID) String() string {
	if m >= 0 && int(m) < len(moduleNames) {
		return moduleNames[m]
	}
	return "unknown module"
}

// The modules in the header's slots, by log format: the slot of a module
// is its index in these lists.
var (
	slots300 = []ModuleID{ModNull, ModPOSIX, ModMPIIO, ModH5F, ModPnetCDFFile, ModBGQ, ModLustre, ModSTDIO,
		ModDXTPOSIX, ModDXTMPIIO, ModMDHIM}
	slots320 = []ModuleID{ModNull, ModPOSIX, ModMPIIO, ModH5F, ModH5D, ModPnetCDFFile, ModBGQ, ModLustre, ModSTDIO,
		ModDXTPOSIX, ModDXTMPIIO, ModMDHIM, ModAPXC, ModAPMPI, ModHeatmap}
	slots341 = []ModuleID{ModNull, ModPOSIX, ModMPIIO, ModH5F, ModH5D, ModPnetCDFFile, ModPnetCDFVar, ModBGQ,
		ModLustre, ModSTDIO, ModDXTPOSIX, ModDXTMPIIO, ModMDHIM, ModAPXC, ModAPMPI, ModHeatmap, ModDFS, ModDAOS}
)

// format is what one log format version fixes about the layout.
type format struct {
	version    string
	headerSize int // bytes of the uncompressed header
	slots      int // module slots in the header
	modules    []ModuleID
	jobNsec    bool // the job record has nanoseconds of its start and end
	nameLen32  bool // name records carry a 32-bit length instead of a NUL
}

// formats are the log format versions Darshan 3 wrote.
var formats = map[string]format{
	"3.00": {"3.00", 360, 16, slots300, false, true},
	"3.10": {"3.10", 360, 16, slots300, false, false},
	"3.20": {"3.20", 360, 16, slots320, false, false},
	"3.21": {"3.21", 360, 16, slots320, false, false},
	"3.41": {"3.41", 1328, 64, slots341, true, false},
}

// magic is DARSHAN_MAGIC_NR, written in the byte order of the machine that
// wrote the log.
const magic = 6567223

// Job is the job record: who ran what, how many processes, when.
type Job struct {
	UID    int64
	JobID  int64
	NProcs int64
	// Start and End are the wall-clock times of the job's first process
	// start and last process end; logs before format 3.41 keep seconds.
	Start, End time.Time
	// Metadata holds the key=value lines Darshan keeps (lib_ver, h, ...).
	Metadata map[string]string
	// Exe is the command line as Darshan recorded it (arguments joined
	// with spaces, possibly cut short).
	Exe    string
	Mounts []Mount
}

// Mount is a file system mounted on the job's nodes.
type Mount struct {
	Type, Path string
}

// Module is a module region the header lists.
type Module struct {
	ID      ModuleID
	Slot    int    // its index in the header
	Version uint32 // the module's own format version
	Offset  uint64 // of its compressed data in the file
	Length  uint64
	// Partial is Darshan's flag that the module ran out of memory: files
	// (or, for DXT, calls) past that point are missing.
	Partial bool
	// Decoded says whether this reader decoded the module's records:
	// POSIX, MPI-IO, STDIO, DXT_POSIX, DXT_MPIIO, LUSTRE and HEATMAP.
	Decoded bool
	Records int // records decoded
}

// Name is the module's name, or "module #N" for a slot this reader does
// not know.
func (m *Module) Name() string {
	if m.ID == ModUnknown {
		return "module #" + strconv.Itoa(m.Slot)
	}
	return m.ID.String()
}

// Record is one file's counters in a counter module (POSIX, MPI-IO,
// STDIO): from one rank, or from all ranks when Rank is -1 (Darshan
// reduces a file every rank opened into one record).
type Record struct {
	Module  ModuleID
	Version uint32
	ID      uint64 // Darshan's record id, the hash of the file name
	Rank    int64
	// File is the record id of the file an H5D dataset or PnetCDF
	// variable record belongs to; 0 for the others.
	File   uint64
	Ints   []int64   // in the order of IntNames
	Floats []float64 // in the order of FloatNames
	set    *counterSet
}

// IntNames lists the integer counters of the record's module version.
func (r *Record) IntNames() []string { return r.set.ints }

// FloatNames lists the floating-point counters of the record's module
// version.
func (r *Record) FloatNames() []string { return r.set.floats }

// Int returns the integer counter of that name ("POSIX_BYTES_READ"); ok is
// false when the record's module version has no such counter.
func (r *Record) Int(name string) (v int64, ok bool) {
	i, ok := r.set.index[name]
	if !ok || i >= len(r.Ints) {
		return 0, false
	}
	return r.Ints[i], true
}

// Float returns the floating-point counter of that name
// ("POSIX_F_READ_TIME"); ok is false when there is none.
func (r *Record) Float(name string) (v float64, ok bool) {
	i, ok := r.set.index[name]
	if !ok || i < len(r.Ints) {
		return 0, false
	}
	return r.Floats[i-len(r.Ints)], true
}

// DXTFile is what DXT traced of one file in one rank: each read and write
// call with its offset, length and times.
type DXTFile struct {
	Module   ModuleID // ModDXTPOSIX or ModDXTMPIIO
	Version  uint32
	ID       uint64
	Rank     int64
	Hostname string
	Writes   []Segment
	Reads    []Segment
}

// Segment is one traced call. Start and End are seconds since the job
// started. Offset is -1 when unknown (DXT_MPIIO before version 2); Thread
// is the pthread id (DXT_POSIX 2, DXT_MPIIO 3), else 0.
type Segment struct {
	Offset, Length int64
	Start, End     float64
	Thread         uint64
}

// Log is a Darshan log read into memory.
type Log struct {
	Name        string // the file, for messages
	Size        int64
	Version     string // the log format version ("3.41")
	ByteOrder   binary.ByteOrder
	Compression Compression
	Job         Job
	Modules     []Module          // the regions present, in module order
	Names       map[uint64]string // file name of each record id
	Records     []*Record         // POSIX, MPI-IO and STDIO records, by module, in log order
	DXT         []*DXTFile        // DXT_POSIX then DXT_MPIIO, in log order
	Lustre      []*Lustre         // LUSTRE records: each file's layout and OSTs
	Heatmaps    []*Heatmap        // HEATMAP records: bytes per time bin, per rank and layer
	// Warnings say what the log lacks: modules that ran out of memory,
	// modules this reader does not decode, known Darshan bugs.
	Warnings []string
	// Problems are the faults met in regions after the job record, in
	// file order; Read returns the first.
	Problems []*Error

	header header
}

// Runtime is the job's run time as Darshan reports it: end minus start,
// plus one second for the formats before 3.41, which keep whole seconds.
func (l *Log) Runtime() time.Duration {
	d := l.Job.End.Sub(l.Job.Start)
	if !formats[l.Version].jobNsec {
		d += time.Second
	}
	return d
}

// Module returns the module id's region, or nil when the log has none.
func (l *Log) Module(id ModuleID) *Module {
	for i := range l.Modules {
		if l.Modules[i].ID == id {
			return &l.Modules[i]
		}
	}
	return nil
}

// Path returns the file name of a record id, or a placeholder naming the
// id when the name map lacks it.
func (l *Log) Path(id uint64) string {
	if p, ok := l.Names[id]; ok && p != "" {
		return p
	}
	return fmt.Sprintf("<darshan record %016x>", id)
}

// HasDXT reports whether the log holds DXT segments: whether the
// time-resolved analyses have anything to work on.
func (l *Log) HasDXT() bool { return len(l.DXT) > 0 }

// Error is a fault in a log: the file, the region (header, job, name map
// or a module) and the byte offset of the region in the file.
type Error struct {
	File   string
	Region string
	Offset int64
	// Truncated says the file ends before the region does; everything
	// before the cut has been read.
	Truncated bool
	Err       error
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s: %s region at byte %d: %v", e.File, e.Region, e.Offset, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// errCut marks a region whose data ends before the region does.
var errCut = errors.New("the file ends inside this region (the log is cut short)")

// Open reads the Darshan log at path. See Read.
func Open(path string) (*Log, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	return Read(f, fi.Size(), path)
}

// Read reads a log of size bytes from r; name stands for it in messages.
// A log whose header or job record cannot be read gives a nil Log and an
// *Error. A fault in a later region (a cut, corrupt compressed data, a
// record that makes no sense) gives the Log as far as it could be read,
// every complete record included, and the first *Error; the other regions
// are still read, and Log.Problems lists every fault.
func Read(r io.ReaderAt, size int64, name string) (*Log, error) {
	l := &Log{Name: name, Size: size, Names: map[uint64]string{}}
	f, err := l.readHeader(r)
	if err != nil {
		return nil, err
	}
	if err := l.readJob(r, f); err != nil {
		return nil, err
	}
	l.readNames(r, f)
	l.readModules(r)
	l.warn()
	if len(l.Problems) > 0 {
		return l, l.Problems[0]
	}
	return l, nil
}

// header is the decoded header: the regions' places.
type header struct {
	nameOff, nameLen uint64
	job              int64 // end of the header, where the job region starts
}

func (l *Log) fail(region string, off int64, err error) *Error {
	return &Error{File: l.Name, Region: region, Offset: off, Err: err, Truncated: errors.Is(err, errCut)}
}

// readHeader reads the uncompressed header and fills the log's version,
// byte order, compression and module list.
func (l *Log) readHeader(r io.ReaderAt) (format, error) {
	var ver [8]byte
	if n, err := r.ReadAt(ver[:], 0); n < len(ver) {
		if err == nil || err == io.EOF {
			err = errCut
		}
		return format{}, l.fail("header", 0, fmt.Errorf("no version string: %w", err))
	}
	vs := string(ver[:])
	if i := strings.IndexByte(vs, 0); i >= 0 {
		vs = vs[:i]
	}
	f, ok := formats[vs]
	if !ok {
		return format{}, l.fail("header", 0, versionError(vs))
	}
	l.Version = vs
	buf := make([]byte, f.headerSize)
	if n, err := r.ReadAt(buf, 0); n < len(buf) {
		if err == nil || err == io.EOF {
			err = errCut
		}
		return format{}, l.fail("header", 0, fmt.Errorf("%d of its %d bytes: %w", n, len(buf), err))
	}
	switch {
	case binary.LittleEndian.Uint64(buf[8:]) == magic:
		l.ByteOrder = binary.LittleEndian
	case binary.BigEndian.Uint64(buf[8:]) == magic:
		l.ByteOrder = binary.BigEndian
	default:
		return format{}, l.fail("header", 8, fmt.Errorf("bad magic number %#x: not a Darshan log, or a corrupt one", binary.LittleEndian.Uint64(buf[8:])))
	}
	bo := l.ByteOrder
	l.Compression = Compression(buf[16])
	if l.Compression > None {
		return format{}, l.fail("header", 16, fmt.Errorf("unknown compression method %d", buf[16]))
	}
	var partial uint64
	maps := 24 // name map, then the module maps
	if f.slots == 64 {
		partial = bo.Uint64(buf[24:])
		maps = 32
	} else {
		partial = uint64(bo.Uint32(buf[20:]))
	}
	h := header{job: int64(f.headerSize)}
	h.nameOff, h.nameLen = bo.Uint64(buf[maps:]), bo.Uint64(buf[maps+8:])
	vers := maps + 16 + 16*f.slots
	for slot := range f.slots {
		off := bo.Uint64(buf[maps+16+16*slot:])
		n := bo.Uint64(buf[maps+16+16*slot+8:])
		if n == 0 {
			continue
		}
		id := ModUnknown
		if slot < len(f.modules) {
			id = f.modules[slot]
		}
		l.Modules = append(l.Modules, Module{ID: id, Slot: slot, Version: bo.Uint32(buf[vers+4*slot:]),
			Offset: off, Length: n, Partial: partial&(1<<slot) != 0})
	}
	l.header = h
	return f, nil
}

// versionError explains a version string this reader does not take.
func versionError(vs string) error {
	if len(vs) > 0 && (vs[0] == '1' || vs[0] == '2') && strings.Contains(vs, ".") {
		return fmt.Errorf("log format %q is Darshan 2's, which this reader does not read (Darshan 3's darshan-convert cannot convert it either)", vs)
	}
	major, minor, ok := strings.Cut(vs, ".")
	if ok && major == "3" {
		if m, err := strconv.Atoi(minor); err == nil && m > 41 {
			return fmt.Errorf("log format %s is newer than this reader knows (3.00 to 3.41)", vs)
		}
		return fmt.Errorf("log format %q is not one Darshan released (3.00, 3.10, 3.20, 3.21, 3.41)", vs)
	}
	return fmt.Errorf("no Darshan version string at the start (%q): not a Darshan log", vs)
}
