package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"iopred/tests/interop"
	"iopred/tracefmt"
)

func ftioExamples(t testing.TB) string { return interop.Path(t, "ftio") }

// TestPeriodJSONContract proves `iopred period --json` prints one object
// with the documented fields, FTIO's answer on its 8-rank example, and
// null period fields when there is none.
func TestPeriodJSONContract(t *testing.T) {
	dir := ftioExamples(t)
	var out, errb bytes.Buffer
	if code := runMain([]string{"period", "--json", filepath.Join(dir, "tmio-8ranks.jsonl")}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var got map[string]any
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if got["signal"] != "ftio" {
		t.Errorf("signal %v on FTIO's input, want ftio", got["signal"])
	}
	for _, k := range []string{"freq_hz", "period_s", "confidence", "n_samples", "t_start", "t_end", "fs", "candidates", "rpde", "spectral_flatness", "sigma_vol", "sigma_time", "r_io", "b_io", "volume_per_period", "periodicity_score"} {
		if _, ok := got[k]; !ok {
			t.Errorf("field %s missing", k)
		}
	}
	if f, _ := got["freq_hz"].(float64); math.Abs(f-0.519031) > 1e-6 || got["n_samples"].(float64) != 289 {
		t.Errorf("freq %v N %v, want 0.519031 and 289", got["freq_hz"], got["n_samples"])
	}
	cands, _ := got["candidates"].([]any)
	if len(cands) != 1 {
		t.Fatalf("candidates %v", got["candidates"])
	}
	for _, k := range []string{"freq_hz", "period_s", "confidence", "z"} {
		if _, ok := cands[0].(map[string]any)[k]; !ok {
			t.Errorf("candidate field %s missing", k)
		}
	}

	// A steady trace has no period: both fields are null.
	flat := filepath.Join(t.TempDir(), "flat.json")
	os.WriteFile(flat, []byte(`{"write_sync":{"bandwidth":{"b_rank_avr":[5],"t_rank_s":[0],"t_rank_e":[60]}}}`), 0o644)
	out.Reset()
	if code := runMain([]string{"period", "--json", flat}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	got = nil
	json.Unmarshal(out.Bytes(), &got)
	if v, ok := got["freq_hz"]; !ok || v != nil || got["period_s"] != nil {
		t.Errorf("flat trace: freq_hz %v period_s %v, want null", got["freq_hz"], got["period_s"])
	}
}

// TestPeriodOnlineAndPlot proves --online prints one JSON object per
// prediction and --plot writes each format.
func TestPeriodOnlineAndPlot(t *testing.T) {
	dir := ftioExamples(t)
	var out, errb bytes.Buffer
	if code := runMain([]string{"period", "--online", "--json", filepath.Join(dir, "tmio-8ranks.jsonl")}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	lines := 0
	sc := bufio.NewScanner(&out)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var obj map[string]any
		if err := json.Unmarshal(sc.Bytes(), &obj); err != nil {
			t.Fatalf("line %d: %v", lines+1, err)
		}
		if _, ok := obj["freq_hz"]; !ok {
			t.Fatalf("line %d lacks freq_hz", lines+1)
		}
		lines++
	}
	if lines < 2 {
		t.Errorf("%d online predictions, want several", lines)
	}
	tmp := t.TempDir()
	for _, ext := range []string{".svg", ".png", ".html"} {
		p := filepath.Join(tmp, "plot"+ext)
		out.Reset()
		if code := runMain([]string{"period", "--plot", p, filepath.Join(dir, "custom-4ranks.json")}, &out, &errb); code != 0 {
			t.Fatalf("%s: exit %d: %s", ext, code, errb.String())
		}
		b, err := os.ReadFile(p)
		if err != nil || len(b) < 1000 {
			t.Errorf("%s: %d bytes, %v", ext, len(b), err)
		}
		if ext == ".html" && !strings.Contains(string(b), "<svg") {
			t.Error("html page does not embed the svg")
		}
	}
}

// TestPeriodBadInput proves bad input ends with an error naming the file
// and line rather than a crash.
func TestPeriodBadInput(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	os.WriteFile(bad, []byte(`{"write_sync":{"bandwidth":{"b_rank_avr":[1],"t_rank_s":[0],"t_rank_e":[1]}}}`+"\n{oops\n"), 0o644)
	var out, errb bytes.Buffer
	if code := runMain([]string{"period", bad}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "bad.jsonl:2") {
		t.Errorf("exit %d, stderr %q", code, errb.String())
	}
}

// synthTraces generates the traces of 4 processes of 15 periodic
// iterations and returns their directory and the generator's mean
// iteration length.
func synthTraces(t *testing.T) (string, float64) {
	t.Helper()
	dir := t.TempDir()
	var out, errb bytes.Buffer
	if code := runMain([]string{"synth", "-o", dir, "--procs", "4", "--iterations", "15", "--compute", "6", "--delay", "0.05"}, &out, &errb); code != 0 {
		t.Fatalf("synth exit %d: %s", code, errb.String())
	}
	var mean float64
	if i := strings.Index(out.String(), "(the period to find) "); i >= 0 {
		json.Unmarshal([]byte(strings.Fields(out.String()[i+len("(the period to find) "):])[0]), &mean)
	}
	return dir, mean
}

// TestSynthToPeriod proves a generated trace set, read back through the
// iopred trace reader, gives the generator's mean iteration length.
func TestSynthToPeriod(t *testing.T) {
	dir, mean := synthTraces(t)
	var out, errb bytes.Buffer
	if code := runMain([]string{"period", "--json", dir}, &out, &errb); code != 0 {
		t.Fatalf("period exit %d: %s", code, errb.String())
	}
	var got struct {
		PeriodS *float64 `json:"period_s"`
	}
	json.Unmarshal(out.Bytes(), &got)
	if mean == 0 || got.PeriodS == nil || math.Abs(*got.PeriodS-mean)/mean > 0.05 {
		t.Errorf("period %v, generated mean iteration %g", got.PeriodS, mean)
	}
}

// TestPeriodPerProcess proves --per-process gives one result per trace of
// a generated set, each finding the common period.
func TestPeriodPerProcess(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	if code := runMain([]string{"synth", "-o", dir, "--procs", "3", "--iterations", "12", "--compute", "4"}, &out, &errb); code != 0 {
		t.Fatalf("synth exit %d: %s", code, errb.String())
	}
	out.Reset()
	if code := runMain([]string{"period", "--per-process", "--json", dir}, &out, &errb); code != 0 {
		t.Fatalf("period exit %d: %s", code, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d results, want 3:\n%s", len(lines), out.String())
	}
	for _, l := range lines {
		var got struct {
			File    string   `json:"file"`
			PeriodS *float64 `json:"period_s"`
		}
		if err := json.Unmarshal([]byte(l), &got); err != nil {
			t.Fatal(err)
		}
		// 4 s of compute and 20 x 1 MiB at 100 MB/s: about 4.21 s.
		if got.File == "" || got.PeriodS == nil || math.Abs(*got.PeriodS-4.21) > 0.2 {
			t.Errorf("%s: period %v", got.File, got.PeriodS)
		}
	}
}

// TestPeriodJob proves `period --job` on a job's traces gives the period
// the job summary holds (iopred summary prints the same), and that it is
// the generator's mean iteration length.
func TestPeriodJob(t *testing.T) {
	dir, mean := synthTraces(t)
	var out, errb bytes.Buffer
	if code := runMain([]string{"period", "--job", "--json", dir}, &out, &errb); code != 0 {
		t.Fatalf("period --job exit %d: %s", code, errb.String())
	}
	var got struct {
		Signal   string   `json:"signal"`
		PeriodS  *float64 `json:"period_s"`
		Agreeing int      `json:"resolutions_agreeing"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.Signal != "job" {
		t.Errorf("signal %q, want job", got.Signal)
	}
	if mean == 0 || got.PeriodS == nil || math.Abs(*got.PeriodS-mean)/mean > 0.05 {
		t.Fatalf("job period %v, generated mean iteration %g", got.PeriodS, mean)
	}
	out.Reset()
	if code := runMain([]string{"summary", "--json", dir}, &out, &errb); code != 0 {
		t.Fatalf("summary exit %d: %s", code, errb.String())
	}
	var sum struct {
		Job struct {
			Ranks  int `json:"ranks"`
			Period struct {
				Write struct {
					PeriodS *float64 `json:"period_s"`
				} `json:"write"`
			} `json:"period"`
		} `json:"job"`
	}
	if err := json.Unmarshal(out.Bytes(), &sum); err != nil {
		t.Fatal(err)
	}
	if p := sum.Job.Period.Write.PeriodS; sum.Job.Ranks != 4 || p == nil || *p != *got.PeriodS {
		t.Errorf("summary's job: %d ranks, period %v; period --job: %v", sum.Job.Ranks, p, *got.PeriodS)
	}
}

// TestPeriodDefaultSignal proves the default picks the signal by input:
// on iopred traces the job's (the same answer as --signal job, its first
// lines naming the signal and the job's start as a date, times since
// then), on FTIO's inputs FTIO's 10 Hz sampling with FTIO's answer; an
// FTIO sampling option on iopred traces asks for FTIO's sampling.
func TestPeriodDefaultSignal(t *testing.T) {
	dir, _ := synthTraces(t)
	run := func(args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		if code := runMain(append([]string{"period"}, args...), &out, &errb); code != 0 {
			t.Fatalf("period %v: exit %d: %s", args, code, errb.String())
		}
		return out.String()
	}
	def, job := run(dir), run("--signal", "job", dir)
	if def != job {
		t.Errorf("default on iopred traces:\n%s\n--signal job:\n%s", def, job)
	}
	lines := strings.Split(def, "\n")
	if len(lines) < 3 || !strings.HasPrefix(lines[0], "signal: the job's writes: 4 processes'") ||
		!strings.HasPrefix(lines[1], "job start: 19") || !strings.HasPrefix(lines[2], "samples: ") || strings.Contains(lines[2], "e+09") {
		t.Errorf("default output starts:\n%s", strings.Join(lines[:min(3, len(lines))], "\n"))
	}
	if out := run("--fs", "10", dir); !strings.HasPrefix(out, "signal: FTIO's sampling of the requests: the bandwidth at instants 0.1 s apart, 10 Hz (FTIO's default)\njob start: 19") {
		t.Errorf("--fs 10 on iopred traces:\n%s", out)
	}
	out := run(filepath.Join(ftioExamples(t), "tmio-8ranks.jsonl"))
	if !strings.HasPrefix(out, "signal: FTIO's sampling of the requests: the bandwidth at instants 0.1 s apart, 10 Hz (FTIO's default)\nsamples: 289 at 10 Hz") ||
		!strings.Contains(out, "period: 1.92667 s (0.519031 Hz)") {
		t.Errorf("default on FTIO's example:\n%s", out)
	}
}

// TestPeriodPastLateStart proves the default finds a period that starts
// late: a process reads its input for 0.4 s, computes until 2.5 s, then
// writes a checkpoint of 8 MiB every 0.3 s (with up to 10 ms of jitter)
// 30 times. The start-up's volume dwarfs a checkpoint's and the
// checkpoints fill less than three quarters of the span; the period is
// 0.3 s within one frequency bin.
func TestPeriodPastLateStart(t *testing.T) {
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "sim.host.7"+tracefmt.FileSuffix))
	if err != nil {
		t.Fatal(err)
	}
	w, err := tracefmt.NewWriter(f, tracefmt.Header{Program: "/bin/sim", Host: "host", PID: 7, StartUnixNs: 1_795_000_000_000_000_000}, tracefmt.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w.File(tracefmt.File{ID: 1, Path: "/in.dat"})
	w.File(tracefmt.File{ID: 2, Path: "/ckpt.dat"})
	rng := rand.New(rand.NewPCG(1, 2))
	for i := int64(0); i < 200; i++ {
		at := i * 2_000_000
		w.Event(&tracefmt.Event{Op: "pread", FileID: 1, Offset: i << 18, Size: 1 << 18, Ret: 1 << 18, Bytes: 1 << 18, StartNs: at, EndNs: at + 1_500_000})
	}
	var off int64
	for k := int64(0); k < 30; k++ {
		at := 2_500_000_000 + k*300_000_000 + rng.Int64N(10_000_000)
		for j := int64(0); j < 8; j++ {
			w.Event(&tracefmt.Event{Op: "pwrite", FileID: 2, Offset: off, Size: 1 << 20, Ret: 1 << 20, Bytes: 1 << 20, StartNs: at, EndNs: at + 2_000_000})
			at += 2_000_000
			off += 1 << 20
		}
	}
	if err := w.Close(tracefmt.Footer{Reason: "exit"}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	var out, errb bytes.Buffer
	if code := runMain([]string{"period", "--mode", "both", "--json", dir}, &out, &errb); code != 0 {
		t.Fatalf("period exit %d: %s", code, errb.String())
	}
	var got struct {
		Signal  string   `json:"signal"`
		PeriodS *float64 `json:"period_s"`
		TStart  float64  `json:"t_start"`
		TEnd    float64  `json:"t_end"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.Signal != "job" || got.PeriodS == nil || got.TEnd-got.TStart < 9 {
		t.Fatalf("signal %q, period %v: %s", got.Signal, got.PeriodS, out.String())
	}
	if span := got.TEnd - got.TStart; math.Abs(1 / *got.PeriodS - 1/0.3)*span > 1 {
		t.Errorf("period %.4f s, want 0.3 s within one bin (%.4g Hz)", *got.PeriodS, 1/span)
	}
	t.Logf("period %.5f s over %.3f s", *got.PeriodS, got.TEnd-got.TStart)
}

// TestPeriodOutlier proves --outlier reaches FTIO's detectors (and selects
// FTIO's sampling on iopred traces, as other FTIO options do), that the
// JSON names the detector, and that a wrong name, or a detector with the
// job's signal, is an error that says so.
func TestPeriodOutlier(t *testing.T) {
	example := filepath.Join(ftioExamples(t), "tmio-8ranks.jsonl")
	run := func(args ...string) (string, string, int) {
		var out, errb bytes.Buffer
		code := runMain(append([]string{"period"}, args...), &out, &errb)
		return out.String(), errb.String(), code
	}
	out, errs, code := run("--outlier", "peaks", example)
	if code != 0 || !strings.Contains(out, "outlier detector: peaks") || !strings.Contains(out, "period: 1.92667 s") {
		t.Errorf("--outlier peaks: exit %d\n%s%s", code, out, errs)
	}
	out, errs, code = run("--outlier", "dbscan", "--json", example)
	var res struct {
		Detector string   `json:"outlier_detector"`
		PeriodS  *float64 `json:"period_s"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || res.Detector != "dbscan" || res.PeriodS != nil {
		t.Errorf("--outlier dbscan --json (FTIO: too many dominant frequencies): exit %d %+v\n%s%s", code, res, out, errs)
	}
	if def, _, _ := run(example); strings.Contains(def, "outlier detector") {
		t.Errorf("the default names a detector:\n%s", def)
	}
	if _, errs, code = run("--outlier", "knee", example); code == 0 || !strings.Contains(errs, `"knee"`) {
		t.Errorf("--outlier knee: exit %d, stderr %q", code, errs)
	}
	dir, _ := synthTraces(t)
	if _, errs, code = run("--signal", "job", "--outlier", "lof", dir); code == 0 || !strings.Contains(errs, "--outlier") {
		t.Errorf("--signal job --outlier lof: exit %d, stderr %q", code, errs)
	}
	if out, errs, code = run("--outlier", "lof", dir); code != 0 || !strings.Contains(out, "signal: FTIO's sampling") {
		t.Errorf("--outlier lof on iopred traces: exit %d\n%s%s", code, out, errs)
	}
}

// TestPeriodAutocorrelation proves --autocorrelation prints FTIO's merged
// prediction on its example (FTIO v0.0.9 prints 1.9267 s at 89.25%) in
// text and JSON, and is refused with the job's signal.
func TestPeriodAutocorrelation(t *testing.T) {
	example := filepath.Join(ftioExamples(t), "tmio-8ranks.jsonl")
	run := func(args ...string) (string, string, int) {
		var out, errb bytes.Buffer
		code := runMain(append([]string{"period"}, args...), &out, &errb)
		return out.String(), errb.String(), code
	}
	out, errs, code := run("--autocorrelation", example)
	if code != 0 || !strings.Contains(out, "merged with the DFT as FTIO does (merged): period 1.92667 s, confidence 0.8925") {
		t.Errorf("--autocorrelation: exit %d\n%s%s", code, out, errs)
	}
	out, errs, code = run("--autocorrelation", "--json", example)
	var res struct {
		Merged *struct {
			PeriodS    *float64 `json:"period_s"`
			Confidence float64  `json:"confidence"`
			Auto       struct {
				PeriodS *float64 `json:"period_s"`
			} `json:"autocorrelation"`
		} `json:"autocorrelation_merge"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || res.Merged == nil || res.Merged.PeriodS == nil ||
		math.Abs(*res.Merged.PeriodS-1.9267) > 1e-4 || math.Abs(res.Merged.Confidence-0.8925) > 1e-4 || res.Merged.Auto.PeriodS == nil {
		t.Errorf("--autocorrelation --json: exit %d\n%s%s", code, out, errs)
	}
	if def, _, _ := run("--json", example); strings.Contains(def, "autocorrelation_merge") {
		t.Errorf("the default merges:\n%s", def)
	}
	dir, _ := synthTraces(t)
	if _, errs, code = run("--signal", "job", "--autocorrelation", dir); code == 0 || !strings.Contains(errs, "--autocorrelation") {
		t.Errorf("--signal job --autocorrelation: exit %d, stderr %q", code, errs)
	}
}
