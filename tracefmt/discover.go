package tracefmt

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Discover expands its arguments into trace names for Open. A directory
// stands for the traces directly inside it, sorted by name: iopred's
// *.iopred.zst files and the files of every registered format (by suffix).
// A file is kept as given, or, when a registered format holds several
// processes in it, becomes one "<path>#<proc>" name per process. Arguments
// keep their order. A directory without traces or a path that does not
// exist is an error.
func Discover(paths ...string) ([]string, error) {
	var out []string
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			if path, proc := splitProcess(p); proc != "" {
				out = append(out, path+"#"+proc)
				continue
			}
			return nil, err
		}
		if !fi.IsDir() {
			names, err := discoverFile(p)
			if err != nil {
				return nil, err
			}
			out = append(out, names...)
			continue
		}
		ents, err := os.ReadDir(p)
		if err != nil {
			return nil, err
		}
		var found []string
		for _, e := range ents {
			if e.IsDir() {
				continue
			}
			name := e.Name()
			if strings.HasSuffix(name, FileSuffix) {
				found = append(found, filepath.Join(p, name))
			} else if _, ok := formatBySuffix(name); ok {
				found = append(found, filepath.Join(p, name))
			}
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("%s: no trace in this directory (*%s%s)", p, FileSuffix, otherSuffixes())
		}
		sort.Strings(found)
		for _, f := range found {
			names, err := discoverFile(f)
			if err != nil {
				return nil, err
			}
			out = append(out, names...)
		}
	}
	return out, nil
}

// discoverFile returns the trace names of one file.
func discoverFile(path string) ([]string, error) {
	f, ok, err := formatOf(path)
	if err != nil {
		return nil, err
	}
	if !ok {
		return []string{path}, nil
	}
	return expand(path, f)
}

// otherSuffixes lists the registered formats' suffixes for a message.
func otherSuffixes() string {
	var b strings.Builder
	for _, f := range registered() {
		for _, s := range f.Suffixes {
			b.WriteString(", *")
			b.WriteString(s)
		}
	}
	return b.String()
}
