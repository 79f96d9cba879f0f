package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"iopred/tracefmt"
	"iopred/tracefmt/anonymize"
)

// The analyses on an anonymized trace set give the original's figures:
// summary, period and patterns as JSON are equal once each name of the
// original output is replaced by its hash (and lists compared whatever
// their order, since names sort differently once hashed). The traces are
// real runs (IOR over MPI on 4 ranks, LAMMPS, fio) that nothing here was
// tuned on.
func TestAnonymizedAnalysesEqual(t *testing.T) {
	key := filepath.Join(t.TempDir(), "sub", "key")
	for _, set := range []string{"ior", "lammps", "fio"} {
		t.Run(set, func(t *testing.T) {
			in := filepath.Join("..", "..", "centersim", "traces", set)
			out := t.TempDir()
			if code, _, errs := run("anonymize", in, "-o", out, "--key", key); code != 0 {
				t.Fatalf("anonymize: %s", errs)
			}
			k, err := anonymize.LoadKey(key)
			if err != nil {
				t.Fatal(err)
			}
			names := nameMap(t, anonymize.New(k), in, out)
			for _, cmd := range [][]string{{"summary", "--json"}, {"period", "--json"}, {"patterns", "--json"}} {
				orig := jsonOf(t, append(cmd, in)...)
				anon := jsonOf(t, append(cmd, out)...)
				hashed := hashedPaths(names)
				mapped := canonical(maskPaths(replaceNames(orig, names), hashed))
				if got := canonical(maskPaths(anon, hashed)); !reflect.DeepEqual(mapped, got) {
					t.Errorf("%s differs: %s", cmd[0], firstDiff("", mapped, got))
				}
				if leaked := leaks(anon, names); leaked != "" {
					t.Errorf("%s of the anonymized traces shows %q", cmd[0], leaked)
				}
			}
			// No name of the originals is anywhere in the anonymized files.
			ents, _ := os.ReadDir(out)
			for _, e := range ents {
				var all []string
				s, err := tracefmt.Open(filepath.Join(out, e.Name()))
				if err != nil {
					t.Fatal(err)
				}
				h := s.Header()
				all = append(all, h.Program, h.Host, e.Name())
				all = append(all, h.Args...)
				s.Each(func(r tracefmt.Record) error {
					if r.File != nil {
						all = append(all, r.File.Path)
					}
					if r.Context != nil {
						for _, f := range r.Context.Frames {
							all = append(all, f.Module)
						}
					}
					return nil
				})
				s.Close()
				for _, v := range all {
					if _, isOrig := names[v]; isOrig && names[v] != v {
						t.Errorf("%s holds the original name %q", e.Name(), v)
					}
				}
			}
		})
	}
	st, err := os.Stat(key)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("key file: %v %v, want mode 600", st.Mode(), err)
	}
	if st, _ := os.Stat(filepath.Dir(key)); st.Mode().Perm() != 0o700 {
		t.Errorf("key directory mode %v, want 700", st.Mode())
	}
}

// nameMap maps every name in the original traces (paths, programs, hosts,
// modules, the traces' own paths) to its hash.
func nameMap(t *testing.T, a *anonymize.Anonymizer, in, out string) map[string]string {
	t.Helper()
	m := map[string]string{}
	files, err := tracefmt.Discover(in)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		s, err := tracefmt.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		h := s.Header()
		m[h.Program] = a.Path(h.Program)
		m[filepath.Base(h.Program)] = filepath.Base(a.Path(h.Program))
		m[h.Host] = a.Token(h.Host)
		m[name] = filepath.Join(out, a.TraceName(filepath.Base(name), h))
		s.Each(func(r tracefmt.Record) error {
			if r.File != nil {
				m[r.File.Path] = a.Path(r.File.Path)
			}
			if r.Context != nil {
				for _, f := range r.Context.Frames {
					m[f.Module] = a.Path(f.Module)
					m[filepath.Base(f.Module)] = filepath.Base(a.Path(f.Module))
				}
			}
			return nil
		})
		s.Close()
	}
	m[in] = out
	return m
}

func jsonOf(t *testing.T, args ...string) any {
	t.Helper()
	code, stdout, stderr := run(args...)
	if code != 0 {
		t.Fatalf("%v: %s", args, stderr)
	}
	var v any
	if err := json.Unmarshal([]byte(stdout), &v); err != nil {
		t.Fatalf("%v: %v\n%.500s", args, err, stdout)
	}
	return v
}

// replaceNames replaces the original names in v by their hashes: whole
// strings, and paths inside sentences (a finding's evidence).
func replaceNames(v any, names map[string]string) any {
	var paths []string
	for n := range names {
		if strings.Contains(n, "/") {
			paths = append(paths, n)
		}
	}
	sort.Slice(paths, func(i, j int) bool { return len(paths[i]) > len(paths[j]) })
	return replaceIn(v, names, paths)
}

func replaceIn(v any, names map[string]string, paths []string) any {
	switch x := v.(type) {
	case string:
		if h, ok := names[x]; ok {
			return h
		}
		for _, p := range paths {
			if strings.Contains(x, p) {
				x = strings.ReplaceAll(x, p, names[p])
			}
		}
		// A context's frame, "module+0xoffset (function)".
		if m, rest, ok := strings.Cut(x, "+0x"); ok {
			if h, known := names[m]; known {
				x = h + "+0x" + rest
			}
		}
		return x
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = replaceIn(x[i], names, paths)
		}
		return out
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if h, ok := names[k]; ok {
				k = h
			}
			out[k] = replaceIn(e, names, paths)
		}
		return out
	}
	return v
}

// canonical sorts lists of objects and strings by their JSON, so that an
// order by name compares equal; lists of numbers keep their order.
func canonical(v any) any {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		sortable := len(x) > 0
		for i := range x {
			out[i] = canonical(x[i])
			switch out[i].(type) {
			case map[string]any, string:
			default:
				sortable = false
			}
		}
		if sortable {
			sort.Slice(out, func(i, j int) bool { return fmt.Sprint(mustJSON(out[i])) < fmt.Sprint(mustJSON(out[j])) })
		}
		return out
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[k] = canonical(e)
		}
		return out
	}
	return v
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// leaks returns an original name (one the anonymization changes, longer
// than 3 bytes) found in v's JSON, or "".
func leaks(v any, names map[string]string) string {
	s := mustJSON(v)
	for orig, h := range names {
		if orig != h && len(orig) > 3 && !strings.HasPrefix(orig, "..") && strings.Contains(s, orig) {
			return orig
		}
	}
	return ""
}

func hashedPaths(names map[string]string) []string {
	var out []string
	for orig, h := range names {
		if strings.Contains(orig, "/") && orig != h {
			out = append(out, h)
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// maskPaths replaces the hashed paths inside sentences (not whole
// strings, which stay compared) with one placeholder: a finding that
// names one of several tied files picks it by name, and names sort
// differently once hashed.
func maskPaths(v any, hashed []string) any {
	switch x := v.(type) {
	case string:
		if !strings.Contains(x, " ") {
			return x
		}
		for _, h := range hashed {
			x = strings.ReplaceAll(x, h, "<path>")
		}
		return x
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = maskPaths(x[i], hashed)
		}
		return out
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[k] = maskPaths(e, hashed)
		}
		return out
	}
	return v
}

// firstDiff describes where a and b first differ.
func firstDiff(at string, a, b any) string {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s: %.300s vs %.300s", at, mustJSON(a), mustJSON(b))
		}
		for k := range x {
			if _, ok := y[k]; !ok {
				return fmt.Sprintf("%s/%s: only in the original", at, k)
			}
			if !reflect.DeepEqual(x[k], y[k]) {
				return firstDiff(at+"/"+k, x[k], y[k])
			}
		}
		for k := range y {
			if _, ok := x[k]; !ok {
				return fmt.Sprintf("%s/%s: only in the anonymized", at, k)
			}
		}
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return fmt.Sprintf("%s: %.300s vs %.300s", at, mustJSON(a), mustJSON(b))
		}
		for i := range x {
			if !reflect.DeepEqual(x[i], y[i]) {
				return firstDiff(fmt.Sprintf("%s[%d]", at, i), x[i], y[i])
			}
		}
	}
	return fmt.Sprintf("%s: %.300s vs %.300s", at, mustJSON(a), mustJSON(b))
}
