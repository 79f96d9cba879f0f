package serverlog

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"iopred/tests/interop"
	"iopred/tests/testenv"
)

// mariaDB is a MariaDB server a test started for itself.
type mariaDB struct {
	socket string // its unix socket
	addr   string // its 127.0.0.1:port
}

// findServerTool finds a MariaDB program, also in the sbin directories a
// normal user's PATH may lack.
func findServerTool(t *testing.T, name string) string {
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	for _, d := range []string{"/usr/sbin", "/usr/bin", "/usr/local/sbin"} {
		if p := filepath.Join(d, name); fileExists(p) {
			return p
		}
	}
	return testenv.Tool(t, name) // fails (or skips) as for any missing tool
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// startMariaDB initialises a data directory in a temporary directory,
// starts mariadbd on a socket there and on a free 127.0.0.1 port, and
// stops it when the test ends. It creates user lmt (password "s3cr:t@/")
// with all rights on database lmt.
func startMariaDB(t *testing.T) *mariaDB {
	t.Helper()
	install, server := findServerTool(t, "mariadb-install-db"), findServerTool(t, "mariadbd")
	// A short directory: a unix socket's path has at most 107 bytes.
	dir, err := os.MkdirTemp("", "iopred-mdb")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	data := filepath.Join(dir, "data")
	var asRoot []string
	if os.Geteuid() == 0 {
		asRoot = []string{"--user=root"} // mariadbd refuses to run as root otherwise
	}
	args := append([]string{"--no-defaults", "--datadir=" + data, "--auth-root-authentication-method=normal",
		"--skip-test-db"}, asRoot...)
	if out, err := exec.Command(install, args...).CombinedOutput(); err != nil {
		t.Fatalf("mariadb-install-db: %v\n%s", err, out)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	m := &mariaDB{socket: filepath.Join(dir, "sock"), addr: fmt.Sprintf("127.0.0.1:%d", port)}
	logf := filepath.Join(dir, "err.log")
	cmd := exec.Command(server, append([]string{"--no-defaults", "--datadir=" + data, "--socket=" + m.socket,
		"--bind-address=127.0.0.1", fmt.Sprintf("--port=%d", port), "--pid-file=" + filepath.Join(dir, "pid"),
		"--log-error=" + logf, "--innodb-buffer-pool-size=32M", "--skip-log-bin"}, asRoot...)...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(60 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	root := mysql.NewConfig()
	root.User, root.Net, root.Addr = "root", "unix", m.socket
	conn, err := mysql.NewConnector(root)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	deadline := time.Now().Add(90 * time.Second)
	for {
		if err = db.Ping(); err == nil {
			break
		}
		select {
		case werr := <-done:
			log, _ := os.ReadFile(logf)
			t.Fatalf("mariadbd exited: %v\n%s", werr, log)
		default:
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(logf)
			t.Fatalf("mariadbd not ready after 90 s: %v\n%s", err, log)
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, q := range []string{
		"CREATE DATABASE lmt",
		"CREATE USER 'lmt'@'localhost' IDENTIFIED BY 's3cr:t@/'",
		"CREATE USER 'lmt'@'127.0.0.1' IDENTIFIED BY 's3cr:t@/'",
		"GRANT ALL ON lmt.* TO 'lmt'@'localhost'",
		"GRANT ALL ON lmt.* TO 'lmt'@'127.0.0.1'",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return m
}

// lmtMySQLSchema is LMT's own MySQL schema for the tables the reader
// uses (types, keys and indexes as LMT creates them).
var lmtMySQLSchema = []string{
	`CREATE TABLE OST_INFO (OST_ID integer not null auto_increment, OSS_ID integer not null,
		OST_NAME varchar(128) not null, HOSTNAME varchar(128) not null, OFFLINE boolean,
		DEVICE_NAME varchar(128), primary key (OST_ID), index(OST_ID))`,
	`CREATE TABLE TIMESTAMP_INFO (TS_ID int unsigned not null auto_increment, TIMESTAMP datetime not null,
		primary key(TS_ID), key(TIMESTAMP))`,
	`CREATE TABLE OST_DATA (OST_ID integer not null, TS_ID int unsigned not null, READ_BYTES bigint,
		WRITE_BYTES bigint, PCT_CPU float, KBYTES_FREE bigint, KBYTES_USED bigint, INODES_FREE bigint,
		INODES_USED bigint, primary key (OST_ID, TS_ID), index(TS_ID), index(OST_ID)) MAX_ROWS=2000000000`,
}

// copyToMySQL loads the rows of an LMT SQLite file into the server's lmt
// database.
func copyToMySQL(t *testing.T, from string, to *sql.DB) {
	t.Helper()
	src, err := sql.Open("sqlite", sqliteURI(from, true))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	for _, q := range lmtMySQLSchema {
		if _, err := to.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	copyRows := func(sel, ins string, n int) {
		rows, err := src.Query(sel)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			vals := make([]any, n)
			ptrs := make([]any, n)
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			if _, err := to.Exec(ins, vals...); err != nil {
				t.Fatal(err)
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
	}
	copyRows("SELECT OST_ID, OSS_ID, OST_NAME, HOSTNAME, OFFLINE, DEVICE_NAME FROM OST_INFO",
		"INSERT INTO OST_INFO VALUES (?, ?, ?, ?, ?, ?)", 6)
	copyRows("SELECT TS_ID, TIMESTAMP FROM TIMESTAMP_INFO", "INSERT INTO TIMESTAMP_INFO VALUES (?, ?)", 2)
	copyRows("SELECT OST_ID, TS_ID, READ_BYTES, WRITE_BYTES, PCT_CPU, KBYTES_FREE, KBYTES_USED, INODES_FREE, INODES_USED FROM OST_DATA",
		"INSERT INTO OST_DATA VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", 9)
}

// TestLMTMariaDB proves the MySQL path end to end against a real MariaDB
// server: the production LMT rows loaded into LMT's MySQL schema read
// back, over TCP and over the unix socket (both address forms), to
// exactly the rates of the SQLite file; a wrong password and a missing
// database are errors that name the address without the password.
func TestLMTMariaDB(t *testing.T) {
	m := startMariaDB(t)
	pass := "s3cr%3At%40%2F" // s3cr:t@/ escaped for the URL
	tcp := "mysql://lmt:" + pass + "@" + m.addr + "/lmt"
	cfg, _, err := parseMySQL(tcp)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(conn)
	copyToMySQL(t, interop.Path(t, snx), db)
	db.Close()

	want, err := OpenLMT(interop.Path(t, snx), Options{TZ: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	defer want.Close()
	wr, err := want.Window(time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	for _, dsn := range []string{tcp,
		"mysql://lmt:" + pass + "@unix(" + m.socket + ")/lmt",
		"mysql://lmt:" + pass + "@localhost/lmt?socket=" + m.socket} {
		src, err := OpenSource(Spec{Kind: "lmt", Path: dsn}, Options{TZ: time.UTC})
		if err != nil {
			t.Fatalf("%s: %v", dsn, err)
		}
		got, err := src.Window(time.Time{}, time.Time{})
		src.Close()
		if err != nil {
			t.Fatalf("%s: %v", dsn, err)
		}
		if !got.Start.Equal(wr.Start) || got.Len() != wr.Len() || len(got.OSTs) != len(wr.OSTs) {
			t.Fatalf("%s: %d samples of %d OSTs from %v; SQLite: %d of %d from %v", dsn,
				got.Len(), len(got.OSTs), got.Start, wr.Len(), len(wr.OSTs), wr.Start)
		}
		for i := range wr.OSTs {
			for k := range wr.Len() {
				if got.Read[i][k] != wr.Read[i][k] || got.Write[i][k] != wr.Write[i][k] {
					t.Fatalf("%s: OST %s sample %d: %v/%v, SQLite %v/%v", dsn, wr.OSTs[i], k,
						got.Read[i][k], got.Write[i][k], wr.Read[i][k], wr.Write[i][k])
				}
			}
		}
	}
	for _, c := range []struct{ dsn, want string }{
		{"mysql://lmt:wrong@" + m.addr + "/lmt", "Access denied"},
		{"mysql://lmt:" + pass + "@" + m.addr + "/nosuch", "nosuch"},
	} {
		_, err := OpenLMT(c.dsn, Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "wrong") ||
			strings.Contains(err.Error(), "s3cr") {
			t.Errorf("%s: error %v, want one with %q and no password", c.dsn, err, c.want)
		}
	}
}

// TestLMTMariaDBCredentials reads the same database with the password
// where ps does not show it (MYSQL_PWD, ~/.my.cnf, a --defaults-file) and
// in the address (which still works, with a warning), imports each into a
// store, and searches every message and every file of the stores for the
// password.
func TestLMTMariaDBCredentials(t *testing.T) {
	m := startMariaDB(t)
	const secret = "s3cr:t@/"
	escaped := "s3cr%3At%40%2F"
	cfg, _, err := parseMySQL("mysql://lmt:" + escaped + "@" + m.addr + "/lmt")
	if err != nil {
		t.Fatal(err)
	}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(conn)
	copyToMySQL(t, interop.Path(t, snx), db)
	db.Close()
	want, err := OpenLMT(interop.Path(t, snx), Options{TZ: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	wr, err := want.Window(time.Time{}, time.Time{})
	want.Close()
	if err != nil {
		t.Fatal(err)
	}

	saved := defaultOptionFiles
	defaultOptionFiles = []string{"~/.my.cnf"} // not this machine's /etc/mysql
	t.Cleanup(func() { defaultOptionFiles = saved })
	host, port, _ := net.SplitHostPort(m.addr)
	emptyHome, cnfHome := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(cnfHome, ".my.cnf"), []byte("[client]\nuser = lmt\npassword = 's3cr:t@/'\nhost = "+host+"\nport = "+port+"\n"), 0o600)
	defaults := filepath.Join(t.TempDir(), "lmt.cnf")
	os.WriteFile(defaults, []byte("[mysqld]\nuser = nobody\n[client]\nuser = lmt\npassword = \"s3cr:t@/\"\nsocket = "+m.socket+"\n"), 0o600)
	for _, c := range []struct {
		name, dsn, home, env, defaults string
		warned                         bool
	}{
		{"MYSQL_PWD", "mysql://lmt@" + m.addr + "/lmt", emptyHome, secret, "", false},
		{"my.cnf", "mysql:///lmt", cnfHome, "", "", false},
		{"defaults-file", "mysql:///lmt", emptyHome, "", defaults, false},
		{"address", "mysql://lmt:" + escaped + "@unix(" + m.socket + ")/lmt", emptyHome, "", "", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("HOME", c.home)
			t.Setenv("MYSQL_PWD", c.env)
			var msgs strings.Builder
			opts := Options{TZ: time.UTC, Warnings: &msgs, MySQLDefaultsFile: c.defaults}
			src, err := OpenSource(Spec{Kind: "lmt", Path: c.dsn}, opts)
			if err != nil {
				t.Fatalf("%s: %v", c.dsn, err)
			}
			got, err := src.Window(time.Time{}, time.Time{})
			src.Close()
			if err != nil || !got.Start.Equal(wr.Start) || got.Len() != wr.Len() || len(got.OSTs) != len(wr.OSTs) {
				t.Fatalf("%s: %v; %d samples of %d OSTs, SQLite %d of %d", c.dsn, err, got.Len(), len(got.OSTs), wr.Len(), len(wr.OSTs))
			}
			store := t.TempDir()
			stats, err := Import(context.Background(), store, []Spec{{Kind: "lmt", Path: c.dsn}}, opts, ImportOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if stats.Days == 0 {
				t.Fatalf("nothing imported: %+v", stats)
			}
			if strings.Contains(msgs.String(), "a password in the address") != c.warned {
				t.Errorf("warning %q, want one: %v", msgs.String(), c.warned)
			}
			noSecret(t, "messages", msgs.String()+fmt.Sprint(stats)+Spec{Kind: "lmt", Path: c.dsn}.String(), secret, escaped)
			filepath.WalkDir(store, func(p string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					b, _ := os.ReadFile(p)
					noSecret(t, p, string(b), secret, escaped)
				}
				return nil
			})
		})
	}
	// A wrong password from the environment: an error, without it.
	t.Setenv("HOME", emptyHome)
	t.Setenv("MYSQL_PWD", "wrong-pw")
	_, err = OpenLMT("mysql://lmt@"+m.addr+"/lmt", Options{})
	if err == nil || !strings.Contains(err.Error(), "Access denied") || strings.Contains(err.Error(), "wrong-pw") {
		t.Errorf("wrong MYSQL_PWD: %v", err)
	}
}

func noSecret(t *testing.T, where, text string, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		if strings.Contains(text, s) {
			t.Errorf("%s holds the password %q", where, s)
		}
	}
}

// TestParseMySQL proves the address forms and their errors.
func TestParseMySQL(t *testing.T) {
	cases := []struct {
		in, net, addr, user, pass, db string
		ok                            bool
	}{
		{"mysql://u:p@host:3307/lmt", "tcp", "host:3307", "u", "p", "lmt", true},
		{"mysql://u@host/lmt", "tcp", "host:3306", "u", "", "lmt", true},
		{"mysql://u:p%40x@unix(/run/my.sock)/fs1", "unix", "/run/my.sock", "u", "p@x", "fs1", true},
		{"mysql://u:p@localhost/db?socket=/tmp/s", "unix", "/tmp/s", "u", "p", "db", true},
		{"mysql://host/lmt", "tcp", "host:3306", "", "", "lmt", true},  // user and password from the option files
		{"mysql:///lmt", "tcp", "127.0.0.1:3306", "", "", "lmt", true}, // the host too
		{"mysql://u@host", "", "", "", "", "", false},
		{"mysql://u@host/db?tls=true", "", "", "", "", "", false},
	}
	for _, c := range cases {
		cfg, name, err := parseMySQL(c.in)
		if (err == nil) != c.ok {
			t.Errorf("%s: error %v, want ok %v", c.in, err, c.ok)
			continue
		}
		if strings.Contains(name, ":p") {
			t.Errorf("%s: name %q shows the password", c.in, name)
		}
		if c.ok && (cfg.Net != c.net || cfg.Addr != c.addr || cfg.User != c.user || cfg.Passwd != c.pass || cfg.DBName != c.db) {
			t.Errorf("%s: %s %s user %s pass %s db %s", c.in, cfg.Net, cfg.Addr, cfg.User, cfg.Passwd, cfg.DBName)
		}
	}
}
