package serverlog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// The option files are read as MariaDB's clients read them: the client
// groups only, quotes and escapes, comments, !include and !includedir,
// later files over earlier ones, and world-writable files ignored.
func TestReadClientOptions(t *testing.T) {
	dir := t.TempDir()
	inc := filepath.Join(dir, "conf.d")
	os.Mkdir(inc, 0o700)
	os.WriteFile(filepath.Join(inc, "a.cnf"), []byte("[client]\nport = 3307\n"), 0o600)
	os.WriteFile(filepath.Join(inc, "skip.txt"), []byte("[client]\nport = 1\n"), 0o600)
	main := filepath.Join(dir, "my.cnf")
	os.WriteFile(main, []byte(`# comment
[mysqld]
password = server-side
[client]
user = lmt   # trailing comment
password = "s3cr:t@/ \"q\" #x"
[client-server]
socket = /run/x.sock
!includedir `+inc+`
[mysql]
host = other
`), 0o600)
	var warn strings.Builder
	o, err := readClientOptions(main, &warn)
	if err != nil {
		t.Fatal(err)
	}
	want := clientOptions{"user": "lmt", "password": `s3cr:t@/ "q" #x`, "socket": "/run/x.sock", "port": "3307"}
	for k, v := range want {
		if o[k] != v {
			t.Errorf("%s = %q, want %q", k, o[k], v)
		}
	}
	if len(o) != len(want) {
		t.Errorf("options %v, want %v", o, want)
	}
	if _, err := readClientOptions(filepath.Join(dir, "missing.cnf"), &warn); err == nil {
		t.Error("a missing --defaults-file is not an error")
	}
	// A bad line names the key, never the value (it may be a password).
	bad := filepath.Join(dir, "bad.cnf")
	os.WriteFile(bad, []byte("[client]\npassword = \"hunter2\n"), 0o600)
	if _, err := readClientOptions(bad, &warn); err == nil || strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "bad.cnf:2: password") {
		t.Errorf("bad quote: %v", err)
	}
	open := filepath.Join(dir, "open.cnf")
	os.WriteFile(open, []byte("[client]\npassword = planted\n"), 0o600)
	os.Chmod(open, 0o666)
	o, err = readClientOptions(open, &warn)
	if err != nil || o["password"] != "" || !strings.Contains(warn.String(), "writable by everyone") {
		t.Errorf("world-writable file: %v %v %q", o, err, warn.String())
	}
}

// The address wins over the option files, which win over MYSQL_PWD.
func TestApplyClientDefaults(t *testing.T) {
	t.Setenv("MYSQL_PWD", "from-env")
	files := clientOptions{"user": "fu", "password": "from-file", "host": "db1", "port": "3310"}
	for _, c := range []struct {
		url, files            string
		user, pass, net, addr string
	}{
		{"mysql://u:p@h/db", "all", "u", "p", "tcp", "h:3306"},
		{"mysql://u@h/db", "all", "u", "from-file", "tcp", "h:3306"},
		{"mysql://u@h/db", "none", "u", "from-env", "tcp", "h:3306"},
		{"mysql:///db", "all", "fu", "from-file", "tcp", "db1:3310"},
		{"mysql://unix(/s)/db", "all", "fu", "from-file", "unix", "/s"},
	} {
		cfg, _, g, err := parseMySQLURL(c.url)
		if err != nil {
			t.Fatal(err)
		}
		o := files
		if c.files == "none" {
			o = clientOptions{}
		}
		if err := applyClientDefaults(cfg, g, o); err != nil {
			t.Fatal(err)
		}
		if cfg.User != c.user || cfg.Passwd != c.pass || cfg.Net != c.net || cfg.Addr != c.addr {
			t.Errorf("%s with %s files: %s:%s@%s(%s)", c.url, c.files, cfg.User, cfg.Passwd, cfg.Net, cfg.Addr)
		}
	}
	cfg := mysql.NewConfig()
	if err := applyClientDefaults(cfg, given{}, clientOptions{"host": "h", "port": "x"}); err == nil {
		t.Error("a bad port is not an error")
	}
}

// A spec's name (in messages, the store index and AID's knowledge base)
// never holds the address's password.
func TestSpecStringRedactsPassword(t *testing.T) {
	for in, want := range map[string]string{
		"mysql://u:s3cr%3At@h:3306/db":   "--lmt mysql://u@h:3306/db",
		"mysql://:pw@unix(/s)/db":        "--lmt mysql://@unix(/s)/db",
		"mysql://u@h/db":                 "--lmt mysql://u@h/db",
		"/data/lmt:with:colons@2.sqlite": "--lmt /data/lmt:with:colons@2.sqlite",
	} {
		if got := (Spec{Kind: "lmt", Path: in}).String(); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
}
