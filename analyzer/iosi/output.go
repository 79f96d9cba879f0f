package iosi

import (
	"iopred/analyzer/serverlog"
)

// AppJSON names an application in Output.
type AppJSON struct {
	User  string `json:"user"`
	Name  string `json:"name"`
	Nodes int    `json:"nodes"`
}

// Output is the JSON object `iopred signature --json` prints: times from
// the run's start, rates in bytes per second.
type Output struct {
	App       AppJSON   `json:"app"`
	RunsFound int       `json:"runs_found"`
	RunsUsed  int       `json:"runs_used"`
	StepS     float64   `json:"step_s"`
	TS        []float64 `json:"t_s"`
	Write     []float64 `json:"write_bytes_per_s"`
	Read      []float64 `json:"read_bytes_per_s"`
	Bursts    []Burst   `json:"bursts"`
}

// Output returns the signature of app in the JSON form.
func (s *Signature) Output(app serverlog.App) Output {
	o := Output{App: AppJSON{app.User, app.Name, app.Nodes}, RunsFound: s.RunsFound, RunsUsed: s.RunsUsed,
		StepS: s.StepS, TS: make([]float64, len(s.Write)), Write: s.Write, Read: s.Read, Bursts: s.Bursts}
	for i := range o.TS {
		o.TS[i] = float64(i) * s.StepS
	}
	if o.Bursts == nil {
		o.Bursts = []Burst{}
	}
	return o
}
