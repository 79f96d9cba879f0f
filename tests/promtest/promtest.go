// Package promtest starts a real Prometheus server (Debian's prometheus
// and promtool) for the integration tests: over a TSDB backfilled from an
// LMT database with promtool tsdb create-blocks-from openmetrics, or
// scraping an exporter the test runs. The server listens on 127.0.0.1 on
// a free port and is stopped when the test ends.
package promtest

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite" // the LMT database the tests export

	"iopred/tests/testenv"
)

// Server is a Prometheus server a test started.
type Server struct {
	URL string // http://127.0.0.1:PORT
	Dir string // its TSDB
	Log string // its log file

	cmd  *exec.Cmd
	done chan error
	work string
}

// FreePort returns a TCP port on 127.0.0.1 nobody listens on now.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Start runs prometheus over the TSDB in dir (made if missing) with the
// given scrape configuration (the scrape_configs list in YAML, or empty
// for none), waits until it is ready and stops it when the test ends.
func Start(t testing.TB, dir, scrapeConfigs string) *Server {
	t.Helper()
	s, err := Launch(testenv.Tool(t, "prometheus"), dir, scrapeConfigs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

// Launch is Start for a server that outlives one test: the caller stops
// it. Retention is a hundred years, so that backfilled blocks of 2024
// are kept.
func Launch(bin, dir, scrapeConfigs string) (*Server, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp("", "iopred-promcfg")
	if err != nil {
		return nil, err
	}
	cfg := filepath.Join(work, "prometheus.yml")
	body := "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
	if scrapeConfigs != "" {
		body += "scrape_configs:\n" + scrapeConfigs
	}
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	s := &Server{URL: fmt.Sprintf("http://127.0.0.1:%d", port), Dir: dir, Log: filepath.Join(work, "prometheus.log"), work: work}
	logf, err := os.Create(s.Log)
	if err != nil {
		return nil, err
	}
	s.cmd = exec.Command(bin, "--config.file="+cfg, "--storage.tsdb.path="+dir, "--storage.tsdb.retention.time=100y",
		fmt.Sprintf("--web.listen-address=127.0.0.1:%d", port), "--log.level=warn")
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	s.done = make(chan error, 1)
	go func() { s.done <- s.cmd.Wait(); logf.Close() }()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		resp, err := http.Get(s.URL + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s, nil
			}
		}
		select {
		case err := <-s.done:
			b, _ := os.ReadFile(s.Log)
			s.done <- err
			return nil, fmt.Errorf("prometheus exited: %v\n%s", err, b)
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(s.Log)
			s.Stop()
			return nil, fmt.Errorf("prometheus not ready after 2 minutes\n%s", b)
		}
	}
}

// Stop stops the server (SIGTERM, then SIGKILL after 30 s).
func (s *Server) Stop() {
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		s.cmd.Process.Kill()
		<-s.done
	}
	s.cmd = nil
	os.RemoveAll(s.work)
}

// Names are the metric and label names an export writes.
type Names struct {
	Read, Write string // counter sample names, ending in _total
	OSTLabel    string
	Extra       string // more labels, as in component="ost"
}

// LustreExporter are lustre_exporter's names.
var LustreExporter = Names{Read: "lustre_read_bytes_total", Write: "lustre_write_bytes_total", OSTLabel: "target", Extra: `component="ost"`}

// ExportLMT writes an LMT database's OST_DATA counters as OpenMetrics:
// one counter family for reads and one for writes, one series per OST,
// each reading at its TIMESTAMP (read in loc) with its exact value. With
// decoys, the first OST also gets a client-side series of the same
// names (component="client", three times the counters) that a reader
// must leave out.
func ExportLMT(t testing.TB, lmt, out string, names Names, loc *time.Location, decoys bool) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+lmt+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	osts := map[int64]string{}
	var firstID int64 = math.MaxInt64
	rows, err := db.Query("SELECT OST_ID, OST_NAME FROM OST_INFO")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id int64
		var name string
		if err := rows.Scan(&id, &name); err != nil {
			t.Fatal(err)
		}
		osts[id] = name
		firstID = min(firstID, id)
	}
	rows.Close()
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	for _, m := range []struct{ sample, col string }{{names.Read, "READ_BYTES"}, {names.Write, "WRITE_BYTES"}} {
		family := strings.TrimSuffix(m.sample, "_total")
		fmt.Fprintf(w, "# TYPE %s counter\n", family)
		for _, component := range []string{"", "client"} {
			if component != "" && !decoys {
				continue
			}
			rows, err := db.Query("SELECT d.OST_ID, t.TIMESTAMP, d." + m.col + " FROM OST_DATA d JOIN TIMESTAMP_INFO t ON t.TS_ID = d.TS_ID ORDER BY d.OST_ID, t.TS_ID")
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var id int64
				var ts string
				var v uint64
				if err := rows.Scan(&id, &ts, &v); err != nil {
					t.Fatal(err)
				}
				at, err := time.ParseInLocation("2006-01-02 15:04:05", ts, loc)
				if err != nil {
					t.Fatal(err)
				}
				if component != "" && id != firstID {
					continue
				}
				labels := names.OSTLabel + `="` + osts[id] + `"`
				if names.Extra != "" {
					extra := names.Extra
					if component != "" {
						extra = `component="` + component + `"`
						v *= 3
					}
					labels = extra + "," + labels
				}
				fmt.Fprintf(w, "%s{%s} %s %d\n", m.sample, labels, strconv.FormatUint(v, 10), at.Unix())
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			rows.Close()
		}
	}
	fmt.Fprintln(w, "# EOF")
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// Backfill turns an OpenMetrics file into TSDB blocks in dir with
// promtool tsdb create-blocks-from openmetrics.
func Backfill(t testing.TB, openMetrics, dir string) {
	t.Helper()
	promtool := testenv.Tool(t, "promtool")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, promtool, "tsdb", "create-blocks-from", "openmetrics", "--quiet", openMetrics, dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool tsdb create-blocks-from openmetrics: %v\n%s", err, out)
	}
}
