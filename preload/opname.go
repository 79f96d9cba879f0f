package main

import "iopred/tracefmt/spill"

// canonicalOp names an interposed symbol as the program's source calls it
// (spill.CanonicalOp, shared with the spill's reader).
func canonicalOp(sym string) string { return spill.CanonicalOp(sym) }
