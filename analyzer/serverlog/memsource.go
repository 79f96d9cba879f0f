package serverlog

import (
	"fmt"
	"slices"
	"time"
)

// ratesSource is a Source over rates in memory.
type ratesSource struct{ r *Rates }

// NewRatesSource makes rates held in memory a Source (for ImportFrom,
// and for tests and simulators that hand rates to code that takes a
// Source). Windows share memory with r.
func NewRatesSource(r *Rates) (Source, error) {
	if r.Step <= 0 || len(r.Read) != len(r.OSTs) || len(r.Write) != len(r.OSTs) {
		return nil, fmt.Errorf("rates of %d OSTs with %d read and %d write series by %v", len(r.OSTs), len(r.Read), len(r.Write), r.Step)
	}
	for i := range r.OSTs {
		if len(r.Read[i]) != r.Len() || len(r.Write[i]) != r.Len() {
			return nil, fmt.Errorf("OST %s: series of %d and %d samples, want %d", r.OSTs[i], len(r.Read[i]), len(r.Write[i]), r.Len())
		}
	}
	return ratesSource{r}, nil
}

func (s ratesSource) Span() (time.Time, time.Time, time.Duration, error) {
	return s.r.Start, s.r.End(), s.r.Step, nil
}

func (s ratesSource) OSTs() ([]string, error) { return slices.Clone(s.r.OSTs), nil }

// Window returns the samples of [from, to), clipped to the rates; zero
// times mean their edges.
func (s ratesSource) Window(from, to time.Time) (*Rates, error) {
	if from.IsZero() {
		from = s.r.Start
	}
	if to.IsZero() {
		to = s.r.End()
	}
	return s.r.Slice(from, to), nil
}

func (s ratesSource) Close() error { return nil }
