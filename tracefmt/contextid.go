package tracefmt

import (
	"hash/fnv"
	"path/filepath"
	"strconv"
)

// ContextID hashes a context's frames by module name and offset, so that
// the same code path has the same id in every run of the same binaries
// wherever they are loaded. It fits in 53 bits for JSON readers and is
// never 0.
func ContextID(frames []Frame) uint64 {
	h := fnv.New64a()
	for _, f := range frames {
		h.Write([]byte(filepath.Base(f.Module)))
		h.Write([]byte{0})
		h.Write(strconv.AppendUint(nil, f.Offset, 16))
		h.Write([]byte{0})
	}
	id := h.Sum64() & (1<<53 - 1)
	if id == 0 {
		id = 1
	}
	return id
}
