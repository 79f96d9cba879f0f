package darshan

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"testing"

	"iopred/tracefmt"
)

// FuzzRead feeds the reader arbitrary bytes, starting from small real and
// synthetic logs of every format version and byte order: it must never
// panic or hang, must return either a log or an *Error naming a region,
// and every trace of a log it returns must read to an end.
func FuzzRead(f *testing.F) {
	for _, name := range []string{"mpi-io-test-x86_64-3.0.0.darshan", "mpi-io-test-ppc64-3.1.8.darshan",
		"mpi-io-test-x86_64-3.2.1.darshan", "mpi-io-test-x86_64-3.5.0.darshan"} {
		data, err := os.ReadFile(fixture(f, name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, v := range []string{"3.00", "3.10", "3.21", "3.41"} {
		for _, bo := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
			for _, comp := range []uint8{0, 2} {
				spec, _ := synthetic(v, bo, comp, 2)
				f.Add(spec.Bytes())
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := Read(bytes.NewReader(data), int64(len(data)), "fuzz")
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Region == "" {
				t.Fatalf("error %v is not an *Error naming a region", err)
			}
		}
		if l == nil {
			if err == nil {
				t.Fatal("no log and no error")
			}
			return
		}
		v := group("fuzz", l, err)
		procs := v.procs
		if len(procs) == 0 {
			procs = []string{""}
		}
		for _, name := range procs {
			p := v.by[name]
			if p == nil {
				p = &proc{name: "r0"}
			}
			s := newStream(v, p)
			for {
				_, err := s.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					var te *tracefmt.TruncatedError
					var e *Error
					if !errors.As(err, &te) && !errors.As(err, &e) {
						t.Fatalf("trace %s ends with %v", name, err)
					}
					break
				}
			}
		}
	})
}
