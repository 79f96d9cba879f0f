package serverlog_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"iopred/analyzer/serverlog"
	"iopred/tests/interop"
)

// Open a production LMT database and print the file system's aggregate
// write rate over its first half-minute.
func ExampleOpenSource() {
	path := filepath.Join(interop.Dir(), "lmt", "snx11025_2018-01-28.sqlite3")
	src, err := serverlog.OpenSource(serverlog.Spec{Path: path}, serverlog.Options{TZ: time.UTC})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer src.Close()
	from, to, step, _ := src.Span()
	fmt.Println(from.Format(time.DateTime), "to", to.Format(time.DateTime), "by", step)
	r, err := src.Window(from, from.Add(30*time.Second))
	if err != nil {
		fmt.Println(err)
		return
	}
	_, write := r.Aggregate()
	for t, w := range write {
		fmt.Printf("%s %6.1f MB/s\n", r.Time(t).Format(time.TimeOnly), w/1e6)
	}
	// Output:
	// 2018-01-28 00:00:00 to 2018-01-28 00:05:00 by 5s
	// 00:00:00    7.8 MB/s
	// 00:00:05    9.8 MB/s
	// 00:00:10   10.7 MB/s
	// 00:00:15  400.0 MB/s
	// 00:00:20  385.7 MB/s
	// 00:00:25  325.5 MB/s
}

// Write a small LMT database from rates, as the center simulator does,
// and read it back.
func ExampleCreateLMT() {
	dir, _ := os.MkdirTemp("", "lmt")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "fs.sqlite3")
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	rates := &serverlog.Rates{Start: start, Step: 5 * time.Second, OSTs: []string{"fs-OST0000", "fs-OST0001"},
		Read:  [][]float64{{0, 0, 1e6}, {0, 0, 0}},
		Write: [][]float64{{2e6, 4e6, 0}, {1e6, 1e6, 1e6}}}
	w, err := serverlog.CreateLMT(path, rates.OSTs, serverlog.LMTWriterOptions{TZ: time.UTC})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := w.Write(rates); err != nil {
		fmt.Println(err)
		return
	}
	w.Close()
	src, err := serverlog.OpenLMT(path, serverlog.Options{TZ: time.UTC})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer src.Close()
	r, _ := src.Window(time.Time{}, time.Time{})
	fmt.Println(r.OSTs, r.Write[0], r.Read[0])
	// Output:
	// [fs-OST0000 fs-OST0001] [2e+06 4e+06 0] [0 0 1e+06]
}

// Read a sacct --parsable2 dump: job steps are folded into their job and
// the pending job is left out.
func ExampleReadSacct() {
	log := `JobIDRaw|User|JobName|NNodes|Start|End|State
7|alice|s3d|128|2018-01-28T00:00:05|2018-01-28T01:00:05|COMPLETED
7.batch||batch|1|2018-01-28T00:00:05|2018-01-28T01:00:05|COMPLETED
8|bob|vpic|64|2018-01-28T00:20:00|2018-01-28T00:25:00|CANCELLED by 1234
9|bob|vpic|64|Unknown|Unknown|PENDING
`
	jobs, err := serverlog.ReadSacct(strings.NewReader(log), "sacct.txt", serverlog.Options{TZ: time.UTC})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, j := range jobs {
		fmt.Println(j.ID, j.App(), j.Duration(), j.State)
	}
	// Output:
	// 7 alice/s3d/128 1h0m0s COMPLETED
	// 8 bob/vpic/64 5m0s CANCELLED
}

// Write jobs as sacct prints them, for readers and tests.
func ExampleWriteSacct() {
	start := time.Date(2024, 1, 1, 8, 0, 0, 0, time.UTC)
	jobs := []serverlog.Job{{ID: "42", User: "alice", Name: "ior", Nodes: 4, Start: start,
		End: start.Add(90 * time.Minute), State: "COMPLETED", Limit: 2 * time.Hour}}
	serverlog.WriteSacct(os.Stdout, jobs, serverlog.SacctWriterOptions{TZ: time.UTC})
	// Output:
	// JobID|JobIDRaw|User|JobName|NNodes|Submit|Start|End|Elapsed|Timelimit|State
	// 42|42|alice|ior|4|Unknown|2024-01-01T08:00:00|2024-01-01T09:30:00|01:30:00|02:00:00|COMPLETED
}

// Keep a log in a local store, then read a window of it back: the store
// serves the same rates as the log, and importing it again changes
// nothing.
func ExampleImport() {
	dir, _ := os.MkdirTemp("", "store")
	defer os.RemoveAll(dir)
	lmt := filepath.Join(interop.Dir(), "lmt", "snx11025_2018-01-28.sqlite3")
	opts := serverlog.Options{TZ: time.UTC}
	stats, err := serverlog.Import(context.Background(), dir, []serverlog.Spec{{Kind: "lmt", Path: lmt}}, opts, serverlog.ImportOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(stats.Days, "day,", stats.Known, "OST samples")
	st, err := serverlog.OpenStore(dir, opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()
	from, _, _, _ := st.Span()
	r, _ := st.Window(from.Add(15*time.Second), from.Add(25*time.Second))
	_, write := r.Aggregate()
	fmt.Printf("%s %.1f MB/s, %.1f MB/s\n", r.Start.Format(time.TimeOnly), write[0]/1e6, write[1]/1e6)
	// Output:
	// 1 day, 1440 OST samples
	// 00:00:15 400.0 MB/s, 385.7 MB/s
}
