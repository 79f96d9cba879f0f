// A dynamically linked Go program (cgo): under LD_PRELOAD=libiopred.so it
// must run as without it, and iopred must stay out of its way.
package main

// #include <stdlib.h>
import "C"

import (
	"fmt"
	"os"
	"unsafe"
)

func main() {
	p := C.malloc(16)
	C.free(unsafe.Pointer(p))
	path := os.Args[1]
	if err := os.WriteFile(path, []byte("written by Go\n"), 0o644); err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	b, err := os.ReadFile(path)
	fmt.Printf("%s%v\n", b, err)
}
