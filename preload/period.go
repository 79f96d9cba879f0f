package main

/*
#include "iopred.h"
*/
import "C"

import (
	"iopred/analyzer/ftio"
	"iopred/tracefmt"
)

// periodCapacity bounds the requests each in-process periodicity
// evaluator keeps (the newest ones): about 24 bytes each.
const periodCapacity = 1 << 15

// periodModes are the request selections of iopred_period, by the C
// API's mode number.
var periodModes = map[C.int]ftio.Mode{
	C.IOPRED_PERIOD_WRITE: ftio.ModeWrite,
	C.IOPRED_PERIOD_READ:  ftio.ModeRead,
	C.IOPRED_PERIOD_BOTH:  ftio.ModeBoth,
}

// periods holds one online evaluator per mode, created on first use; the
// requests wait in a pending list until a query, so that the consumer
// thread pays only an append per data event.
var periods = map[ftio.Mode]*periodState{}

type periodState struct {
	online  *ftio.Online
	pending []pendingRequest
}

type pendingRequest struct{ start, end, bytes int64 }

func periodFor(m ftio.Mode) *periodState {
	p, ok := periods[m]
	if !ok {
		// In a process, bursts are often far shorter than FTIO's default
		// 100 ms sample interval: sample as finely as the events need,
		// within a bound that keeps each evaluation to milliseconds.
		p = &periodState{online: ftio.NewOnline(ftio.Options{Fs: -1, MaxSamples: 1 << 16}, periodCapacity)}
		periods[m] = p
	}
	return p
}

// observePeriod keeps a data event for the periodicity evaluators.
// periodFlow counts each byte of the process's I/O once (see
// tracefmt.DataFlow).
var periodFlow tracefmt.DataFlow

func observePeriod(e *tracefmt.Event) {
	dir := periodFlow.Of(e)
	if dir == tracefmt.NoData || e.Bytes <= 0 || e.EndNs <= e.StartNs {
		return
	}
	req := pendingRequest{e.StartNs, e.EndNs, e.Bytes}
	if periodBoth == nil {
		periodBoth, periodWrite, periodRead = periodFor(ftio.ModeBoth), periodFor(ftio.ModeWrite), periodFor(ftio.ModeRead)
	}
	if dir == tracefmt.Write {
		periodWrite.add(req)
	} else {
		periodRead.add(req)
	}
	periodBoth.add(req)
}

// The evaluators observePeriod feeds, looked up once.
var periodBoth, periodWrite, periodRead *periodState

func (p *periodState) add(req pendingRequest) {
	if len(p.pending) >= periodCapacity {
		p.pending = append(p.pending[:0], p.pending[periodCapacity/4:]...)
	}
	p.pending = append(p.pending, req)
}

//export iopGoPeriod
func iopGoPeriod(out *C.struct_iopred_period_result, mode C.int) (found C.int) {
	defer recoverInto("period")
	m, ok := periodModes[mode]
	if !ok {
		return -1
	}
	p := periodFor(m)
	for _, r := range p.pending {
		p.online.Add(r.start, r.end, r.bytes, m == ftio.ModeWrite)
	}
	p.pending = p.pending[:0]
	res, err := p.online.Evaluate()
	*out = C.struct_iopred_period_result{}
	out.n_samples = C.int(res.NSamples)
	out.t_start = C.double(res.TStart)
	out.t_end = C.double(res.TEnd)
	out.window_s = C.double(p.online.Window())
	out.found_in_a_row = C.int(p.online.Found())
	if err != nil || res.PeriodS == nil || res.FreqHz == nil {
		return 0
	}
	out.found = 1
	out.period_s = C.double(*res.PeriodS)
	out.freq_hz = C.double(*res.FreqHz)
	out.confidence = C.double(res.Confidence)
	return 1
}
