package tracefmt

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Discover expands its arguments into trace files: a directory stands for
// the *.iopred.zst files directly inside it, sorted by name; a file is
// kept as given. Arguments keep their order. A directory without traces or
// a path that does not exist is an error.
func Discover(paths ...string) ([]string, error) {
	var out []string
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			out = append(out, p)
			continue
		}
		ents, err := os.ReadDir(p)
		if err != nil {
			return nil, err
		}
		var found []string
		for _, e := range ents {
			if !e.IsDir() && strings.HasSuffix(e.Name(), FileSuffix) {
				found = append(found, filepath.Join(p, e.Name()))
			}
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("%s: no *%s trace in this directory", p, FileSuffix)
		}
		sort.Strings(found)
		out = append(out, found...)
	}
	return out, nil
}
