package patterns

import (
	"testing"
)

// FuzzDecodeShare: another rank's patterns, however mangled, are refused
// with an error or combine into a report; they never panic.
func FuzzDecodeShare(f *testing.F) {
	f.Add([]byte{0x84, 0xa1, 'f', 0x00, 0xa1, 'p', 0x90, 0xa1, 'e', 0x90, 0xa1, 's', 0x90})
	f.Fuzz(func(t *testing.T, b []byte) {
		sh, err := DecodeShare(b)
		if err != nil || sh.first != 0 {
			return
		}
		Combine(make([]string, len(sh.procs)), []*Share{sh})
	})
}
