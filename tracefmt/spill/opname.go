package spill

import "strings"

// CanonicalOp names an interposed symbol as the program's source calls
// it: the fortified, C99 and pre-2.33 glibc entry points (__read_chk,
// __isoc99_fscanf, __open_2, __xstat64) are what a compiler emits for
// read, fscanf, open and stat64.
func CanonicalOp(sym string) string {
	// fread_unlocked is fread without the stream's lock, and
	// __fread_unlocked_chk its fortified form: both are fread.
	sym = strings.Replace(sym, "_unlocked", "", 1)
	switch {
	case strings.HasPrefix(sym, "__isoc99_"):
		return strings.TrimPrefix(sym, "__isoc99_")
	case strings.HasPrefix(sym, "__") && strings.HasSuffix(sym, "_chk"):
		return strings.TrimSuffix(strings.TrimPrefix(sym, "__"), "_chk")
	case strings.HasPrefix(sym, "__") && strings.HasSuffix(sym, "_2"):
		return strings.TrimSuffix(strings.TrimPrefix(sym, "__"), "_2")
	}
	if old, ok := legacyStat[sym]; ok {
		return old
	}
	return sym
}

var legacyStat = map[string]string{
	"__xstat": "stat", "__xstat64": "stat64",
	"__lxstat": "lstat", "__lxstat64": "lstat64",
	"__fxstat": "fstat", "__fxstat64": "fstat64",
	"__fxstatat": "fstatat", "__fxstatat64": "fstatat64",
}
