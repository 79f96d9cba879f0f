package main

import (
	"os/exec"
	"strings"
	"testing"
)

// The library starts in every traced process, so every package initialiser
// it links runs there too: the plotting stack's font packages once cost
// about 3 ms per process. Nothing that draws may be linked in.
func TestNoPlottingLinked(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Skipf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{"gonum.org/v1/plot", "golang.org/x/image", "go-fonts", "go-latex"} {
			if strings.Contains(dep, banned) {
				t.Errorf("libiopred links %s", dep)
			}
		}
	}
}
