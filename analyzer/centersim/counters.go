package centersim

import "iopred/analyzer/serverlog"

// CounterSink is a Sink that writes cumulative byte counters, as file
// system servers keep them: it is given the true rates of every sample
// and told which samples the monitoring lost (no row is written for
// them, but the counters go on counting), instead of rates with NaN.
type CounterSink interface {
	WriteCounters(r *serverlog.Rates, lost []bool) error
}
