package periodcorpus

import "iopred/analyzer/job"

// significancePValue is the p-value of the period's significance test
// (nil when none ran).
func significancePValue(p *job.Period) *float64 {
	if p.Significance == nil {
		return nil
	}
	return &p.Significance.PValue
}
