package main

/*
#include "iop.h"
*/
import "C"

import (
	"iopred/tracefmt"
	"iopred/tracefmt/spill"
)

// canonicalOp names an interposed symbol as the program's source calls it
// (spill.CanonicalOp, shared with the spill's reader).
func canonicalOp(sym string) string { return spill.CanonicalOp(sym) }

// interposedCall is one call the library interposes: its symbol, and the
// layer its wrapper files it under.
type interposedCall struct {
	symbol string
	layer  tracefmt.Layer
}

// interposedCalls lists every call the wrappers record.
func interposedCalls() []interposedCall {
	layers := map[C.int]tracefmt.Layer{C.IOP_POSIX: tracefmt.LayerPOSIX, C.IOP_STDIO: tracefmt.LayerStdio, C.IOP_MPIIO: tracefmt.LayerMPIIO}
	var out []interposedCall
	for op := C.int(1); op < C.IOP_OP_MAX; op++ {
		if name := C.GoString(C.iop_op_name(op)); name != "" {
			out = append(out, interposedCall{name, layers[C.iop_op_layer(op)]})
		}
	}
	return out
}
