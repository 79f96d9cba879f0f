package serverlog

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"time"
)

// Summary describes a throughput log: what `iopred serverlog info`
// prints.
type Summary struct {
	Kind    string    `json:"kind"`
	Path    string    `json:"path"`
	From    time.Time `json:"from"`
	To      time.Time `json:"to"`
	StepS   float64   `json:"step_s"`
	OSTs    []string  `json:"osts"`
	Samples int64     `json:"ost_samples"` // grid cells times OSTs
	// SizeBytes is the size on disk (a file, or a directory's files);
	// -1 for a database server.
	SizeBytes int64 `json:"size_bytes"`
	// BytesPerSample is SizeBytes per OST sample (read and write
	// together), when both are known.
	BytesPerSample float64 `json:"bytes_per_ost_sample,omitempty"`
	// For a store: its days, the bytes it holds, the sources imported.
	Days       int      `json:"days,omitempty"`
	ReadBytes  float64  `json:"read_bytes,omitempty"`
	WriteBytes float64  `json:"write_bytes,omitempty"`
	Sources    []string `json:"sources,omitempty"`
	// Resets are the counter resets the store's imports met.
	Resets []CounterReset `json:"counter_resets,omitempty"`
}

// Describe opens the log spec names and sums it up, without reading its
// samples.
func Describe(spec Spec, opts Options) (*Summary, error) {
	if spec.Kind == "" {
		k, err := DetectKind(spec.Path)
		if err != nil {
			return nil, err
		}
		spec.Kind = k
	}
	src, err := OpenSource(spec, opts)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	from, to, step, err := src.Span()
	if err != nil {
		return nil, err
	}
	osts, err := src.OSTs()
	if err != nil {
		return nil, err
	}
	s := &Summary{Kind: spec.Kind, Path: spec.Path, From: from, To: to, StepS: step.Seconds(), OSTs: osts, SizeBytes: -1}
	if IsMySQL(spec.Path) {
		_, s.Path, _ = parseMySQL(spec.Path)
	}
	s.Samples = int64(to.Sub(from)/step) * int64(len(osts))
	if st, ok := src.(*Store); ok {
		in := st.info()
		s.Days, s.ReadBytes, s.WriteBytes, s.Sources, s.Resets = in.Days, in.ReadBytes, in.WriteBytes, in.Sources, in.Resets
		s.SizeBytes, s.Samples = in.Bytes, in.Samples
	} else if !IsMySQL(spec.Path) {
		s.SizeBytes = diskSize(spec.Path)
	}
	if s.SizeBytes >= 0 && s.Samples > 0 {
		s.BytesPerSample = float64(s.SizeBytes) / float64(s.Samples)
	}
	return s, nil
}

func diskSize(path string) int64 {
	var n int64
	filepath.WalkDir(path, func(_ string, e fs.DirEntry, err error) error {
		if err == nil && e.Type().IsRegular() {
			if in, err := e.Info(); err == nil {
				n += in.Size()
			}
		}
		return nil
	})
	return n
}

// Text writes the summary for a person, times in loc.
func (s *Summary) Text(loc *time.Location) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s)\n", s.Path, s.Kind)
	fmt.Fprintf(&b, "  span   %s .. %s (%s)\n", s.From.In(loc).Format("2006-01-02 15:04:05 MST"),
		s.To.In(loc).Format("2006-01-02 15:04:05 MST"), s.To.Sub(s.From).Round(time.Second))
	fmt.Fprintf(&b, "  step   %gs\n", s.StepS)
	switch len(s.OSTs) {
	case 0:
		fmt.Fprintf(&b, "  OSTs   none\n")
	case 1:
		fmt.Fprintf(&b, "  OSTs   1 (%s)\n", s.OSTs[0])
	default:
		fmt.Fprintf(&b, "  OSTs   %d (%s .. %s)\n", len(s.OSTs), s.OSTs[0], s.OSTs[len(s.OSTs)-1])
	}
	fmt.Fprintf(&b, "  samples %d OST samples\n", s.Samples)
	if s.SizeBytes >= 0 {
		fmt.Fprintf(&b, "  size   %s", humanBytes(float64(s.SizeBytes)))
		if s.BytesPerSample > 0 {
			fmt.Fprintf(&b, " (%.2f bytes per OST sample)", s.BytesPerSample)
		}
		b.WriteByte('\n')
	}
	if s.Kind == "store" {
		fmt.Fprintf(&b, "  days   %d\n", s.Days)
		fmt.Fprintf(&b, "  moved  %s read, %s written\n", humanBytes(s.ReadBytes), humanBytes(s.WriteBytes))
		for _, src := range s.Sources {
			fmt.Fprintf(&b, "  from   %s\n", src)
		}
		osts := map[string]bool{}
		for _, r := range s.Resets {
			osts[r.OST] = true
		}
		if len(s.Resets) == 0 {
			fmt.Fprintf(&b, "  resets none\n")
		} else {
			fmt.Fprintf(&b, "  resets %d counter resets on %d OSTs\n", len(s.Resets), len(osts))
		}
		for i, r := range s.Resets {
			if i == 20 {
				fmt.Fprintf(&b, "         ... %d more\n", len(s.Resets)-i)
				break
			}
			fmt.Fprintf(&b, "         %s between %s and %s\n", r.OST, r.After.In(loc).Format("2006-01-02 15:04:05 MST"), r.Before.In(loc).Format("2006-01-02 15:04:05 MST"))
		}
	}
	return b.String()
}

func humanBytes(v float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	i := 0
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%.0f B", v)
	}
	return fmt.Sprintf("%.1f %s", v, units[i])
}

// JobsSummary describes a job log.
type JobsSummary struct {
	Path  string    `json:"path"`
	Jobs  int       `json:"jobs"`
	From  time.Time `json:"from"` // first start
	To    time.Time `json:"to"`   // last end
	Users int       `json:"users"`
	Apps  int       `json:"apps"` // distinct (user, name, nodes)
}

// DescribeJobs sums up jobs read from path.
func DescribeJobs(path string, jobs []Job) JobsSummary {
	s := JobsSummary{Path: path, Jobs: len(jobs)}
	users, apps := map[string]bool{}, map[App]bool{}
	for _, j := range jobs {
		if s.From.IsZero() || j.Start.Before(s.From) {
			s.From = j.Start
		}
		if j.End.After(s.To) {
			s.To = j.End
		}
		users[j.User] = true
		apps[j.App()] = true
	}
	s.Users, s.Apps = len(users), len(apps)
	return s
}
