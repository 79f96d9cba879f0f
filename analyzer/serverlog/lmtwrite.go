package serverlog

import (
	"database/sql"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"time"

	"iopred/internal/safefile"
)

// LMTWriterOptions describe the database an LMTWriter makes.
type LMTWriterOptions struct {
	// FileSystem is the file system's name in FILESYSTEM_INFO; empty
	// means the part of the first OST's name before "-OST", or "lustre".
	FileSystem string
	// TZ is the zone TIMESTAMP is written in, as LMT writes the server's
	// local time; nil means time.Local, the zone readers assume.
	TZ *time.Location
	// InitialRead and InitialWrite are the counters at the first
	// timestamp, per OST (servers have counted for a while when a log
	// starts); nil means zero.
	InitialRead, InitialWrite []uint64
}

// LMTWriter writes an LMT database in SQLite with the tables and columns
// LMT's MySQL schema has (as pytokio's copies have them): OST_INFO,
// OSS_INFO, FILESYSTEM_INFO, TIMESTAMP_INFO, OST_DATA with cumulative
// READ_BYTES and WRITE_BYTES, and the MDS tables, empty. It is what the
// center simulator and the tests write; OpenLMT reads it back to the same
// rates.
type LMTWriter struct {
	path    string
	db      *sql.DB
	loc     *time.Location
	osts    []string
	read    []uint64  // counters now
	write   []uint64  //
	carryR  []float64 // fractions of a byte not yet counted
	carryW  []float64
	next    time.Time // time of the next sample's start; zero before the first Write
	step    time.Duration
	tsID    int64
	started bool
	closed  bool
}

const lmtSchema = `
CREATE TABLE FILESYSTEM_INFO (FILESYSTEM_ID, FILESYSTEM_NAME, FILESYSTEM_MOUNT_NAME, SCHEMA_VERSION, PRIMARY KEY(FILESYSTEM_ID));
CREATE TABLE OSS_INFO (OSS_ID, FILESYSTEM_ID, HOSTNAME, FAILOVERHOST, PRIMARY KEY(OSS_ID, HOSTNAME));
CREATE TABLE OST_INFO (OST_ID, OSS_ID, OST_NAME, HOSTNAME, OFFLINE, DEVICE_NAME, PRIMARY KEY(OST_ID));
CREATE TABLE TIMESTAMP_INFO (TS_ID, TIMESTAMP, PRIMARY KEY(TS_ID));
CREATE TABLE OST_DATA (OST_ID, TS_ID, READ_BYTES, WRITE_BYTES, PCT_CPU, KBYTES_FREE, KBYTES_USED, INODES_FREE, INODES_USED, PRIMARY KEY(OST_ID, TS_ID));
CREATE TABLE OSS_DATA (OSS_ID, TS_ID, PCT_CPU, PCT_MEMORY, PRIMARY KEY(OSS_ID, TS_ID));
CREATE TABLE MDS_INFO (MDS_ID, FILESYSTEM_ID, MDS_NAME, HOSTNAME, DEVICE_NAME, PRIMARY KEY(MDS_ID));
CREATE TABLE MDS_DATA (MDS_ID, TS_ID, PCT_CPU, KBYTES_FREE, KBYTES_USED, INODES_FREE, INODES_USED, PRIMARY KEY(MDS_ID, TS_ID));
CREATE TABLE OPERATION_INFO (OPERATION_ID, OPERATION_NAME, UNITS, PRIMARY KEY(OPERATION_ID));
CREATE TABLE MDS_OPS_DATA (MDS_ID, TS_ID, OPERATION_ID, SAMPLES, SUM, SUMSQUARES, PRIMARY KEY(MDS_ID, TS_ID, OPERATION_ID));
CREATE TABLE OST_VARIABLE_INFO (VARIABLE_ID, VARIABLE_NAME, VARIABLE_LABEL, THRESH_TYPE, THRESH_VAL1, THRESH_VAL2, PRIMARY KEY(VARIABLE_ID));
CREATE TABLE MDS_VARIABLE_INFO (VARIABLE_ID, VARIABLE_NAME, VARIABLE_LABEL, THRESH_TYPE, THRESH_VAL1, THRESH_VAL2, PRIMARY KEY(VARIABLE_ID));
`

// CreateLMT creates the database at path (which must not exist) for the
// named OSTs.
func CreateLMT(path string, osts []string, opts LMTWriterOptions) (*LMTWriter, error) {
	if len(osts) == 0 {
		return nil, fmt.Errorf("%s: no OSTs to write", path)
	}
	// Created empty here, exclusively and without following a link, so
	// that SQLite opens a file of ours.
	f, err := safefile.CreateNew(path, 0o666)
	if errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("%s: already exists", path)
	}
	if err != nil {
		return nil, err
	}
	f.Close()
	for _, v := range [][]uint64{opts.InitialRead, opts.InitialWrite} {
		if v != nil && len(v) != len(osts) {
			os.Remove(path)
			return nil, fmt.Errorf("%s: %d initial counters for %d OSTs", path, len(v), len(osts))
		}
	}
	db, err := sql.Open("sqlite", sqliteURI(path, false)+
		"?_pragma=journal_mode(off)&_pragma=synchronous(off)&_pragma=cache_size(-65536)")
	if err != nil {
		os.Remove(path)
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	// One connection: the pragmas hold per connection.
	db.SetMaxOpenConns(1)
	w := &LMTWriter{path: path, db: db, loc: opts.TZ, osts: osts,
		read: make([]uint64, len(osts)), write: make([]uint64, len(osts)),
		carryR: make([]float64, len(osts)), carryW: make([]float64, len(osts))}
	if w.loc == nil {
		w.loc = time.Local
	}
	copy(w.read, opts.InitialRead)
	copy(w.write, opts.InitialWrite)
	if err := w.schema(opts.FileSystem); err != nil {
		db.Close()
		os.Remove(path)
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return w, nil
}

func (w *LMTWriter) schema(fs string) error {
	if fs == "" {
		fs = "lustre"
		if i := strings.Index(w.osts[0], "-OST"); i > 0 {
			fs = w.osts[0][:i]
		}
	}
	tx, err := w.db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, stmt := range strings.Split(strings.TrimSpace(lmtSchema), ";\n") {
		if _, err := tx.Exec(stmt); err != nil {
			return err
		}
	}
	if _, err := tx.Exec("INSERT INTO FILESYSTEM_INFO VALUES (1, ?, '', '1.1')", fs); err != nil {
		return err
	}
	for i, name := range w.osts {
		host := fmt.Sprintf("%s-oss%d", fs, i)
		if _, err := tx.Exec("INSERT INTO OSS_INFO VALUES (?, 1, ?, '')", i+1, host); err != nil {
			return err
		}
		if _, err := tx.Exec("INSERT INTO OST_INFO VALUES (?, ?, ?, ?, 0, '')", i+1, i+1, name, host); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// Write appends r's samples. r must have the writer's OSTs in its order
// and start where the previous Write ended, on the same step. The first
// Write also writes the timestamp of r's start with the initial counters.
// A NaN sample of an OST writes no row of that OST at the sample's end and
// adds nothing to its counters: the reader sees a gap there (and, as one
// row closes two intervals, in the next sample too).
func (w *LMTWriter) Write(r *Rates) error { return w.WriteLost(r, nil) }

// WriteLost is Write with samples whose closing timestamp the monitoring
// lost: when lost[t] is true, no TIMESTAMP_INFO row and no OST_DATA rows
// are written at the end of sample t, while the counters go on counting
// its bytes, as on a server whose collector missed a beat. lost may be
// shorter than r.
func (w *LMTWriter) WriteLost(r *Rates, lost []bool) error {
	if w.closed {
		return fmt.Errorf("%s: write after Close", w.path)
	}
	if len(r.OSTs) != len(w.osts) || len(r.Read) != len(w.osts) || len(r.Write) != len(w.osts) {
		return fmt.Errorf("%s: rates of %d OSTs for a database of %d", w.path, len(r.OSTs), len(w.osts))
	}
	for i, n := range r.OSTs {
		if n != w.osts[i] {
			return fmt.Errorf("%s: OST %d is %q in the rates, %q in the database", w.path, i, n, w.osts[i])
		}
	}
	if r.Step <= 0 {
		return fmt.Errorf("%s: rates with step %v", w.path, r.Step)
	}
	if w.started && (!r.Start.Equal(w.next) || r.Step != w.step) {
		return fmt.Errorf("%s: rates from %v by %v do not continue the database (next %v by %v)",
			w.path, r.Start, r.Step, w.next, w.step)
	}
	tx, err := w.db.Begin()
	if err != nil {
		return fmt.Errorf("%s: %v", w.path, err)
	}
	defer tx.Rollback()
	ins := newRowInserter(tx, "OST_DATA (OST_ID, TS_ID, READ_BYTES, WRITE_BYTES, PCT_CPU, KBYTES_FREE, KBYTES_USED, INODES_FREE, INODES_USED)", 9)
	tsIns := newRowInserter(tx, "TIMESTAMP_INFO (TS_ID, TIMESTAMP)", 2)
	if !w.started {
		w.step = r.Step
		if err := w.stamp(tsIns, ins, r.Start, nil); err != nil {
			return fmt.Errorf("%s: %v", w.path, err)
		}
		w.started = true
	}
	sec := r.Step.Seconds()
	skip := make([]bool, len(w.osts))
	for t := 0; t < r.Len(); t++ {
		for i := range w.osts {
			rv, wv := r.Read[i][t], r.Write[i][t]
			skip[i] = math.IsNaN(rv) || math.IsNaN(wv)
			if skip[i] {
				continue
			}
			if rv < 0 || wv < 0 || math.IsInf(rv, 0) || math.IsInf(wv, 0) {
				return fmt.Errorf("%s: OST %s, sample %d: rate read %g write %g", w.path, w.osts[i], t, rv, wv)
			}
			w.read[i], w.carryR[i] = addBytes(w.read[i], w.carryR[i], rv*sec)
			w.write[i], w.carryW[i] = addBytes(w.write[i], w.carryW[i], wv*sec)
		}
		end := r.Time(t + 1)
		if t < len(lost) && lost[t] {
			continue
		}
		if err := w.stamp(tsIns, ins, end, skip); err != nil {
			return fmt.Errorf("%s: %v", w.path, err)
		}
	}
	if err := ins.flush(); err != nil {
		return fmt.Errorf("%s: %v", w.path, err)
	}
	if err := tsIns.flush(); err != nil {
		return fmt.Errorf("%s: %v", w.path, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("%s: %v", w.path, err)
	}
	w.next = r.End()
	return nil
}

// addBytes adds b bytes to a counter, keeping the fraction of a byte for
// later so that the counter stays exact over any number of samples.
func addBytes(c uint64, carry, b float64) (uint64, float64) {
	carry += b
	whole := math.Floor(carry)
	return c + uint64(whole), carry - whole
}

// stamp writes one timestamp and the counters of every OST not skipped.
func (w *LMTWriter) stamp(tsIns, ins *rowInserter, at time.Time, skip []bool) error {
	w.tsID++
	if err := tsIns.add(w.tsID, formatLocal(at, w.loc, ' ')); err != nil {
		return err
	}
	for i := range w.osts {
		if skip != nil && skip[i] {
			continue
		}
		if err := ins.add(i+1, w.tsID, int64(w.read[i]), int64(w.write[i]), 0.0, 0, 0, 0, 0); err != nil {
			return err
		}
	}
	return nil
}

// Close finishes the database. A writer that wrote nothing leaves an
// empty database, which readers refuse.
func (w *LMTWriter) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	return w.db.Close()
}

// rowInserter batches rows into multi-row INSERTs: one statement per row
// costs more than the row itself.
type rowInserter struct {
	tx    *sql.Tx
	head  string
	width int
	args  []any
	stmt  *sql.Stmt
}

const insertRows = 100

func newRowInserter(tx *sql.Tx, table string, width int) *rowInserter {
	return &rowInserter{tx: tx, head: "INSERT INTO " + table + " VALUES ", width: width}
}

func (ri *rowInserter) sql(rows int) string {
	one := "(" + strings.Repeat("?,", ri.width-1) + "?)"
	return ri.head + strings.Repeat(one+",", rows-1) + one
}

func (ri *rowInserter) add(vals ...any) error {
	if len(vals) != ri.width {
		return errors.New("row of the wrong width")
	}
	ri.args = append(ri.args, vals...)
	if len(ri.args) < insertRows*ri.width {
		return nil
	}
	if ri.stmt == nil {
		st, err := ri.tx.Prepare(ri.sql(insertRows))
		if err != nil {
			return err
		}
		ri.stmt = st
	}
	_, err := ri.stmt.Exec(ri.args...)
	ri.args = ri.args[:0]
	return err
}

func (ri *rowInserter) flush() error {
	if ri.stmt != nil {
		defer ri.stmt.Close()
	}
	if len(ri.args) == 0 {
		return nil
	}
	_, err := ri.tx.Exec(ri.sql(len(ri.args)/ri.width), ri.args...)
	ri.args = ri.args[:0]
	return err
}
