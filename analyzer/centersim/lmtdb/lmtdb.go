// Package lmtdb writes the simulator's per-OST log as an LMT database in
// SQLite, the form the server-log readers take. It is its own package so
// that the simulator itself does not link the SQLite engine.
package lmtdb

import (
	"database/sql"
	"errors"
	"fmt"
	"math"
	"time"

	"iopred/analyzer/centersim"
	"iopred/analyzer/serverlog"
	"iopred/internal/safefile"

	_ "modernc.org/sqlite" // the LMT database is SQLite
)

// counters turns rates into cumulative byte counters per OST, exact to
// the byte over any number of samples.
type counters struct {
	read, write []float64
}

func newCounters(n int) *counters {
	c := &counters{read: make([]float64, n), write: make([]float64, n)}
	for i := range n {
		// Servers have been counting for a while: counters start high.
		c.read[i], c.write[i] = float64(i+1)*1e12, float64(i+1)*3e12
	}
	return c
}

func (c *counters) add(i int, r, w, step float64) {
	c.read[i] += r * step
	c.write[i] += w * step
}

// Writer writes an LMT database (the schema of LMT's MySQL tables, in
// SQLite): OST_INFO names the OSTs, TIMESTAMP_INFO the sample times
// ("YYYY-MM-DD HH:MM:SS" in the writer's zone), OST_DATA each OST's
// cumulative READ_BYTES and WRITE_BYTES at each time. The first
// timestamp holds the counters at the start; the rate of sample k is the
// difference between timestamps k+1 and k. With Aggregate, the file holds
// one pseudo-OST, "<fs>-total", the sum of all: the aggregate log IOSI
// reads, one row per timestamp.
type Writer struct {
	path      string
	file      *safefile.File // the database under its temporary name until Close
	db        *sql.DB
	tx        *sql.Tx
	stmt      *sql.Stmt
	tsStmt    *sql.Stmt
	loc       *time.Location
	aggregate bool
	n         int
	c         *counters
	ts        int64
	rows      int
	started   bool
}

var _ centersim.CounterSink = (*Writer)(nil)

// Create creates an LMT database at path (replacing any file there)
// for the OSTs of a file system.
func Create(path, fs string, osts []string, aggregate bool, loc *time.Location) (*Writer, error) {
	// The database is built under a temporary name of our own and renamed
	// into place at Close: nothing planted at path is opened.
	f, err := safefile.Create(path, 0o666)
	if err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite", f.TempPath())
	if err != nil {
		f.Close()
		return nil, err
	}
	db.SetMaxOpenConns(1)
	w := &Writer{path: path, file: f, db: db, loc: loc, aggregate: aggregate, n: len(osts)}
	names := osts
	if aggregate {
		names = []string{fs + "-total"}
	}
	w.c = newCounters(len(names))
	stmts := []string{
		"PRAGMA journal_mode=OFF", "PRAGMA synchronous=OFF",
		"CREATE TABLE FILESYSTEM_INFO (FILESYSTEM_ID, FILESYSTEM_NAME, FILESYSTEM_MOUNT_NAME, SCHEMA_VERSION, PRIMARY KEY(FILESYSTEM_ID))",
		"CREATE TABLE OSS_INFO (OSS_ID, FILESYSTEM_ID, HOSTNAME, FAILOVERHOST, PRIMARY KEY(OSS_ID, HOSTNAME))",
		"CREATE TABLE OST_INFO (OST_ID, OSS_ID, OST_NAME, HOSTNAME, OFFLINE, DEVICE_NAME, PRIMARY KEY(OST_ID))",
		"CREATE TABLE TIMESTAMP_INFO (TS_ID, TIMESTAMP, PRIMARY KEY(TS_ID))",
		"CREATE TABLE OST_DATA (OST_ID, TS_ID, READ_BYTES, WRITE_BYTES, PCT_CPU, KBYTES_FREE, KBYTES_USED, INODES_FREE, INODES_USED, PRIMARY KEY(OST_ID, TS_ID))",
	}
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			db.Close()
			f.Close()
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	if _, err := db.Exec("INSERT INTO FILESYSTEM_INFO VALUES (1, ?, ?, '1.0')", fs, "/"+fs); err != nil {
		db.Close()
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for i, name := range names {
		oss := i/4 + 1 // four OSTs per server
		host := fmt.Sprintf("%s-oss%03d", fs, oss)
		if _, err := db.Exec("INSERT OR IGNORE INTO OSS_INFO VALUES (?, 1, ?, '')", oss, host); err != nil {
			db.Close()
			f.Close()
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if _, err := db.Exec("INSERT INTO OST_INFO VALUES (?, ?, ?, ?, 0, ?)", i+1, oss, name, host, fmt.Sprintf("/dev/md%d", i%4)); err != nil {
			db.Close()
			f.Close()
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	if err := w.begin(); err != nil {
		db.Close()
		f.Close()
		return nil, err
	}
	return w, nil
}

func (w *Writer) begin() error {
	tx, err := w.db.Begin()
	if err != nil {
		return fmt.Errorf("%s: %w", w.path, err)
	}
	w.tx = tx
	if w.stmt, err = tx.Prepare("INSERT INTO OST_DATA (OST_ID, TS_ID, READ_BYTES, WRITE_BYTES) VALUES (?, ?, ?, ?)"); err != nil {
		return fmt.Errorf("%s: %w", w.path, err)
	}
	if w.tsStmt, err = tx.Prepare("INSERT INTO TIMESTAMP_INFO (TS_ID, TIMESTAMP) VALUES (?, ?)"); err != nil {
		return fmt.Errorf("%s: %w", w.path, err)
	}
	return nil
}

// WriteRates takes rates with NaN for lost samples; use WriteCounters
// where the true rates are known (the simulator does).
func (w *Writer) WriteRates(r *serverlog.Rates) error {
	lost := make([]bool, r.Len())
	for t := range lost {
		for i := range r.Write {
			if math.IsNaN(r.Write[i][t]) || math.IsNaN(r.Read[i][t]) {
				lost[t] = true
			}
		}
	}
	return w.WriteCounters(r, lost)
}

// WriteCounters adds a chunk of samples.
func (w *Writer) WriteCounters(r *serverlog.Rates, lost []bool) error {
	step := r.Step.Seconds()
	if !w.started {
		w.started = true
		if err := w.row(r.Start); err != nil {
			return err
		}
	}
	for t := range r.Len() {
		for i := range w.n {
			rr, ww := r.Read[i][t], r.Write[i][t]
			if math.IsNaN(rr) || math.IsNaN(ww) {
				rr, ww = 0, 0 // unknown: the counters do not move
			}
			if w.aggregate {
				w.c.add(0, rr, ww, step)
			} else {
				w.c.add(i, rr, ww, step)
			}
		}
		if !lost[t] {
			if err := w.row(r.Time(t + 1)); err != nil {
				return err
			}
		}
	}
	return nil
}

// row writes one timestamp and every OST's counters at it.
func (w *Writer) row(at time.Time) error {
	w.ts++
	if _, err := w.tsStmt.Exec(w.ts, at.In(w.loc).Format("2006-01-02 15:04:05")); err != nil {
		return fmt.Errorf("%s: %w", w.path, err)
	}
	for i := range w.c.read {
		if _, err := w.stmt.Exec(i+1, w.ts, int64(w.c.read[i]), int64(w.c.write[i])); err != nil {
			return fmt.Errorf("%s: %w", w.path, err)
		}
		w.rows++
	}
	// Commit now and then, so that memory stays bounded.
	if w.rows >= 1<<20 {
		w.rows = 0
		if err := w.commit(); err != nil {
			return err
		}
		return w.begin()
	}
	return nil
}

func (w *Writer) commit() error {
	w.stmt.Close()
	w.tsStmt.Close()
	if err := w.tx.Commit(); err != nil {
		return fmt.Errorf("%s: %w", w.path, err)
	}
	return nil
}

// Close commits and closes the database.
func (w *Writer) Close() error {
	err := w.commit()
	err = errors.Join(err, w.db.Close())
	if err != nil {
		w.file.Close()
		return err
	}
	return w.file.Commit()
}
