package serverlog

import (
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"net/url"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	_ "modernc.org/sqlite" // LMT databases copied to SQLite (pytokio's test files, the simulator's output)
)

// OpenLMT opens a Lustre Monitoring Tool database: its TIMESTAMP_INFO
// (TS_ID, TIMESTAMP), OST_INFO (OST_ID, OST_NAME) and OST_DATA (OST_ID,
// TS_ID, READ_BYTES, WRITE_BYTES: cumulative counters) tables. src is a
// SQLite file, or a live MySQL/MariaDB database given as
// mysql://[USER[:PASS]@]HOST[:PORT]/DB, mysql://[USER[:PASS]@]unix(/path/to.sock)/DB
// or mysql://[USER[:PASS]@]localhost/DB?socket=/path/to.sock; what the
// address leaves out (the password above all, which ps would show) comes
// from MariaDB's option files and MYSQL_PWD, as for MariaDB's own clients
// (opts.MySQLDefaultsFile, readClientOptions).
//
// TIMESTAMP is read in opts.TZ (LMT writes the server's local time). The
// timestamps are read once; OST_DATA is read by time window, one indexed
// query per OST, so that a month-long database is never held in memory.
func OpenLMT(src string, opts Options) (Source, error) {
	db, name, err := openLMTDB(src, &opts)
	if err != nil {
		return nil, err
	}
	l := &lmtLog{db: db, src: name, opts: &opts}
	if err := l.load(); err != nil {
		db.Close()
		return nil, err
	}
	return newCounterSource(l, &opts), nil
}

// IsMySQL tells whether src names a MySQL/MariaDB database rather than a
// file.
func IsMySQL(src string) bool { return strings.HasPrefix(src, "mysql://") }

func openLMTDB(src string, opts *Options) (*sql.DB, string, error) {
	if IsMySQL(src) {
		cfg, name, g, err := parseMySQLURL(src)
		if err != nil {
			return nil, name, err
		}
		warn := opts.warnings()
		if g.password {
			fmt.Fprintf(warn, "iopred: warning: %s: a password in the address shows in ps and in shell history; give it in MYSQL_PWD, ~/.my.cnf or --defaults-file instead\n", name)
		}
		copts, err := readClientOptions(opts.MySQLDefaultsFile, warn)
		if err != nil {
			return nil, name, err
		}
		if err := applyClientDefaults(cfg, g, copts); err != nil {
			return nil, name, err
		}
		conn, err := mysql.NewConnector(cfg)
		if err != nil {
			return nil, name, fmt.Errorf("%s: %v", name, err)
		}
		db := sql.OpenDB(conn)
		if err := db.Ping(); err != nil {
			db.Close()
			return nil, name, fmt.Errorf("%s: %v", name, err)
		}
		return db, name, nil
	}
	if _, err := os.Stat(src); err != nil {
		return nil, src, err
	}
	db, err := sql.Open("sqlite", sqliteURI(src, true))
	if err != nil {
		return nil, src, fmt.Errorf("%s: %v", src, err)
	}
	return db, src, nil
}

// sqliteURI makes a file: URI of a path, so that a name with '?' or '#'
// is still a name.
func sqliteURI(path string, readOnly bool) string {
	r := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23")
	u := "file:" + r.Replace(path)
	if readOnly {
		return u + "?mode=ro"
	}
	return u
}

// parseMySQL reads a mysql:// address. The name it returns, for errors,
// leaves the password out.
func parseMySQL(src string) (*mysql.Config, string, error) {
	cfg, name, _, err := parseMySQLURL(src)
	return cfg, name, err
}

// parseMySQLURL is parseMySQL that also says which parts the address
// named, for the option files to fill in the others.
func parseMySQLURL(src string) (*mysql.Config, string, given, error) {
	cfg, name, g, err := parseMySQLParts(src)
	if err != nil && strings.Contains(err.Error(), "://") {
		// Errors name the address without its password.
		err = fmt.Errorf("%s", strings.Replace(err.Error(), src, name, 1))
	}
	return cfg, name, g, err
}

func parseMySQLParts(src string) (*mysql.Config, string, given, error) {
	var g given
	rest := strings.TrimPrefix(src, "mysql://")
	cfg := mysql.NewConfig()
	at := strings.LastIndex(rest, "@")
	user, hostDB := "", rest
	if at >= 0 {
		user, hostDB = rest[:at], rest[at+1:]
		g.user = user != "" && user[0] != ':' // "mysql://:PASS@HOST/DB" names no user
	}
	if u, p, ok := strings.Cut(user, ":"); ok {
		g.password = true
		user = u
		pass, err := url.PathUnescape(p)
		if err != nil {
			return nil, "mysql://" + u + "@" + hostDB, g, fmt.Errorf("mysql://%s@%s: the password is not URL-escaped", u, hostDB)
		}
		cfg.Passwd = pass
	}
	name := "mysql://" + hostDB
	if g.user {
		name = "mysql://" + user + "@" + hostDB
		u, err := url.PathUnescape(user)
		if err != nil || u == "" {
			return nil, name, g, fmt.Errorf("%s: no user before @", name)
		}
		cfg.User = u
	}
	hostDB, query, _ := strings.Cut(hostDB, "?")
	var host, db string
	if strings.HasPrefix(hostDB, "unix(") {
		end := strings.Index(hostDB, ")")
		if end < 0 {
			return nil, name, g, fmt.Errorf("%s: unix( without )", name)
		}
		cfg.Net, cfg.Addr = "unix", hostDB[len("unix("):end]
		g.host = true
		db = strings.TrimPrefix(hostDB[end+1:], "/")
	} else {
		host, db, _ = strings.Cut(hostDB, "/")
		g.host = host != ""
		cfg.Net, cfg.Addr = "tcp", host
		if host == "" {
			cfg.Addr = "127.0.0.1:3306"
		} else if !strings.Contains(host, ":") {
			cfg.Addr = host + ":3306"
		}
	}
	if db == "" || strings.Contains(db, "/") {
		return nil, name, g, fmt.Errorf("%s: want one database name after the host", name)
	}
	cfg.DBName = db
	if query != "" {
		q, err := url.ParseQuery(query)
		if err != nil {
			return nil, name, g, fmt.Errorf("%s: %v", name, err)
		}
		for k, v := range q {
			switch k {
			case "socket":
				cfg.Net, cfg.Addr = "unix", v[0]
				g.host = true
			default:
				return nil, name, g, fmt.Errorf("%s: unknown parameter %q (only socket)", name, k)
			}
		}
	}
	cfg.Timeout = 30 * time.Second
	return cfg, name, g, nil
}

// lmtLog reads an LMT database.
type lmtLog struct {
	db    *sql.DB
	src   string
	opts  *Options
	ids   []int64  // OST_IDs, in the order of ost
	ost   []string // OST names, sorted
	times []tsRow  // TIMESTAMP_INFO sorted by time
	byID  map[int64]int64
	// badTS are the TS_IDs whose TIMESTAMP_INFO row was left out under
	// SkipBad: their OST_DATA rows go with them, uncounted.
	badTS map[int64]bool
	// afterDropped are the TS_IDs whose reading follows one left out as
	// out of time order: the interval that ends there is unknown.
	afterDropped map[int64]bool
	step         time.Duration
	ident        string
	query        *sql.Stmt
}

type tsRow struct{ id, t int64 }

func (l *lmtLog) load() error {
	if err := l.loadOSTs(); err != nil {
		return err
	}
	if err := l.loadTimes(); err != nil {
		return err
	}
	q, err := l.db.Prepare("SELECT TS_ID, READ_BYTES, WRITE_BYTES FROM OST_DATA WHERE OST_ID = ? AND TS_ID >= ? AND TS_ID <= ? ORDER BY TS_ID")
	if err != nil {
		return l.tableErr("OST_DATA", err)
	}
	l.query = q
	return nil
}

// tableErr names the file and the table: a missing table, a corrupt file
// and a lost connection all come through here.
func (l *lmtLog) tableErr(table string, err error) error {
	return fmt.Errorf("%s: table %s: %v", l.src, table, err)
}

func (l *lmtLog) loadOSTs() error {
	rows, err := l.db.Query("SELECT OST_ID, OST_NAME FROM OST_INFO")
	if err != nil {
		return l.tableErr("OST_INFO", err)
	}
	defer rows.Close()
	type ost struct {
		id   int64
		name string
	}
	var all []ost
	seen := map[string]bool{}
	for row := 1; rows.Next(); row++ {
		var id sql.NullInt64
		var name sql.NullString
		if err := rows.Scan(&id, &name); err != nil || !id.Valid || !name.Valid || name.String == "" {
			if err == nil {
				err = errors.New("OST_ID or OST_NAME missing")
			}
			if err := l.opts.bad(fmt.Errorf("%s: table OST_INFO, row %d: %v", l.src, row, err)); err != nil {
				return err
			}
			continue
		}
		if seen[name.String] {
			if err := l.opts.bad(fmt.Errorf("%s: table OST_INFO, row %d: OST %q listed twice", l.src, row, name.String)); err != nil {
				return err
			}
			continue
		}
		seen[name.String] = true
		all = append(all, ost{id.Int64, name.String})
	}
	if err := rows.Err(); err != nil {
		return l.tableErr("OST_INFO", err)
	}
	if len(all) == 0 {
		return fmt.Errorf("%s: table OST_INFO: no OSTs", l.src)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].name < all[j].name })
	for _, o := range all {
		l.ids, l.ost = append(l.ids, o.id), append(l.ost, o.name)
	}
	return nil
}

func (l *lmtLog) loadTimes() error {
	rows, err := l.db.Query("SELECT TS_ID, TIMESTAMP FROM TIMESTAMP_INFO")
	if err != nil {
		return l.tableErr("TIMESTAMP_INFO", err)
	}
	defer rows.Close()
	loc := l.opts.loc()
	l.byID, l.badTS = map[int64]int64{}, map[int64]bool{}
	for row := 1; rows.Next(); row++ {
		var id sql.NullInt64
		ts := lmtTime{loc: loc}
		err := rows.Scan(&id, &ts)
		if err == nil && !id.Valid {
			err = errors.New("TS_ID missing")
		}
		if err != nil {
			if err := l.opts.bad(fmt.Errorf("%s: table TIMESTAMP_INFO, row %d: %v", l.src, row, err)); err != nil {
				return err
			}
			if id.Valid {
				l.badTS[id.Int64] = true
			}
			continue
		}
		l.times = append(l.times, tsRow{id.Int64, ts.t.UnixNano()})
	}
	if err := rows.Err(); err != nil {
		return l.tableErr("TIMESTAMP_INFO", err)
	}
	fixRepeatedHour(l.times, loc)
	if len(l.times) > 0 {
		// Whatever the zone it is read in and wherever the file is: the
		// OSTs and the first timestamp as LMT wrote it.
		first := l.times[0]
		h := sha256.Sum256([]byte(strings.Join(l.ost, "\n") + "\n" + strconv.FormatInt(first.id, 10) + " " +
			time.Unix(0, first.t).In(loc).Format("2006-01-02 15:04:05.999999999")))
		l.ident = "lmt:" + hex.EncodeToString(h[:12])
	}
	l.dropDisordered()
	for _, x := range l.times {
		l.byID[x.id] = x.t
	}
	slices.SortFunc(l.times, func(a, b tsRow) int { return cmpInt64(a.t, b.t) })
	ts := make([]int64, len(l.times))
	for i, x := range l.times {
		ts[i] = x.t
	}
	step, err := nativeStep(ts)
	if err != nil {
		return fmt.Errorf("%s: table TIMESTAMP_INFO: %v", l.src, err)
	}
	l.step = step
	return nil
}

// fixRepeatedHour undoes the ambiguity of local times when clocks go back
// (the hour from 02:00 to 03:00 happens twice in Europe in October, and
// the zone cannot tell which pass a wall time is): LMT numbers its
// timestamps in the order it takes them, so each ambiguous time is the
// earliest of its instants that comes after the timestamp before it.
func fixRepeatedHour(rows []tsRow, loc *time.Location) {
	slices.SortFunc(rows, func(a, b tsRow) int { return cmpInt64(a.id, b.id) })
	const window = 3 * int64(time.Hour)
	wall := func(t int64) string { return time.Unix(0, t).In(loc).Format("2006-01-02 15:04:05.999999999") }
	for i := range rows {
		t := rows[i].t
		_, o1 := time.Unix(0, t-window).In(loc).Zone()
		_, o2 := time.Unix(0, t+window).In(loc).Zone()
		if o1 == o2 {
			continue
		}
		s := int64(o1-o2) * int64(time.Second)
		if s < 0 {
			s = -s
		}
		cands := []int64{t}
		for _, c := range []int64{t - s, t + s} {
			if wall(c) == wall(t) {
				cands = append(cands, c)
			}
		}
		slices.Sort(cands)
		if i == 0 {
			rows[i].t = cands[0]
			continue
		}
		for _, c := range cands {
			if c > rows[i-1].t {
				rows[i].t = c
				break
			}
		}
	}
}

// dropDisordered leaves out the timestamps (sorted by TS_ID, the order
// LMT took them in) that go back in time or repeat a time: the fewest
// rows whose removal leaves the times strictly increasing. A counter
// read at a wrong time would move bytes between intervals, or, read
// before the reading it followed, look like a reset and add the bytes of
// the intervals around it twice. The OST_DATA rows of the timestamps left
// out are passed over, and the interval ending at the next timestamp is
// unknown, so that no byte is put in an interval it may not belong to.
// The caller is warned with the count.
func (l *lmtLog) dropDisordered() {
	keep := increasingSubsequence(l.times)
	if len(keep) == len(l.times) {
		return
	}
	kept := make([]bool, len(l.times))
	for _, i := range keep {
		kept[i] = true
	}
	var out []tsRow
	var dropped []int64
	l.afterDropped = map[int64]bool{}
	after := false
	for i, x := range l.times {
		if !kept[i] {
			dropped = append(dropped, x.id)
			l.badTS[x.id] = true
			after = true
			continue
		}
		if after {
			l.afterDropped[x.id] = true
			after = false
		}
		out = append(out, x)
	}
	ids := dropped
	more := ""
	if len(ids) > 5 {
		ids, more = ids[:5], ", ..."
	}
	l.opts.warn(fmt.Sprintf("%s: table TIMESTAMP_INFO: %d timestamps out of time order or repeating an earlier time (TS_ID %s%s) left out; the intervals around them are unknown",
		l.src, len(dropped), joinInts(ids), more))
	l.times = out
}

// increasingSubsequence returns the indices of a longest subsequence of
// rows whose times strictly increase (patience sorting, n log n).
func increasingSubsequence(rows []tsRow) []int {
	var tails []int // tails[k]: index of the smallest last time of a run of k+1
	prev := make([]int, len(rows))
	for i, x := range rows {
		k := sort.Search(len(tails), func(j int) bool { return rows[tails[j]].t >= x.t })
		prev[i] = -1
		if k > 0 {
			prev[i] = tails[k-1]
		}
		if k == len(tails) {
			tails = append(tails, i)
		} else {
			tails[k] = i
		}
	}
	out := make([]int, len(tails))
	for i, k := len(tails)-1, -1; i >= 0; i-- {
		if k < 0 {
			k = tails[i]
		} else {
			k = prev[k]
		}
		out[i] = k
	}
	return out
}

func joinInts(v []int64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.FormatInt(x, 10)
	}
	return strings.Join(s, ", ")
}

// lmtTime scans TIMESTAMP: text in the reader's zone, a DATETIME the
// driver already parsed (its wall clock is taken in the reader's zone,
// as LMT meant it), or Unix seconds.
type lmtTime struct {
	loc *time.Location
	t   time.Time
}

func (x *lmtTime) Scan(v any) error {
	var err error
	switch v := v.(type) {
	case string:
		x.t, err = ParseTime(v, x.loc)
	case []byte:
		x.t, err = ParseTime(string(v), x.loc)
	case time.Time:
		y, m, d := v.Date()
		x.t = time.Date(y, m, d, v.Hour(), v.Minute(), v.Second(), v.Nanosecond(), x.loc)
	case int64:
		x.t = time.Unix(v, 0)
	case float64:
		s, f := math.Modf(v)
		x.t = time.Unix(int64(s), int64(f*1e9))
	case nil:
		err = errors.New("TIMESTAMP missing")
	default:
		err = fmt.Errorf("TIMESTAMP of type %T", v)
	}
	return err
}

// counter scans a cumulative byte counter, whatever type the database
// gives it.
type counter struct{ v uint64 }

func (c *counter) Scan(v any) error {
	switch v := v.(type) {
	case int64:
		if v < 0 {
			return fmt.Errorf("negative counter %d", v)
		}
		c.v = uint64(v)
	case uint64:
		c.v = v
	case float64:
		if v < 0 || v >= 1<<64 || math.IsNaN(v) {
			return fmt.Errorf("counter %g out of range", v)
		}
		c.v = uint64(v)
	case []byte:
		return c.parse(string(v))
	case string:
		return c.parse(v)
	case nil:
		return errors.New("counter missing (NULL)")
	default:
		return fmt.Errorf("counter of type %T", v)
	}
	return nil
}

func (c *counter) parse(s string) error {
	n, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
	if err != nil {
		f, ferr := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if ferr != nil || f < 0 || f >= 1<<64 {
			return fmt.Errorf("counter %q is not a byte count", s)
		}
		n = uint64(f)
	}
	c.v = n
	return nil
}

func (l *lmtLog) names() []string { return l.ost }

func (l *lmtLog) what() string { return l.src }

func (l *lmtLog) identity() string { return l.ident }

func (l *lmtLog) bounds() (int64, int64, time.Duration) {
	return l.times[0].t, l.times[len(l.times)-1].t, l.step
}

func (l *lmtLog) readings(from, to int64) ([][]reading, error) {
	lo := sort.Search(len(l.times), func(i int) bool { return l.times[i].t >= from })
	hi := sort.Search(len(l.times), func(i int) bool { return l.times[i].t > to })
	out := make([][]reading, len(l.ids))
	if lo >= hi {
		return out, nil
	}
	// TS_IDs grow with time in LMT; the range of ids of the window's
	// times covers them even if a few rows were written out of order.
	idLo, idHi := int64(math.MaxInt64), int64(math.MinInt64)
	for _, x := range l.times[lo:hi] {
		idLo, idHi = min(idLo, x.id), max(idHi, x.id)
	}
	// One query at a time: modernc's SQLite answers parallel ones slower
	// (BenchmarkLMTRead measured 3.3x fewer rows/s with two).
	for i, ost := range l.ids {
		rs, err := l.ostReadings(ost, idLo, idHi, from, to)
		if err != nil {
			return nil, err
		}
		out[i], _, _ = sortReadings(rs)
	}
	return out, nil
}

func (l *lmtLog) ostReadings(ost, idLo, idHi, from, to int64) ([]reading, error) {
	rows, err := l.query.Query(ost, idLo, idHi)
	if err != nil {
		return nil, l.tableErr("OST_DATA", err)
	}
	defer rows.Close()
	rs := make([]reading, 0, idHi-idLo+1)
	for rows.Next() {
		var id sql.NullInt64
		var r, w counter
		err := rows.Scan(&id, &r, &w)
		t, known := l.byID[id.Int64]
		if err == nil && !known && l.badTS[id.Int64] {
			continue
		}
		if err == nil && !known {
			err = errors.New("no TIMESTAMP_INFO row of this TS_ID")
		}
		if err != nil {
			if err := l.opts.bad(fmt.Errorf("%s: table OST_DATA, OST_ID %d, TS_ID %d: %v", l.src, ost, id.Int64, err)); err != nil {
				return nil, err
			}
			continue
		}
		if t >= from && t <= to {
			rs = append(rs, reading{t: t, r: r.v, w: w.v, gap: l.afterDropped[id.Int64]})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, l.tableErr("OST_DATA", err)
	}
	return rs, nil
}

func (l *lmtLog) close() error {
	if l.query != nil {
		l.query.Close()
	}
	return l.db.Close()
}
