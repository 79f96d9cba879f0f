package ftio

import (
	"fmt"
	"io"
	"sort"
)

// WriteText prints a result for people.
func WriteText(w io.Writer, res Result) error {
	ew := &errWriter{w: w}
	for _, n := range res.Notes {
		ew.printf("note: %s\n", n)
	}
	ew.printf("samples: %d at %.6g Hz over [%.6g s, %.6g s]\n", res.NSamples, res.Fs, res.TStart, res.TEnd)
	if res.SampledVolume < 0.5 || res.SampledVolume > 2 {
		ew.printf("warning: the samples stand for %.3g times the bytes moved: I/O phases are short against 1/fs, so the signal misrepresents them; try --average (each sample the mean bandwidth over its interval) or --fs 0 (chosen from the trace)\n", res.SampledVolume)
	}
	sig := res.Significance
	if res.Detector != "" {
		ew.printf("outlier detector: %s, %d outlying bins (harmonics excluded)\n", res.Detector, res.Outliers)
	}
	switch {
	case res.PeriodS == nil && res.Detector != "":
		ew.printf("no period found (%s; %d candidates)\n", res.Verdict, len(res.Candidates))
	case res.PeriodS == nil:
		ew.printf("no period found (%s; %d candidates, %d outliers with z > 3)\n", res.Verdict, len(res.Candidates), res.Outliers)
	case sig != nil:
		ew.printf("period: %.6g s (%.6g Hz), verdict %s; FTIO's confidence %.4f (FTIO's verdict %s)\n", *res.PeriodS, *res.FreqHz, res.Verdict, res.Confidence, res.FTIOVerdict)
	default:
		ew.printf("period: %.6g s (%.6g Hz), confidence %.4f (%s)\n", *res.PeriodS, *res.FreqHz, res.Confidence, res.Verdict)
	}
	if sig != nil {
		if b := sig.BurstTest; sig.Method == "bursts" {
			rhythm := "no rhythm"
			switch b.Rhythm {
			case "clock":
				rhythm = "the starts keep a phase"
			case "intervals":
				rhythm = "the intervals are alike"
			}
			ew.printf("significance: p = %.3g against %d surrogates (the signal's %d bursts, busy %.1f%% of the time, placed at random times): %s at %.6g s (phase coherence %.2f, p = %.3g; interval spread %.2f, p = %.3g; local interval %.4g to %.4g s)",
				sig.PValue, sig.Surrogates, b.Bursts, 100*b.DutyCycle, rhythm, sig.PeriodS, b.Coherence, b.CoherencePValue, b.Spread, b.SpreadPValue, b.TempoS[0], b.TempoS[1])
		} else {
			ew.printf("significance: p = %.3g against %d surrogates (the signal's %d bursts at random times, %d samples)", sig.PValue, sig.Surrogates, sig.Bursts, sig.Samples)
			if sig.PeriodS > 0 {
				ew.printf("; its strongest line is at %.6g s (%.3g of the power)", sig.PeriodS, sig.Share)
			}
		}
		if sig.Autocorrelation != nil {
			ew.printf(", autocorrelation there %.3f", *sig.Autocorrelation)
		}
		if res.FTIOPeriodS != nil {
			ew.printf("; FTIO's period %.6g s, confidence %.4f (FTIO's verdict %s)", *res.FTIOPeriodS, res.Confidence, res.FTIOVerdict)
		}
		if sig.Reason != "" {
			ew.printf("; %s", sig.Reason)
		}
		ew.printf("\n")
	}
	if len(res.Phases) > 0 {
		ew.printf("the period changes: %d phases\n", len(res.Phases))
		for _, p := range res.Phases {
			if p.Tempo {
				ew.printf("  phase [%.6g s, %.6g s]: period %.6g s (the local tempo of %d bursts)\n", p.StartS, p.EndS, p.PeriodS, p.Bursts)
				continue
			}
			ew.printf("  phase [%.6g s, %.6g s]: period %.6g s (%d windows agree, p = %.3g)\n", p.StartS, p.EndS, p.PeriodS, p.Windows, p.PValue)
		}
	}
	for _, c := range res.Candidates {
		ew.printf("  candidate %.6g Hz  period %.6g s  z %.3f  confidence %.4f\n", c.FreqHz, c.PeriodS, c.Z, c.Confidence)
	}
	ew.printf("rpde %.4f  spectral flatness %.4g", res.RPDE, res.SpectralFlatness)
	if res.Correlation != nil {
		ew.printf("  correlation with the dominant cosine %.4f", *res.Correlation)
	}
	ew.printf("\n")
	if len(res.PeriodCorrelation) > 0 {
		s := append([]float64(nil), res.PeriodCorrelation...)
		sort.Float64s(s)
		ew.printf("per-period correlation: %d windows, min %.3f median %.3f max %.3f\n", len(s), s[0], s[len(s)/2], s[len(s)-1])
	}
	if res.RIO != nil {
		ew.printf("R_IO %.4f  B_IO %.4g B/s  volume per period %.4g B (median of the periods; FTIO's B_IO·R_IO/f %.4g B)\n", *res.RIO, *res.BIO, *res.VolumePerPeriod, *res.FTIOVolumePerPeriod)
	}
	if res.SigmaVol != nil {
		ew.printf("sigma_vol %.4f  sigma_time %.4f  periodicity score %.4f\n", *res.SigmaVol, *res.SigmaTime, *res.PeriodicityScore)
	}
	return ew.err
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}
