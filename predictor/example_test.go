package predictor_test

import (
	"bytes"
	"fmt"

	"iopred/predictor"
	"iopred/tracefmt"
)

// loop returns n iterations of a program that writes a 16-byte header and
// a 4 KiB record to out.dat, one after the other, 1 ms apart.
func loop(n int) []*tracefmt.Event {
	var events []*tracefmt.Event
	var off, now int64
	for i := 0; i < n; i++ {
		for _, w := range []struct {
			ctx  uint64
			size int64
		}{{1, 16}, {2, 4096}} {
			now += 1_000_000
			events = append(events, &tracefmt.Event{
				Op: "pwrite", Path: "out.dat", FileID: 1, Ctx: w.ctx,
				Offset: off, Size: w.size, Ret: w.size, Bytes: w.size,
				StartNs: now, EndNs: now + 1000,
			})
			off += w.size
			now += 1000
		}
	}
	return events
}

// A model fed with the events of a program predicts its next operations.
func ExampleModel() {
	m := predictor.New(predictor.Options{})
	for _, e := range loop(5) {
		m.Observe(e)
	}
	for _, p := range m.Predict(2) {
		fmt.Printf("%s %s offset %d size %d in %v\n", p.Op, p.Path, p.Offset, p.Size, p.Delay)
	}
	// Output:
	// pwrite out.dat offset 20560 size 16 in 1ms
	// pwrite out.dat offset 20576 size 4096 in 2.001ms
}

// A model saved at the end of one run predicts the next run from its first
// operation.
func ExampleLoad() {
	m := predictor.New(predictor.Options{})
	for _, e := range loop(5) {
		m.Observe(e)
	}
	var saved bytes.Buffer
	if err := m.Save(&saved); err != nil {
		fmt.Println(err)
		return
	}
	next, err := predictor.Load(&saved)
	if err != nil {
		fmt.Println(err)
		return
	}
	p := next.Predict(1)[0]
	fmt.Printf("first operation: %s %s offset %d size %d\n", p.Op, p.Path, p.Offset, p.Size)
	// Output:
	// first operation: pwrite out.dat offset 0 size 16
}

// Phase tells how many operations remain in the current burst of I/O.
func ExampleModel_Phase() {
	m := predictor.New(predictor.Options{})
	now := int64(0)
	for burst := 0; burst < 4; burst++ {
		now += 2_000_000_000 // 2 s of computation between bursts
		for i := 0; i < 5; i++ {
			m.Observe(&tracefmt.Event{Op: "write", Path: "log", Ctx: uint64(10 + i),
				Offset: int64(burst*5+i) * 100, Size: 100, Ret: 100, Bytes: 100,
				StartNs: now, EndNs: now + 1000})
			now += 2000
			if burst == 3 && i == 1 {
				left, ok := m.Phase()
				fmt.Println(left, ok)
			}
		}
	}
	// Output:
	// 3 true
}
