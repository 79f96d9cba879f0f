package serverlog

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/go-sql-driver/mysql"
)

// MariaDB's clients take the password from their option files or the
// environment, where ps and shell history do not show it; iopred reads
// them the same way. The files are read in MariaDB's order, later ones
// overriding earlier ones; a --defaults-file replaces them all.
var defaultOptionFiles = []string{"/etc/my.cnf", "/etc/mysql/my.cnf", "~/.my.cnf"}

// optionGroups are the option file groups every MariaDB client reads.
var optionGroups = map[string]bool{"client": true, "client-server": true, "client-mariadb": true}

// clientOptions are the [client] settings of MariaDB's option files that
// a connection uses.
type clientOptions map[string]string

// readClientOptions reads the option files: defaultsFile alone when set
// (it must exist), else the default files that exist. Warnings (a
// world-writable file, which MariaDB ignores too) go to warn.
func readClientOptions(defaultsFile string, warn io.Writer) (clientOptions, error) {
	opts := clientOptions{}
	if defaultsFile != "" {
		if err := opts.read(defaultsFile, true, warn, 0); err != nil {
			return nil, err
		}
		return opts, nil
	}
	for _, f := range defaultOptionFiles {
		if strings.HasPrefix(f, "~/") {
			home, err := os.UserHomeDir()
			if err != nil {
				continue
			}
			f = filepath.Join(home, f[2:])
		}
		if err := opts.read(f, false, warn, 0); err != nil {
			return nil, err
		}
	}
	return opts, nil
}

func (o clientOptions) read(path string, mustExist bool, warn io.Writer, depth int) error {
	if depth > 10 {
		return fmt.Errorf("%s: option files include each other too deeply", path)
	}
	f, err := os.Open(path)
	if err != nil {
		if !mustExist && os.IsNotExist(err) {
			return nil
		}
		return fmt.Errorf("MySQL option file: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Mode().Perm()&0o002 != 0 {
		fmt.Fprintf(warn, "iopred: warning: %s is writable by everyone: ignored, as MariaDB ignores it\n", path)
		return nil
	}
	sc := bufio.NewScanner(f)
	inGroup := false
	for line := 1; sc.Scan(); line++ {
		s := strings.TrimSpace(sc.Text())
		switch {
		case s == "" || s[0] == '#' || s[0] == ';':
		case strings.HasPrefix(s, "!includedir"):
			dir := strings.TrimSpace(strings.TrimPrefix(s, "!includedir"))
			names, _ := filepath.Glob(filepath.Join(dir, "*.cnf"))
			sort.Strings(names)
			for _, n := range names {
				if err := o.read(n, false, warn, depth+1); err != nil {
					return err
				}
			}
		case strings.HasPrefix(s, "!include"):
			if err := o.read(strings.TrimSpace(strings.TrimPrefix(s, "!include")), false, warn, depth+1); err != nil {
				return err
			}
		case s[0] == '[':
			end := strings.IndexByte(s, ']')
			if end < 0 {
				return fmt.Errorf("%s:%d: a group without ]", path, line)
			}
			inGroup = optionGroups[strings.ToLower(strings.TrimSpace(s[1:end]))]
		case inGroup:
			key, val, hasVal := strings.Cut(s, "=")
			key = strings.ReplaceAll(strings.ToLower(strings.TrimSpace(key)), "_", "-")
			if !hasVal {
				continue // "password" alone asks on a terminal; iopred has none to ask on
			}
			v, err := optionValue(strings.TrimSpace(val))
			if err != nil {
				// The line may hold a password: name the key, not the value.
				return fmt.Errorf("%s:%d: %s: %v", path, line, key, err)
			}
			o[key] = v
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	return nil
}

// optionValue unquotes a value as MariaDB does: '...' or "..." with
// backslash escapes, or bare text up to a comment.
func optionValue(v string) (string, error) {
	if v == "" {
		return "", nil
	}
	if q := v[0]; q == '\'' || q == '"' {
		var b strings.Builder
		for i := 1; i < len(v); i++ {
			c := v[i]
			if c == q {
				return b.String(), nil
			}
			if c == '\\' && i+1 < len(v) {
				i++
				switch v[i] {
				case 'n':
					c = '\n'
				case 't':
					c = '\t'
				case 'r':
					c = '\r'
				case 'b':
					c = '\b'
				case 's':
					c = ' '
				default:
					c = v[i]
				}
			}
			b.WriteByte(c)
		}
		return "", fmt.Errorf("quote not closed")
	}
	for i := 1; i < len(v); i++ {
		if v[i] == '#' && (v[i-1] == ' ' || v[i-1] == '\t') {
			v = strings.TrimSpace(v[:i])
			break
		}
	}
	return v, nil
}

// given says which parts of a connection a mysql:// address named.
type given struct{ user, password, host bool }

// applyClientDefaults completes cfg with what the address left out, as a
// MariaDB client does: from the option files, then MYSQL_PWD for the
// password, and the login name for the user.
func applyClientDefaults(cfg *mysql.Config, g given, opts clientOptions) error {
	if !g.user {
		cfg.User = opts["user"]
		if cfg.User == "" {
			if u, err := user.Current(); err == nil {
				cfg.User = u.Username
			}
		}
	}
	if !g.password {
		if p, ok := opts["password"]; ok {
			cfg.Passwd = p
		} else {
			cfg.Passwd = os.Getenv("MYSQL_PWD")
		}
	}
	if !g.host {
		host, socket := opts["host"], opts["socket"]
		switch {
		case socket != "" && (host == "" || host == "localhost"):
			cfg.Net, cfg.Addr = "unix", socket
		case host != "":
			port := "3306"
			if p := opts["port"]; p != "" {
				if _, err := strconv.Atoi(p); err != nil {
					return fmt.Errorf("MySQL option port=%q is not a number", p)
				}
				port = p
			}
			cfg.Net, cfg.Addr = "tcp", host+":"+port
		}
	}
	return nil
}
