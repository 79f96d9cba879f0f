package aid

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzParseState feeds the state parser damaged state files: it must
// return a state or an error, never panic, and a state it accepts must
// survive a round trip.
func FuzzParseState(f *testing.F) {
	good := State{Version: kbVersion, StepNS: 5e9, OSTs: 4, Options: DefaultOptions(),
		Days: []Day{{Day: "2024-01-01", File: "2024-01-01.1.agg", StartNS: 1704067200e9, Cells: 17280, Known: 17000, Complete: true,
			Bursts: []Burst{{StartNS: 1704067300e9, EndNS: 1704067360e9, Peak: 2e9, Rate: 1.9e9, Bytes: 1.1e11, OSTs: 4, Refined: 1e11}}}},
		Jobs: []Run{{ID: "1", User: "ana", Name: "ckpt", Nodes: 4, StartNS: 1704067200e9, EndNS: 1704070800e9}}}
	b, _ := json.Marshal(good)
	f.Add(b)
	f.Add(bytes.Replace(b, []byte(`"cells":17280`), []byte(`"cells":-1`), 1))
	f.Add(bytes.Replace(b, []byte(`"2024-01-01.1.agg"`), []byte(`"../x"`), 1))
	f.Add(b[:len(b)/2])
	f.Add([]byte(`{"version":1,"step_ns":0,"days":[{"day":"2024-01-01"}]}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		s, err := ParseState(in)
		if err != nil {
			return
		}
		out, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ParseState(out); err != nil {
			t.Fatalf("a state ParseState accepted fails after a round trip: %v", err)
		}
	})
}

// FuzzReadMeasurements feeds the measurements reader damaged CSV: it
// returns trials or an error naming the file, never panics, and what it
// returns can be fitted.
func FuzzReadMeasurements(f *testing.F) {
	f.Add([]byte("# band_width=3e7\n# train_rate=1e8\ntrial,app,at,io_time_s,f0,f1,f2\n0,a,t,90,0.9,0.1,0\n1,a,t,120,0.5,0.3,0.2\n"))
	f.Add([]byte("io_time_s,f0,f1\n1,1,0\n2,0,1\n"))
	f.Add([]byte("io_time_s,f0\n-1,0.5\n"))
	f.Add([]byte("io_time_s,f0,f1\n1,\"0.5\n"))
	f.Add([]byte("# band_width=nan\nio_time_s,f0\n1,1\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		m, err := ReadMeasurements(bytes.NewReader(in), "m.csv")
		if err != nil {
			if !bytes.Contains([]byte(err.Error()), []byte("m.csv")) {
				t.Fatalf("error without the file name: %v", err)
			}
			return
		}
		if len(m.F) > 200 {
			return
		}
		if _, err := Fit(m); err != nil {
			t.Fatal(err)
		}
	})
}
