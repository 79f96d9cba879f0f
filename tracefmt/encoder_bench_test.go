package tracefmt

import (
	"fmt"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// callLoopFrame returns one full frame's JSON lines (DefaultFrameBytes) of
// what preload/bench's calls.c "mixed" loop records: pwrite of 4 KiB at
// offsets cycling over 256 blocks, then write of 1 byte appending, about
// 1.4 us apart, from one context each.
func callLoopFrame(tb testing.TB) []byte {
	w, err := NewWriter(&countingWriter{}, testHeader(), WriterOptions{FrameBytes: MaxFrameData / 2})
	if err != nil {
		tb.Fatal(err)
	}
	for _, c := range []Context{{ID: 21, Frames: []Frame{{Module: "/bin/calls", Offset: 0x1180, Function: "main"}}},
		{ID: 22, Frames: []Frame{{Module: "/bin/calls", Offset: 0x11c0, Function: "main"}}}} {
		if err := w.Context(c); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.File(File{ID: 1, Path: "/dev/shm/iopred-bench"}); err != nil {
		tb.Fatal(err)
	}
	now := int64(1_000_000)
	for i := 0; len(w.buf) < DefaultFrameBytes; i++ {
		e := Event{Op: "pwrite", FileID: 1, Offset: int64(i%256) * 4096, Size: 4096, Ret: 4096, Bytes: 4096,
			StartNs: now, EndNs: now + 900 + int64(i%7)*13, Tid: 4242, Ctx: 21}
		if i >= 6000 {
			e = Event{Op: "write", FileID: 1, Offset: int64(i), Size: 1, Ret: 1, Bytes: 1,
				StartNs: now, EndNs: now + 600 + int64(i%5)*11, Tid: 4242, Ctx: 22}
		}
		if err := w.Event(&e); err != nil {
			tb.Fatal(err)
		}
		now += 1400 + int64(i%3)*17
	}
	return append([]byte(nil), w.buf...)
}

// loopFrame returns one full frame's JSON lines of the synthetic loop
// workload (loopRecords: writes, pwrites, seeks and reads with jittered
// times, from four contexts).
func loopFrame(tb testing.TB) []byte {
	w, err := NewWriter(&countingWriter{}, testHeader(), WriterOptions{FrameBytes: MaxFrameData / 2})
	if err != nil {
		tb.Fatal(err)
	}
	for _, e := range loopEvents(tb, w, 100_000) {
		if len(w.buf) >= DefaultFrameBytes {
			break
		}
		if err := w.Event(e); err != nil {
			tb.Fatal(err)
		}
	}
	return append([]byte(nil), w.buf...)
}

// BenchmarkFrameEncoder compresses one full frame of records (the call
// loop's, and the synthetic loop workload's) with the writer's encoder
// options (default) and with zstd options that trade size or checking for
// speed, and reports each one's compressed size per event line (its time
// is ns/op; callgrind counts its instructions repeatably); every
// variant's output is decoded and compared with its input.
//
// Issue 25 measured them with callgrind (instructions per 1 MiB frame,
// the difference of 25 and 5 frames; GOGC=off, GOMAXPROCS=1 and
// GODEBUG=asyncpreemptoff=1,cpu.rdtscp=off under valgrind). Call loop:
// default 16.19 M (1.269 bytes/event), nocrc 15.40 M, window64k 15.30 M
// (1.218), window128k 16.13 M, noentropy 14.79 M (2.939 bytes/event).
// Loop workload: default 23.39 M (6.597 bytes/event), nocrc 22.65 M,
// window128k 23.88 M (6.653), window64k 24.85 M (6.840), noentropy
// 22.40 M (7.501). None is worth its price: the checksum is the trace's
// integrity check, a smaller window loses size and time on the varied
// workload, and literals without entropy coding more than double the
// calls' trace. newEncoder keeps its options.
func BenchmarkFrameEncoder(b *testing.B) {
	for _, f := range []struct {
		name  string
		frame []byte
	}{{"calls", callLoopFrame(b)}, {"loop", loopFrame(b)}} {
		b.Run(f.name, func(b *testing.B) { benchEncoderOptions(b, f.frame) })
	}
}

func benchEncoderOptions(b *testing.B, frame []byte) {
	lines := 0
	for _, c := range frame {
		if c == '\n' {
			lines++
		}
	}
	const window = 256 << 10
	base := []zstd.EOption{zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1),
		zstd.WithZeroFrames(false), zstd.WithLowerEncoderMem(true)}
	for _, v := range []struct {
		name string
		opts []zstd.EOption
	}{
		{"default", []zstd.EOption{zstd.WithEncoderCRC(true), zstd.WithWindowSize(window)}},
		{"nocrc", []zstd.EOption{zstd.WithEncoderCRC(false), zstd.WithWindowSize(window)}},
		{"noentropy", []zstd.EOption{zstd.WithEncoderCRC(true), zstd.WithWindowSize(window), zstd.WithNoEntropyCompression(true)}},
		{"window64k", []zstd.EOption{zstd.WithEncoderCRC(true), zstd.WithWindowSize(64 << 10)}},
		{"window128k", []zstd.EOption{zstd.WithEncoderCRC(true), zstd.WithWindowSize(128 << 10)}},
		{"window1m", []zstd.EOption{zstd.WithEncoderCRC(true), zstd.WithWindowSize(1 << 20)}},
		{"blocks", []zstd.EOption{zstd.WithEncoderCRC(true), zstd.WithWindowSize(window), zstd.WithAllLitEntropyCompression(false)}},
	} {
		b.Run(v.name, func(b *testing.B) {
			enc, err := zstd.NewWriter(nil, append(append([]zstd.EOption(nil), base...), v.opts...)...)
			if err != nil {
				b.Fatal(err)
			}
			out := enc.EncodeAll(frame, nil)
			dec, err := newDecoder()
			if err != nil {
				b.Fatal(err)
			}
			back, err := dec.DecodeAll(out, nil)
			if err != nil || string(back) != string(frame) {
				b.Fatal(fmt.Errorf("round trip: %v", err))
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				out = enc.EncodeAll(frame, out[:0])
			}
			b.StopTimer()
			b.ReportMetric(float64(len(out))/float64(lines), "bytes/event")
		})
	}
}
