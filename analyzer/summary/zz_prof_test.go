package summary

import (
	"os"
	"testing"

	"iopred/tracefmt"
)

func TestZZProf(t *testing.T) {
	dir := os.Getenv("ZZDIR")
	if dir == "" {
		t.Skip()
	}
	traces, _ := tracefmt.Discover(dir)
	if _, err := Summarize(traces, Options{Top: 10}); err != nil {
		t.Fatal(err)
	}
}
