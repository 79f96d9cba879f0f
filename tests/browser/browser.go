// Package browser drives a real headless Chromium for the tests of
// iopred's HTML output, through the DevTools protocol over the pipe
// Chromium opens with --remote-debugging-pipe (no port, no other
// program): it loads a page, records what the page logged and fetched,
// evaluates script in it and takes screenshots.
package browser

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"iopred/tests/testenv"
)

// Browser is a running headless Chromium with one page.
type Browser struct {
	cmd     *exec.Cmd
	in      *os.File // Chromium reads commands here (its fd 3)
	out     *bufio.Reader
	session string
	stderr  strings.Builder

	mu      sync.Mutex
	next    int
	waiting map[int]chan reply
	events  []Event
	signal  chan struct{}
	readErr error
	done    chan struct{}
}

// Event is a protocol event the page sent.
type Event struct {
	Method string
	Params json.RawMessage
}

type protoError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

type reply struct {
	Result json.RawMessage
	Err    *protoError
}

type message struct {
	ID        int             `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *protoError     `json:"error,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
}

// Timeout bounds each protocol call and each wait.
const Timeout = 60 * time.Second

// Start starts Chromium (a missing one fails the test unless
// IOPRED_SKIP_MISSING_TOOLS=1) with the flags of a sandboxed CI run and a
// private profile, opens a page and enables the domains the tests read:
// Runtime and Log (console messages, exceptions), Network (requests) and
// Page (load events). Cleanup stops it.
func Start(t testing.TB) *Browser {
	t.Helper()
	bin := testenv.Tool(t, "chromium")
	toChrome, chromeIn, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	chromeOut, fromChrome, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	b := &Browser{in: chromeIn, out: bufio.NewReaderSize(chromeOut, 1<<20), waiting: map[int]chan reply{},
		signal: make(chan struct{}, 1), done: make(chan struct{})}
	b.cmd = exec.Command(bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
		"--user-data-dir="+t.TempDir(), "--remote-debugging-pipe", "about:blank")
	b.cmd.ExtraFiles = []*os.File{toChrome, fromChrome} // fds 3 and 4
	b.cmd.Stderr = &lockedWriter{b: &b.stderr, mu: &b.mu}
	if err := b.cmd.Start(); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	toChrome.Close()
	fromChrome.Close()
	go b.read()
	t.Cleanup(func() { b.stop(t) })

	var target struct {
		TargetID string `json:"targetId"`
	}
	b.call(t, "", "Target.createTarget", map[string]any{"url": "about:blank"}, &target)
	var att struct {
		SessionID string `json:"sessionId"`
	}
	b.call(t, "", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &att)
	b.session = att.SessionID
	for _, d := range []string{"Runtime.enable", "Log.enable", "Network.enable", "Page.enable"} {
		b.Call(t, d, nil, nil)
	}
	return b
}

type lockedWriter struct {
	b  *strings.Builder
	mu *sync.Mutex
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// read dispatches Chromium's messages: replies to their callers, events
// to the list.
func (b *Browser) read() {
	defer close(b.done)
	for {
		raw, err := b.out.ReadBytes(0)
		if err != nil {
			b.mu.Lock()
			b.readErr = err
			for id, ch := range b.waiting {
				close(ch)
				delete(b.waiting, id)
			}
			b.mu.Unlock()
			return
		}
		var m message
		if err := json.Unmarshal(raw[:len(raw)-1], &m); err != nil {
			continue
		}
		b.mu.Lock()
		if m.ID != 0 {
			if ch, ok := b.waiting[m.ID]; ok {
				ch <- reply{Result: m.Result, Err: m.Error}
				delete(b.waiting, m.ID)
			}
		} else if m.Method != "" {
			b.events = append(b.events, Event{m.Method, m.Params})
			select {
			case b.signal <- struct{}{}:
			default:
			}
		}
		b.mu.Unlock()
	}
}

// Call sends a command to the page and decodes its result into out (if
// not nil); a protocol error or a timeout fails the test.
func (b *Browser) Call(t testing.TB, method string, params any, out any) {
	t.Helper()
	b.call(t, b.session, method, params, out)
}

func (b *Browser) call(t testing.TB, session, method string, params any, out any) {
	t.Helper()
	p, err := json.Marshal(params)
	if err != nil {
		t.Fatal(err)
	}
	if params == nil {
		p = nil
	}
	ch := make(chan reply, 1)
	b.mu.Lock()
	if b.readErr != nil {
		b.mu.Unlock()
		t.Fatalf("%s: chromium is gone (%v): %s", method, b.readErr, b.Stderr())
	}
	b.next++
	id := b.next
	b.waiting[id] = ch
	b.mu.Unlock()
	msg, _ := json.Marshal(message{ID: id, Method: method, Params: p, SessionID: session})
	if _, err := b.in.Write(append(msg, 0)); err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	select {
	case r, ok := <-ch:
		if !ok {
			t.Fatalf("%s: chromium closed the pipe: %s", method, b.Stderr())
		}
		if r.Err != nil {
			t.Fatalf("%s: %s (%d)", method, r.Err.Message, r.Err.Code)
		}
		if out != nil {
			if err := json.Unmarshal(r.Result, out); err != nil {
				t.Fatalf("%s: %v in %s", method, err, r.Result)
			}
		}
	case <-time.After(Timeout):
		t.Fatalf("%s: no answer within %v", method, Timeout)
	}
}

// Stderr is what Chromium printed.
func (b *Browser) Stderr() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.stderr.String()
}

// Events returns the events received so far.
func (b *Browser) Events() []Event {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]Event(nil), b.events...)
}

// WaitEvent waits for an event of the method received after the first
// `after` events and returns its index.
func (b *Browser) WaitEvent(t testing.TB, method string, after int) int {
	t.Helper()
	deadline := time.After(Timeout)
	for {
		evs := b.Events()
		for i := after; i < len(evs); i++ {
			if evs[i].Method == method {
				return i
			}
		}
		select {
		case <-b.signal:
		case <-deadline:
			t.Fatalf("no %s within %v", method, Timeout)
		}
	}
}

// Load navigates to url and waits until the page has loaded.
func (b *Browser) Load(t testing.TB, url string) {
	t.Helper()
	n := len(b.Events())
	var nav struct {
		ErrorText string `json:"errorText"`
	}
	b.Call(t, "Page.navigate", map[string]any{"url": url}, &nav)
	if nav.ErrorText != "" {
		t.Fatalf("navigate %s: %s", url, nav.ErrorText)
	}
	b.WaitEvent(t, "Page.loadEventFired", n)
}

// Problems lists what the page reported as wrong since it started: console
// errors and warnings, uncaught exceptions, log entries of level error or
// warning.
func (b *Browser) Problems() []string {
	var out []string
	for _, e := range b.Events() {
		switch e.Method {
		case "Runtime.consoleAPICalled":
			var p struct {
				Type string `json:"type"`
				Args []struct {
					Value       any    `json:"value"`
					Description string `json:"description"`
				} `json:"args"`
			}
			json.Unmarshal(e.Params, &p)
			if p.Type == "error" || p.Type == "warning" || p.Type == "assert" {
				var parts []string
				for _, a := range p.Args {
					parts = append(parts, fmt.Sprint(a.Value, a.Description))
				}
				out = append(out, "console."+p.Type+": "+strings.Join(parts, " "))
			}
		case "Runtime.exceptionThrown":
			out = append(out, "exception: "+string(e.Params))
		case "Log.entryAdded":
			var p struct {
				Entry struct {
					Level  string `json:"level"`
					Text   string `json:"text"`
					URL    string `json:"url"`
					Source string `json:"source"`
				} `json:"entry"`
			}
			json.Unmarshal(e.Params, &p)
			if p.Entry.Level == "error" || p.Entry.Level == "warning" {
				out = append(out, fmt.Sprintf("log %s (%s): %s %s", p.Entry.Level, p.Entry.Source, p.Entry.Text, p.Entry.URL))
			}
		}
	}
	return out
}

// Requests lists the URLs the page asked for.
func (b *Browser) Requests() []string {
	var out []string
	for _, e := range b.Events() {
		if e.Method != "Network.requestWillBeSent" {
			continue
		}
		var p struct {
			Request struct {
				URL string `json:"url"`
			} `json:"request"`
		}
		json.Unmarshal(e.Params, &p)
		out = append(out, p.Request.URL)
	}
	return out
}

// Eval evaluates a JavaScript expression in the page and decodes its
// value (JSON-serialisable) into out; an exception fails the test.
func (b *Browser) Eval(t testing.TB, expr string, out any) {
	t.Helper()
	var r struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		Exception *struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	b.Call(t, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true}, &r)
	if r.Exception != nil {
		t.Fatalf("%s: %s %s", expr, r.Exception.Text, r.Exception.Exception.Description)
	}
	if out != nil {
		if err := json.Unmarshal(r.Result.Value, out); err != nil {
			t.Fatalf("%s: %v in %s", expr, err, r.Result.Value)
		}
	}
}

// Screenshot renders the whole page at width CSS pixels into a PNG file.
func (b *Browser) Screenshot(t testing.TB, width int, path string) {
	t.Helper()
	var height int
	b.Eval(t, "Math.ceil(document.documentElement.scrollHeight)", &height)
	height = min(max(height, 200), 16000)
	b.Call(t, "Emulation.setDeviceMetricsOverride", map[string]any{"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false}, nil)
	var shot struct {
		Data string `json:"data"`
	}
	b.Call(t, "Page.captureScreenshot", map[string]any{"format": "png", "captureBeyondViewport": true}, &shot)
	png, err := base64.StdEncoding.DecodeString(shot.Data)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// stop closes the browser and waits for it.
func (b *Browser) stop(t testing.TB) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	exited := make(chan error, 1)
	go func() { exited <- b.cmd.Wait() }()
	msg, _ := json.Marshal(message{ID: 1 << 30, Method: "Browser.close"})
	b.in.Write(append(msg, 0))
	select {
	case <-exited:
	case <-ctx.Done():
		b.cmd.Process.Kill()
		<-exited
		t.Logf("chromium did not close within 10 s; killed")
	}
	b.in.Close()
	<-b.done
	if b.readErr != nil && !errors.Is(b.readErr, io.EOF) && !strings.Contains(b.readErr.Error(), "closed") {
		t.Logf("chromium pipe: %v", b.readErr)
	}
}
