package main

/*
#include <stdlib.h>
#include "iop.h"
#include "iopred.h"
*/
import "C"

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
	"unsafe"

	"iopred/predictor"
	"iopred/tracefmt"
)

// The model is created on first need, apart from the trace: a program can
// ask for predictions from a saved model before it has done any I/O.
var model *predictor.Model

// modelBroken is set when the model failed, or when IOPRED_PREDICT=0
// turned it off: the trace goes on without it.
var modelBroken = !predictionsWanted()

// predictionsWanted reads IOPRED_PREDICT: 1 (the default) runs the model
// in the process, 0 only records the trace.
func predictionsWanted() bool {
	switch v := os.Getenv("IOPRED_PREDICT"); v {
	case "", "1":
		return true
	case "0":
		return false
	default:
		fmt.Fprintf(os.Stderr, "iopred: IOPRED_PREDICT=%s is not 0 or 1; using 1\n", v)
		return true
	}
}

// observe feeds the model, which must never cost the trace: a failure of
// the model turns predictions off and says so, once.
func observe(e *tracefmt.Event) {
	if modelBroken {
		return
	}
	m := model
	if m == nil {
		m = getModel()
	}
	// recover is called only when Observe did not return: called on
	// every event, it cost the consumer about 25 instructions each.
	returned := false
	defer func() {
		if !returned {
			modelFailed(recover())
		}
	}()
	m.Observe(e)
	returned = true
}

// modelFailed turns predictions off after the model panicked with r.
func modelFailed(r any) {
	modelBroken = true
	fmt.Fprintf(os.Stderr, "iopred: predictions stopped: internal error in the model: %v\n", r)
	if os.Getenv("IOPRED_DEBUG") == "1" {
		os.Stderr.Write(debug.Stack())
	}
}

// modelPath is IOPRED_MODEL: the model to load at start and save at exit.
func modelPath() string { return os.Getenv("IOPRED_MODEL") }

func getModel() *predictor.Model {
	if model != nil {
		return model
	}
	if p := modelPath(); p != "" {
		b, err := readPrivate(p)
		switch {
		case err == nil:
			m, err := predictor.Load(bytes.NewReader(b))
			if err == nil {
				model = m
				return model
			}
			fmt.Fprintf(os.Stderr, "iopred: IOPRED_MODEL=%s: %v; starting a new model\n", p, err)
		case errors.Is(err, syscall.ELOOP):
			// Saving replaces the link by the model (never its target).
			fmt.Fprintf(os.Stderr, "iopred: IOPRED_MODEL=%s is a symbolic link, not followed; starting a new model\n", p)
		case !errors.Is(err, os.ErrNotExist):
			fmt.Fprintf(os.Stderr, "iopred: IOPRED_MODEL: %v; starting a new model\n", err)
		}
	}
	model = predictor.New(predictor.Options{})
	return model
}

// saveModel writes the model where IOPRED_MODEL says, atomically, so that
// concurrent runs never leave a torn file.
func saveModel() error {
	p := modelPath()
	if p == "" || model == nil {
		return nil
	}
	var buf bytes.Buffer
	if modelBroken {
		return nil
	}
	if err := model.Save(&buf); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), dirMode()); err != nil {
		return err
	}
	return writePrivate(p, buf.Bytes())
}

// readPrivate reads a whole file through a descriptor of iopred's own.
func readPrivate(path string) ([]byte, error) {
	f, err := openPrivateFile(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// modelSummary is what the trace's footer says of the model, or nothing
// when it did not run.
func modelSummary() map[string]any {
	if modelBroken || model == nil {
		return nil
	}
	return model.Summary()
}

// opKinds maps a call to the C API's enum iopred_op.
func opKind(op string) C.int {
	switch {
	case tracefmt.IsRead(op):
		return C.IOPRED_OP_READ
	case tracefmt.IsWrite(op):
		return C.IOPRED_OP_WRITE
	case strings.Contains(op, "open") || strings.HasPrefix(op, "creat"):
		return C.IOPRED_OP_OPEN
	case strings.Contains(op, "close"):
		return C.IOPRED_OP_CLOSE
	case strings.Contains(op, "seek") || strings.HasPrefix(op, "ftell") || op == "rewind":
		return C.IOPRED_OP_SEEK
	case strings.Contains(op, "sync") || op == "fflush":
		return C.IOPRED_OP_SYNC
	case strings.Contains(op, "stat") || strings.Contains(op, "truncate") || strings.HasPrefix(op, "unlink") || strings.HasPrefix(op, "rename"):
		return C.IOPRED_OP_META
	}
	return C.IOPRED_OP_OTHER
}

// cStrings keeps the C copies of call names for the process's lifetime.
var cStrings = map[string]*C.char{}

func cString(s string) *C.char {
	p, ok := cStrings[s]
	if !ok {
		p = C.CString(s)
		cStrings[s] = p
	}
	return p
}

//export iopGoPredict
func iopGoPredict(out *C.struct_iopred_prediction, max C.int) (n C.int) {
	defer recoverInto("predict")
	if modelBroken {
		return 0
	}
	preds := getModel().Predict(int(max))
	dst := unsafe.Slice(out, int(max))
	for i, p := range preds {
		if i >= len(dst) {
			break
		}
		d := &dst[i]
		d.op = opKind(p.Op)
		d.fd = -1
		d.path = nil
		if cpath, err := goCString(p.Path); p.Path != "" && err == nil {
			if id := C.iop_file_lookup(cpath); id != 0 {
				d.fd = C.int(C.iop_file_fd(id))
				d.path = C.iop_file_path(id)
			}
		}
		d.offset = C.longlong(p.Offset)
		d.size = C.longlong(p.Size)
		d.delay_s = C.double(p.Delay.Seconds())
		d.probability = C.double(p.Probability)
		d.call = cString(p.Op)
		d.ctx = C.ulonglong(p.Ctx)
		d.fallback = C.uint(p.Fallback)
		n++
	}
	return n
}

// The header's fallback bits are the predictor's Field bits: a build fails
// here when they drift apart (an array length cannot be negative).
var (
	_ [C.IOPRED_FROM_NEXT_CONTEXT - int(predictor.FieldContext)]struct{}
	_ [int(predictor.FieldContext) - C.IOPRED_FROM_NEXT_CONTEXT]struct{}
	_ [C.IOPRED_FROM_PREVIOUS_FILE - int(predictor.FieldFile)]struct{}
	_ [int(predictor.FieldFile) - C.IOPRED_FROM_PREVIOUS_FILE]struct{}
	_ [C.IOPRED_FROM_CONTIGUOUS - int(predictor.FieldOffset)]struct{}
	_ [int(predictor.FieldOffset) - C.IOPRED_FROM_CONTIGUOUS]struct{}
	_ [C.IOPRED_FROM_LAST_SIZE - int(predictor.FieldSize)]struct{}
	_ [int(predictor.FieldSize) - C.IOPRED_FROM_LAST_SIZE]struct{}
	_ [C.IOPRED_FROM_LAST_GAP - int(predictor.FieldDelay)]struct{}
	_ [int(predictor.FieldDelay) - C.IOPRED_FROM_LAST_GAP]struct{}
)
