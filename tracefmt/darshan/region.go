package darshan

import (
	"bufio"
	"compress/bzip2"
	"errors"
	"fmt"
	"io"

	// klauspost's inflate reads Darshan's regions about twice as fast as
	// the standard library's, with the same streams and errors.
	"github.com/klauspost/compress/zlib"
)

// region returns the decompressed content of the n bytes at off. A region
// that runs past the end of the file yields what the file holds, then
// errCut.
func (l *Log) region(r io.ReaderAt, off, n uint64) io.Reader {
	size := uint64(l.Size)
	avail, cut := n, false
	switch {
	case off >= size:
		avail, cut = 0, true
	case n > size-off:
		avail, cut = size-off, true
	}
	var in io.Reader = io.NewSectionReader(r, int64(off), int64(avail))
	if cut {
		in = io.MultiReader(in, errorReader{errCut})
	}
	switch l.Compression {
	case Zlib:
		return &zlibChain{br: bufio.NewReaderSize(in, 64<<10)}
	case Bzip2:
		// compress/bzip2 reads concatenated streams on its own.
		return bzip2.NewReader(bufio.NewReaderSize(in, 64<<10))
	}
	return in
}

type errorReader struct{ err error }

func (e errorReader) Read([]byte) (int, error) { return 0, e.err }

// zlibChain reads the zlib streams of a region one after another: each
// rank compressed its part of a module on its own, and the parts were
// written side by side.
type zlibChain struct {
	br      *bufio.Reader // a ByteReader, so that flate reads no byte past a stream's end
	z       io.ReadCloser
	open    bool // z is inside a stream
	streams int
}

func (c *zlibChain) Read(p []byte) (int, error) {
	for {
		if !c.open {
			if _, err := c.br.Peek(1); err != nil {
				return 0, err // io.EOF after the last stream, or the cut
			}
			var err error
			if c.z == nil {
				c.z, err = zlib.NewReader(c.br)
			} else {
				err = c.z.(zlib.Resetter).Reset(c.br, nil)
			}
			if err != nil {
				return 0, fmt.Errorf("zlib stream %d: %w", c.streams+1, err)
			}
			c.open = true
			c.streams++
		}
		n, err := c.z.Read(p)
		if err == io.EOF {
			c.open = false
			if n > 0 {
				return n, nil
			}
			continue
		}
		if err != nil && !errors.Is(err, errCut) {
			err = fmt.Errorf("zlib stream %d: %w", c.streams, err)
		}
		return n, err
	}
}

// errPartial marks a region whose data ends inside a record.
var errPartial = errors.New("the region's data ends inside a record")

// readFull fills buf from r. It returns io.EOF when r ends before the
// first byte, errPartial when it ends inside buf, and r's other errors.
func readFull(r io.Reader, buf []byte) error {
	got := 0
	for got < len(buf) {
		n, err := r.Read(buf[got:])
		got += n
		if err == io.EOF {
			if got == 0 {
				return io.EOF
			}
			if got < len(buf) {
				return errPartial
			}
			return nil
		}
		if err != nil {
			return err
		}
	}
	return nil
}
