package main

/*
#include <stdlib.h>
#include <string.h>
#include "iop.h"
*/
import "C"

import (
	"encoding/json"
	"fmt"
	"os"
	"unsafe"

	"iopred/analyzer/job"
	"iopred/tracefmt"
)

// jobBuilder condenses the process's events into its part of the job
// summary that the ranks merge at MPI_Finalize (mpiio.c, job_at_finalize).
// Only the consumer thread and callers holding the drain mutex touch it.
//
// A process is taken for an MPI rank from its first event when the
// launcher gave its rank (the trace header has it), else from its first
// MPI call: a program that never calls MPI pays nothing for the job
// summary. Offline, job.FromTraces reads the traces that carry a rank,
// from their first event, as the library did.
var jobBuilder *job.Builder

// jobHeader is the trace's header, for a builder started later.
var jobHeader tracefmt.Header

// startJob starts the builder with the trace when the rank is known.
func startJob(h tracefmt.Header) {
	jobHeader = h
	if h.Rank != nil {
		jobBuilder = job.NewBuilder(h)
	}
}

func observeJob(e *tracefmt.Event) {
	if jobBuilder == nil {
		if e.Layer != tracefmt.LayerMPIIO {
			return
		}
		jobBuilder = job.NewBuilder(jobHeader)
	}
	jobBuilder.Add(e)
}

// cBytes copies b into C memory the caller frees.
func cBytes(b []byte, out **C.char, n *C.long) C.int {
	p := C.malloc(C.size_t(max(len(b), 1)))
	if p == nil {
		return 0
	}
	C.memcpy(p, unsafe.Pointer(unsafe.SliceData(b)), C.size_t(len(b)))
	*out, *n = (*C.char)(p), C.long(len(b))
	return 1
}

// jobCurrent is this rank's partial during the finalize step: its own,
// then merged with those it receives. jobSummaryPath is where rank 0
// writes the summary, beside its trace. Only the thread in MPI_Finalize
// touches them once iopGoJobStart has set them, without the drain mutex:
// the summary's computation must not hold up the consumer.
var (
	jobCurrent     *job.Partial
	jobSummaryPath string
)

// iopGoJobStart takes this rank's partial of the job summary. It marks
// the place in the trace (job.CutOp), so that the same partial can be
// rebuilt from the trace offline. The caller holds the drain mutex, every
// pending event ingested.
//
//export iopGoJobStart
func iopGoJobStart(rank C.int) (ok C.int) {
	defer recoverInto("job summary")
	jobCurrent = nil
	if sess == nil || sess.failed || sess.w == nil {
		return 0
	}
	jobSummaryPath = job.SummaryPath(sess.f.path)
	if err := sess.w.Proc(tracefmt.Proc{Op: job.CutOp, TimeNs: int64(C.iop_now()) - sess.anchor}); err != nil {
		sess.fail(err)
		return 0
	}
	var steps uint64
	var score float64
	ran := !modelBroken && model != nil
	if ran {
		steps, score = model.ContextScore()
	}
	if jobBuilder == nil { // no MPI call recorded before MPI_Finalize: a rank without I/O
		jobBuilder = job.NewBuilder(jobHeader)
	}
	jobCurrent = jobBuilder.Partial(int(rank), ran, steps, score)
	return 1
}

// iopGoJobAbsorb merges the partial received from the ranks above this
// rank's into its own.
//
//export iopGoJobAbsorb
func iopGoJobAbsorb(b *C.char, n C.long) (ok C.int) {
	defer recoverInto("job summary merge")
	if jobCurrent == nil {
		return 0
	}
	other, err := job.Decode(C.GoBytes(unsafe.Pointer(b), C.int(n)))
	if err == nil {
		jobCurrent, err = job.Merge(jobCurrent, other)
	}
	if err != nil {
		debugf("job summary: %v", err)
		jobCurrent = nil
		return 0
	}
	return 1
}

// iopGoJobEncode returns this rank's partial, to send to the rank below.
//
//export iopGoJobEncode
func iopGoJobEncode(out **C.char, n *C.long) (ok C.int) {
	defer recoverInto("job summary")
	if jobCurrent == nil {
		return 0
	}
	b, err := jobCurrent.Encode()
	jobCurrent = nil
	if err != nil {
		debugf("job summary: %v", err)
		return 0
	}
	return cBytes(b, out, n)
}

// iopGoJobWrite turns the whole job's partial into the job summary and
// writes it beside this process's trace (rank 0 does this). enteredNs is
// when the rank entered the finalize step (CLOCK_MONOTONIC), mergeNs the
// time its merges took, received the bytes it received.
//
//export iopGoJobWrite
func iopGoJobWrite(enteredNs, mergeNs C.longlong, received C.long) (ok C.int) {
	defer recoverInto("job summary write")
	part := jobCurrent
	jobCurrent = nil
	if part == nil {
		return 0
	}
	sum := job.Summarize(part)
	anonSummary(sum)
	sum.Cost = &job.Cost{FinalizeNs: int64(C.iop_now()) - int64(enteredNs), MergeNs: int64(mergeNs), ReceivedBytes: int64(received)}
	b, err := json.MarshalIndent(sum, "", " ")
	if err == nil {
		err = writePrivate(jobSummaryPath, append(b, '\n'))
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "iopred: job summary not written: %v\n", err)
		return 0
	}
	return 1
}

// debugf reports iopred's internal trouble when IOPRED_DEBUG=1.
func debugf(format string, args ...any) {
	if os.Getenv("IOPRED_DEBUG") == "1" {
		fmt.Fprintf(os.Stderr, "iopred: "+format+"\n", args...)
	}
}
