package iosi

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"iopred/analyzer/serverlog"
)

func TestDiagDrift(t *testing.T) {
	seed, _ := strconv.ParseUint(os.Getenv("DIAG_SEED"), 10, 64)
	if seed == 0 {
		t.Skip()
	}
	want := os.Getenv("DIAG_APP")
	sim := simulateDrift(t, seed, 128)
	for _, a := range sim.truth.Apps {
		if a.Signature == nil || (want != "" && !strings.Contains(a.App.Name, want)) {
			continue
		}
		app := serverlog.App{User: a.App.User, Name: a.App.Name, Nodes: a.App.Nodes}
		var samples []Sample
		truthRef := ""
		for _, j := range Runs(sim.jobs, app, time.Time{}, time.Time{}) {
			if s, ok := sim.log.Sample(j); ok {
				samples = append(samples, s)
			}
			r := sim.records[j.ID]
			if len(r.Bursts) > 0 && r.Bursts[0].StartS == a.Signature.Bursts[0].StartS {
				truthRef = j.ID
			}
		}
		o := Default()
		o.BurstAlign = true
		sig, _ := Extract(samples, o)
		sc := Compare(sig, truthOf(a))
		fmt.Printf("== %s truth ref %s, chosen %s; xcorr %.3f corr %.3f vol %.1f%% missed %d invented %d\n", app, truthRef, sig.Reference, sc.XCorr, sc.Corr, 100*sc.VolumeErr, sc.Missed, sc.Invented)
		fmt.Printf("truth:")
		for _, b := range a.Signature.Bursts {
			fmt.Printf(" [%.0f-%.0f %.3g]", b.StartS, b.EndS, b.WriteBytes+b.ReadBytes)
		}
		fmt.Printf("\nsig:  ")
		for _, b := range sig.Bursts {
			fmt.Printf(" [%.0f-%.0f %.3g]", b.StartS, b.EndS, b.WriteBytes+b.ReadBytes)
		}
		fmt.Println()
		o.Trim = false
		p, err := preprocess(samples, o)
		if err != nil {
			fmt.Println(err)
			continue
		}
		ds := make([]detrended, len(p.t))
		for i := range p.t {
			ds[i] = detrend(p.t[i], p.stepS)
		}
		thr := segmentThreshold(ds)
		fmt.Printf("threshold %.3g, dropped %v\n", thr, p.dropped)
		for i := range p.t {
			r := sim.records[p.ids[i]]
			fmt.Printf(" run %s len %.0f s noise %.3g:", p.ids[i], float64(len(p.t[i]))*p.stepS, ds[i].noise)
			for _, s := range findSegments(ds[i], thr, p.stepS) {
				fmt.Printf(" [%.0f-%.0f %.3g]", float64(s.lo)*p.stepS, float64(s.hi)*p.stepS, s.vol)
			}
			fmt.Printf("\n     true:")
			for _, b := range r.Bursts {
				fmt.Printf(" [%.0f-%.0f %.3g]", b.StartS, b.EndS, b.WriteBytes+b.ReadBytes)
			}
			fmt.Println()
		}
	}
}
