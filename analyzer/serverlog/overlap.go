package serverlog

import (
	"fmt"
	"time"
)

// CheckOverlap returns an error naming both spans when no job of the job
// log ran while the throughput log has samples: runs matched to rates
// would then find none, and a result of "0 runs" would hide that the two
// logs were of different times. srcName and jobsName name the logs.
func CheckOverlap(src Source, srcName string, jobs []Job, jobsName string) error {
	from, to, _, err := src.Span()
	if err != nil {
		return err
	}
	if len(jobs) == 0 {
		return fmt.Errorf("%s: no job that ran and ended", jobsName)
	}
	jf, jt := jobs[0].Start, jobs[0].End
	for _, j := range jobs {
		if j.Start.Before(jf) {
			jf = j.Start
		}
		if j.End.After(jt) {
			jt = j.End
		}
		if j.Start.Before(to) && j.End.After(from) {
			return nil
		}
	}
	const layout = "2006-01-02 15:04:05 MST"
	return fmt.Errorf("the logs do not overlap in time: %s holds jobs from %s to %s (%d jobs), %s holds rates from %s to %s",
		jobsName, jf.UTC().Format(layout), jt.UTC().Format(layout), len(jobs), srcName, from.UTC().Format(layout), to.UTC().Format(layout))
}

// Clip returns a Source that shows only [from, to) of src, to the
// sample: its span is cut there, and its windows too. Zero times leave
// that side open. Closing it closes src.
func Clip(src Source, from, to time.Time) Source {
	return &clipped{Source: src, from: from, to: to}
}

type clipped struct {
	Source
	from, to time.Time
}

func (c *clipped) Span() (time.Time, time.Time, time.Duration, error) {
	f, t, step, err := c.Source.Span()
	if err != nil {
		return f, t, step, err
	}
	if !c.from.IsZero() && c.from.After(f) {
		st := int64(step)
		f = time.Unix(0, floorDiv(c.from.UnixNano(), st)*st)
	}
	if !c.to.IsZero() && c.to.Before(t) {
		t = c.to
	}
	if t.Before(f) {
		t = f
	}
	return f, t, step, nil
}

func (c *clipped) Window(from, to time.Time) (*Rates, error) {
	f, t, _, err := c.Span()
	if err != nil {
		return nil, err
	}
	if from.IsZero() || from.Before(f) {
		from = f
	}
	if to.IsZero() || to.After(t) {
		to = t
	}
	if to.Before(from) {
		to = from
	}
	return c.Source.Window(from, to)
}
