package predict

import (
	"fmt"
	"path/filepath"
	"testing"

	"iopred/analyzer/ftio"
	"iopred/tests/testenv"
)

// fio with a periodic job (bursts of 16 writes of 64 KiB, then a 400 ms
// think time), traced by the library: FTIO on the trace finds the
// configured period within 2%, and the predictor's offsets are at least
// as good as the contiguous baseline. The bursts last tens of microseconds, so
// the sampling frequency comes from the trace (FTIO's 10 Hz would miss
// them, which the result's SampledVolume shows).
func TestFioThinktime(t *testing.T) {
	fio := testenv.Tool(t, "fio")
	traces := t.TempDir()
	const think = 0.4
	args := []string{"--thread", "--name=periodic", "--filename=" + filepath.Join(t.TempDir(), "periodic.dat"),
		"--rw=write", "--bs=64k", "--size=64m", "--time_based", "--runtime=4", "--ioengine=psync",
		fmt.Sprintf("--thinktime=%d", int(think*1e6)), "--thinktime_blocks=16", "--output-format=terse"}
	if res := testenv.Traced(t, traces, nil, "", fio, args...); res.Code != 0 {
		t.Fatalf("fio: %+v", res)
	}
	testenv.CheckPeriod(t, traces, ftio.Options{Fs: -1, MaxSamples: 1 << 20}, think, 0.02)
	at10, err := ftio.AnalyzeFiles([]string{traces}, ftio.ModeWrite, ftio.Options{Fs: 10})
	if err != nil {
		t.Fatal(err)
	}
	if v := at10.SampledVolume; v > 0.5 && v < 2 {
		t.Errorf("at 10 Hz the samples stand for %.3g of the bytes; expected the undersampling to show", v)
	}
	checkOffsets(t, programTrace(t, traces, "fio"), 0)
}
