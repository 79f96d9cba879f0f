package tracefmt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
)

// Stream is one process's records in order: an iopred trace, or another
// tool's data converted as it is read. Every analysis reads Streams, so a
// format that can be expressed as records reaches every command.
type Stream interface {
	// Header returns the process's header record.
	Header() Header
	// Contexts returns every context defined so far, by id. The map
	// belongs to the Stream.
	Contexts() map[uint64]Context
	// Files returns every file defined so far, by id. The map belongs to
	// the Stream.
	Files() map[uint32]File
	// Footer returns the last footer read, or nil.
	Footer() *Footer
	// Next returns the next record after the header; io.EOF at a clean
	// end, a *TruncatedError after every complete record of a stream cut
	// short, another error on corrupt input. Errors repeat.
	Next() (Record, error)
	// Each calls fn on every record left; nil at a clean end.
	Each(fn func(Record) error) error
	// Close releases the stream's resources.
	Close() error
}

var _ Stream = (*Reader)(nil)

// Format is a trace format other than iopred's own that the analyzer reads
// as Streams. Importer packages register theirs with RegisterFormat in
// their init function; a program that imports such a package (for its side
// effect, like image/png) reads the format wherever it reads traces.
type Format struct {
	// Name is the format's short name, as in "darshan".
	Name string
	// Suffixes are the file-name endings Discover takes from a directory.
	Suffixes []string
	// Sniff, when set, recognises the format from the first bytes of a
	// file named on the command line whatever its name.
	Sniff func(head []byte) bool
	// Processes lists the processes a file holds. A file of one process
	// returns nil or a single name; a file of several returns one short
	// name each ("r0", "pid1234"), and Discover names each process
	// "<path>#<name>".
	Processes func(path string) ([]string, error)
	// Open opens the process proc of the file at path ("" for a file of
	// one process).
	Open func(path, proc string) (Stream, error)
}

var formats struct {
	sync.RWMutex
	list []Format
}

// RegisterFormat makes Open and Discover read a format. It panics when a
// format of the same name is registered twice, a programming error.
func RegisterFormat(f Format) {
	if f.Name == "" || f.Open == nil {
		panic("tracefmt: RegisterFormat needs a name and an Open function")
	}
	formats.Lock()
	defer formats.Unlock()
	for _, g := range formats.list {
		if g.Name == f.Name {
			panic("tracefmt: format registered twice: " + f.Name)
		}
	}
	formats.list = append(formats.list, f)
}

// Formats lists the names of the registered formats.
func Formats() []string {
	var names []string
	for _, f := range registered() {
		names = append(names, f.Name)
	}
	return names
}

// FormatOf names the registered format of the file at path (its suffix,
// or its first bytes), or returns "" for an iopred trace and for a file
// no format claims. A process name ("<path>#<proc>") is that of its file.
func FormatOf(path string) (string, error) {
	if p, proc := splitProcess(path); proc != "" {
		path = p
	}
	f, ok, err := formatOf(path)
	if err != nil || !ok {
		return "", err
	}
	return f.Name, nil
}

// registered returns the registered formats.
func registered() []Format {
	formats.RLock()
	defer formats.RUnlock()
	return formats.list
}

// formatBySuffix returns the registered format whose suffix ends name.
func formatBySuffix(name string) (Format, bool) {
	for _, f := range registered() {
		for _, s := range f.Suffixes {
			if strings.HasSuffix(name, s) {
				return f, true
			}
		}
	}
	return Format{}, false
}

// sniffLen is how many leading bytes Sniff functions see.
const sniffLen = 512

// formatOf tells which format the file at path is in: its suffix first,
// then its first bytes. ok is false for iopred's own traces and for files
// no registered format claims.
func formatOf(path string) (f Format, ok bool, err error) {
	if strings.HasSuffix(path, FileSuffix) {
		return Format{}, false, nil
	}
	if f, ok := formatBySuffix(path); ok {
		return f, true, nil
	}
	var sniffers []Format
	for _, g := range registered() {
		if g.Sniff != nil {
			sniffers = append(sniffers, g)
		}
	}
	if len(sniffers) == 0 {
		return Format{}, false, nil
	}
	fd, err := os.Open(path)
	if err != nil {
		return Format{}, false, err
	}
	defer fd.Close()
	head := make([]byte, sniffLen)
	n, err := io.ReadFull(fd, head)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return Format{}, false, fmt.Errorf("%s: %w", path, err)
	}
	head = head[:n]
	if len(head) >= 4 && binary.LittleEndian.Uint32(head) == zstdMagic {
		return Format{}, false, nil
	}
	for _, g := range sniffers {
		if g.Sniff(head) {
			return g, true, nil
		}
	}
	return Format{}, false, nil
}

// splitProcess separates "<path>#<proc>" into its parts when path itself
// does not exist and the part before the last '#' does.
func splitProcess(name string) (path, proc string) {
	i := strings.LastIndexByte(name, '#')
	if i <= 0 {
		return name, ""
	}
	if _, err := os.Stat(name); err == nil {
		return name, ""
	}
	if _, err := os.Stat(name[:i]); err != nil {
		return name, ""
	}
	return name[:i], name[i+1:]
}

// Open opens a trace for reading: an iopred trace, or a process of a file
// in a registered format, named as Discover names it ("<path>#<proc>" for
// a file of several processes). Close releases it.
func Open(name string) (Stream, error) {
	path, proc := splitProcess(name)
	f, ok, err := formatOf(path)
	if err != nil {
		return nil, err
	}
	if !ok {
		if proc != "" {
			return nil, fmt.Errorf("%s: an iopred trace holds one process; %q names one of several", path, "#"+proc)
		}
		return openNative(path)
	}
	return f.Open(path, proc)
}

// openNative opens an iopred trace and reads its header.
func openNative(path string) (*Reader, error) {
	fd, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	r, err := newReader(fd, path, fd)
	if err != nil {
		fd.Close()
		return nil, err
	}
	return r, nil
}

// expand returns the names Discover lists for one file: the file, or one
// "<path>#<proc>" per process of a registered multi-process format.
func expand(path string, f Format) ([]string, error) {
	if f.Processes == nil {
		return []string{path}, nil
	}
	procs, err := f.Processes(path)
	if err != nil {
		return nil, err
	}
	if len(procs) <= 1 {
		return []string{path}, nil
	}
	out := make([]string, len(procs))
	for i, p := range procs {
		out[i] = path + "#" + p
	}
	return out, nil
}

// RecordStream is a Stream over records that an importer produces one at a
// time. It keeps the context and file tables as their records pass and
// completes each event as the iopred reader does: path from the file
// table, pid and rank from the header, layer from the operation.
type RecordStream struct {
	hdr      Header
	next     func() (Record, error)
	closer   func() error
	contexts map[uint64]Context
	files    map[uint32]File
	footer   *Footer
	err      error
}

// NewRecordStream returns a Stream of the records next yields after the
// header h. next returns io.EOF at the end, or an error (repeated by the
// stream); close, if not nil, runs once at Close.
func NewRecordStream(h Header, next func() (Record, error), close func() error) *RecordStream {
	return &RecordStream{hdr: h, next: next, closer: close,
		contexts: make(map[uint64]Context), files: make(map[uint32]File)}
}

// SliceStream returns a Stream of the records recs after the header h.
func SliceStream(h Header, recs []Record) *RecordStream {
	i := 0
	return NewRecordStream(h, func() (Record, error) {
		if i == len(recs) {
			return Record{}, io.EOF
		}
		i++
		return recs[i-1], nil
	}, nil)
}

// Header returns the stream's header.
func (s *RecordStream) Header() Header { return s.hdr }

// Contexts returns the contexts defined so far.
func (s *RecordStream) Contexts() map[uint64]Context { return s.contexts }

// Files returns the files defined so far.
func (s *RecordStream) Files() map[uint32]File { return s.files }

// Footer returns the last footer passed, or nil.
func (s *RecordStream) Footer() *Footer { return s.footer }

// Next returns the next record.
func (s *RecordStream) Next() (Record, error) {
	if s.err != nil {
		return Record{}, s.err
	}
	rec, err := s.next()
	if err != nil {
		s.err = err
		return Record{}, err
	}
	switch {
	case rec.Context != nil:
		s.contexts[rec.Context.ID] = *rec.Context
	case rec.File != nil:
		s.files[rec.File.ID] = *rec.File
	case rec.Footer != nil:
		s.footer = rec.Footer
	case rec.Counters != nil:
		if f, ok := s.files[rec.Counters.FileID]; ok {
			rec.Counters.Path = f.Path
		}
	case rec.Event != nil:
		e := rec.Event
		e.PID, e.Rank = s.hdr.PID, s.hdr.Rank
		if e.Layer == "" {
			e.Layer = LayerOf(e.Op)
		}
		if e.FileID != 0 {
			if f, ok := s.files[e.FileID]; ok {
				e.Path = f.Path
			}
		}
	}
	return rec, nil
}

// Each calls fn on every record left.
func (s *RecordStream) Each(fn func(Record) error) error {
	for {
		rec, err := s.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(rec); err != nil {
			return err
		}
	}
}

// Close runs the close function given to NewRecordStream, once.
func (s *RecordStream) Close() error {
	if s.err == nil {
		s.err = errors.New("tracefmt: stream closed")
	}
	if c := s.closer; c != nil {
		s.closer = nil
		return c()
	}
	return nil
}
