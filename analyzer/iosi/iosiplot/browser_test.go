package iosiplot

import (
	"path/filepath"
	"strings"
	"testing"

	"iopred/tests/browser"
)

// TestHTMLInChromium loads the --plot HTML page in headless Chromium: it
// reports no problem, fetches nothing but itself, shows the summary line
// and the figure as wide as the page with both panels' titles, and the
// screenshot is saved beside it.
func TestHTMLInChromium(t *testing.T) {
	dir := t.TempDir()
	page := filepath.Join(dir, "sig.html")
	if err := Write(page, signature(), Options{Title: "u/app/4"}); err != nil {
		t.Fatal(err)
	}
	b := browser.Start(t)
	url := "file://" + page
	b.Load(t, url)
	if p := b.Problems(); len(p) > 0 {
		t.Errorf("the page reported problems:\n%s", strings.Join(p, "\n"))
	}
	for _, u := range b.Requests() {
		if u != url && !strings.HasPrefix(u, "data:") {
			t.Errorf("the page fetched %s", u)
		}
	}
	var got struct {
		Text     string  `json:"text"`
		SVGWidth float64 `json:"svgWidth"`
		Body     float64 `json:"body"`
	}
	b.Eval(t, `(() => { const s = document.querySelector("svg").getBoundingClientRect();
		return {text: document.body.innerText + " " + Array.from(document.querySelectorAll("svg text")).map(e => e.textContent).join(" "),
			svgWidth: s.width, body: document.body.clientWidth}; })()`, &got)
	for _, want := range []string{"I/O signature of u/app/4", "Signature: 2 bursts", "u/app/4: 2 runs after preprocessing"} {
		if !strings.Contains(got.Text, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if got.SVGWidth < 0.9*got.Body {
		t.Errorf("figure %g px wide on a %g px page", got.SVGWidth, got.Body)
	}
	b.Screenshot(t, 1200, filepath.Join(dir, "sig.png"))
}
