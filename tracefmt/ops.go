package tracefmt

import (
	"math"
	"strings"
)

// LayerOf names the interface an operation belongs to: the stdio calls
// (fopen, fwrite, fprintf, ...) are LayerStdio, the MPI_File_* calls are
// LayerMPIIO, everything else is LayerPOSIX.
func LayerOf(op string) Layer {
	if strings.HasPrefix(op, "MPI_") {
		return LayerMPIIO
	}
	switch op {
	case "fopen", "fopen64", "fdopen", "freopen", "freopen64", "fclose", "fflush",
		"fread", "fwrite", "fputs", "fputc", "putc", "fprintf", "vfprintf", "fgets", "fgetc", "getc",
		"fscanf", "vfscanf", "fseek", "fseeko", "fseeko64", "ftell", "ftello", "ftello64", "rewind":
		return LayerStdio
	}
	return LayerPOSIX
}

// IsData reports whether op moves file data: every call that IsRead or
// IsWrite accepts.
func IsData(op string) bool {
	return IsRead(op) || IsWrite(op)
}

// IsRead reports whether op reads file data. copy_file_range counts as a
// read: its event names the input file (the output file is in Aux).
func IsRead(op string) bool {
	switch op {
	case "read", "pread", "pread64", "readv", "preadv", "preadv64", "preadv2",
		"copy_file_range", "fread", "fgets", "fgetc", "getc", "fscanf", "vfscanf":
		return true
	}
	return strings.HasPrefix(op, "MPI_File_read") || strings.HasPrefix(op, "MPI_File_iread")
}

// CopyTarget returns the id of the file a copy_file_range event wrote
// into: the event names the file it read, and Aux the written file's id
// (0 for a descriptor iopred did not see opened, such as a pipe).
func CopyTarget(e *Event) (uint32, bool) {
	if e.Op != "copy_file_range" || e.Aux <= 0 || e.Aux > math.MaxUint32 {
		return 0, false
	}
	return uint32(e.Aux), true
}

// IsWrite reports whether op writes file data.
func IsWrite(op string) bool {
	switch op {
	case "write", "pwrite", "pwrite64", "writev", "pwritev", "pwritev64", "pwritev2",
		"fwrite", "fputs", "fputc", "putc", "fprintf", "vfprintf":
		return true
	}
	return strings.HasPrefix(op, "MPI_File_write") || strings.HasPrefix(op, "MPI_File_iwrite")
}

// IsCollective reports whether op is an MPI call that every process of
// the communicator makes together: the _all, _ordered and split-collective
// data calls, and opening, closing, sizing, syncing, views and the shared
// file pointer's seek, plus MPI_Init, MPI_Init_thread and MPI_Finalize.
func IsCollective(op string) bool {
	if !strings.HasPrefix(op, "MPI_") {
		return false
	}
	switch op {
	case "MPI_File_open", "MPI_File_close", "MPI_File_set_size", "MPI_File_preallocate",
		"MPI_File_set_view", "MPI_File_sync", "MPI_File_seek_shared",
		"MPI_Init", "MPI_Init_thread", "MPI_Finalize":
		return true
	}
	return strings.Contains(op, "_all") || strings.Contains(op, "_ordered")
}

// IsMPIStart reports whether op starts the MPI runtime (MPI_Init,
// MPI_Init_thread), and IsMPIEnd whether it shuts it down (MPI_Finalize):
// their time is the runtime's start-up and shut-down, not I/O.
func IsMPIStart(op string) bool { return op == "MPI_Init" || op == "MPI_Init_thread" }

// IsMPIEnd reports whether op shuts the MPI runtime down (MPI_Finalize).
func IsMPIEnd(op string) bool { return op == "MPI_Finalize" }
