package ftio

import (
	"bufio"
	"encoding/json"
	"io"
)

// exportChunk is how many requests one JSON line of an export holds, as
// TMIO flushes its online trace in lines (FTIO concatenates the arrays of
// one mode's lines).
const exportChunk = 100000

// ExportStats counts what WriteJSONLines wrote.
type ExportStats struct {
	Reads, Writes int
	Lines         int
}

// WriteJSONLines writes the requests of the traces (iopred traces and
// FTIO inputs, the system's and MPI runtime's paths left out as
// FileSources does) as FTIO's JSON lines input (TMIO's online format,
// tracefmt/FTIO.md): lines of one mode each, read_sync or write_sync,
// with the arrays t_rank_s, t_rank_e and b_rank_avr under bandwidth.
// Times are seconds since the earliest trace's start. A request without
// duration has no bandwidth, and FTIO's sampling would give it no
// volume: it is left out.
func WriteJSONLines(w io.Writer, paths []string) (ExportStats, error) {
	var st ExportStats
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	for _, m := range []struct {
		mode  Mode
		name  string
		count *int
	}{{ModeRead, "read_sync", &st.Reads}, {ModeWrite, "write_sync", &st.Writes}} {
		srcs, err := FileSources(paths, m.mode, nil)
		if err != nil {
			return st, err
		}
		type bandwidth struct {
			Avr   []float64 `json:"b_rank_avr"`
			Start []float64 `json:"t_rank_s"`
			End   []float64 `json:"t_rank_e"`
		}
		// FTIO's reader (v0.0.9) casts number_of_ranks to an integer
		// and fails on a line without it.
		type modeRecord struct {
			TotalBytes    float64   `json:"total_bytes"`
			NumberOfRanks int       `json:"number_of_ranks"`
			Bandwidth     bandwidth `json:"bandwidth"`
		}
		var b bandwidth
		var bytes float64
		flush := func() error {
			if len(b.Avr) == 0 {
				return nil
			}
			st.Lines++
			err := enc.Encode(map[string]modeRecord{m.name: {TotalBytes: bytes, NumberOfRanks: max(1, len(srcs)), Bandwidth: b}})
			b, bytes = bandwidth{}, 0
			return err
		}
		for _, src := range srcs {
			err := src(func(r Request) error {
				if r.End <= r.Start {
					// Bandwidth is 0 here (requestOf): the bytes are unknown
					// to the request; leave it out.
					return nil
				}
				b.Avr, b.Start, b.End = append(b.Avr, r.Bandwidth), append(b.Start, r.Start), append(b.End, r.End)
				bytes += r.Bandwidth * (r.End - r.Start)
				*m.count++
				if len(b.Avr) == exportChunk {
					return flush()
				}
				return nil
			})
			if err != nil {
				return st, err
			}
		}
		if err := flush(); err != nil {
			return st, err
		}
	}
	return st, bw.Flush()
}
