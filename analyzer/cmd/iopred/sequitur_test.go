package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// expandJSON rebuilds the input from the --json rules.
func expandJSON(t *testing.T, rules []struct {
	ID   int   `json:"id"`
	Body []any `json:"body"`
}) []int {
	t.Helper()
	byID := map[int][]any{}
	for _, r := range rules {
		byID[r.ID] = r.Body
	}
	var out []int
	var walk func(id, depth int)
	walk = func(id, depth int) {
		if depth > 100 {
			t.Fatal("rule cycle")
		}
		for _, v := range byID[id] {
			switch x := v.(type) {
			case float64:
				out = append(out, int(x))
			case string:
				n, err := strconv.Atoi(strings.TrimPrefix(x, "R"))
				if err != nil || !strings.HasPrefix(x, "R") {
					t.Fatalf("bad rule reference %q", x)
				}
				walk(n, depth+1)
			default:
				t.Fatalf("bad body element %v", v)
			}
		}
	}
	walk(0, 0)
	return out
}

// TestSequiturCommand proves the JSON output parses, its rules expand to
// the input (integers and --bytes), and --predict adds the accuracy keys.
func TestSequiturCommand(t *testing.T) {
	dir := t.TempDir()
	ints := filepath.Join(dir, "ints.txt")
	var sb strings.Builder
	var want []int
	for i := 0; i < 300; i++ {
		v := []int{3, 1, 4, 1, 5, 9}[i%6]
		want = append(want, v)
		sb.WriteString(strconv.Itoa(v))
		if i%10 == 9 {
			sb.WriteString("\n")
		} else {
			sb.WriteString(" ")
		}
	}
	os.WriteFile(ints, []byte(sb.String()), 0o644)
	raw := filepath.Join(dir, "raw.bin")
	os.WriteFile(raw, []byte("abbbabcbb"), 0o644)
	tests := []struct {
		name    string
		args    []string
		want    []int
		predict bool
	}{
		{"ints", []string{"--json", ints}, want, false},
		{"ints predict", []string{"--json", "--predict", ints}, want, true},
		{"bytes", []string{"--json", "--bytes", raw}, []int{'a', 'b', 'b', 'b', 'a', 'b', 'c', 'b', 'b'}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			if err := runSequitur(tc.args, &out, &errb); err != nil {
				t.Fatal(err, errb.String())
			}
			var got struct {
				Rules []struct {
					ID   int   `json:"id"`
					Body []any `json:"body"`
				} `json:"rules"`
				Accuracy     *float64          `json:"accuracy"`
				AccuracyLast *float64          `json:"accuracy_last_half"`
				Weighted     *float64          `json:"accuracy_weighted"`
				WeightedLast *float64          `json:"accuracy_weighted_last_half"`
				GrammarSize  *int              `json:"grammar_size"`
				Steps        []json.RawMessage `json:"steps"`
			}
			if err := json.Unmarshal(out.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			if got.Rules[0].ID != 0 {
				t.Error("rule 0 is not first")
			}
			if e := expandJSON(t, got.Rules); !reflect.DeepEqual(e, tc.want) {
				t.Errorf("rules expand to %v", e)
			}
			if tc.predict {
				if got.Accuracy == nil || got.AccuracyLast == nil || got.Weighted == nil || got.WeightedLast == nil || got.GrammarSize == nil {
					t.Fatalf("missing keys: %s", out.String()[:200])
				}
				if len(got.Steps) != len(tc.want) || *got.AccuracyLast != 1 {
					t.Errorf("%d steps, last-half accuracy %v on a periodic stream", len(got.Steps), *got.AccuracyLast)
				}
			} else if got.Accuracy != nil || got.Steps != nil {
				t.Error("prediction keys without --predict")
			}
		})
	}
}

// TestSequiturText proves the text form prints the paper's grammar for
// abbbabcbb and the accuracy line with --predict.
func TestSequiturText(t *testing.T) {
	raw := filepath.Join(t.TempDir(), "raw")
	os.WriteFile(raw, []byte("abbbabcbb"), 0o644)
	var out bytes.Buffer
	if err := runSequitur([]string{"--bytes", "--predict", raw}, &out, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "S -> A B A c B\nA -> a b\nB -> b b\n") || !strings.Contains(out.String(), "accuracy ") {
		t.Errorf("output:\n%s", out.String())
	}
}

// TestSequiturBadInput proves bad tokens give an error naming the line and
// the token, and missing arguments a usage error.
func TestSequiturBadInput(t *testing.T) {
	f := filepath.Join(t.TempDir(), "bad.txt")
	os.WriteFile(f, []byte("1 2 3\n4 x5 6\n"), 0o644)
	var out bytes.Buffer
	err := runSequitur([]string{f}, &out, &out)
	if err == nil || !strings.Contains(err.Error(), "bad.txt:2") || !strings.Contains(err.Error(), `"x5"`) {
		t.Errorf("error %v", err)
	}
	os.WriteFile(f, []byte("-1\n"), 0o644)
	if err := runSequitur([]string{f}, &out, &out); err == nil || !strings.Contains(err.Error(), ":1") {
		t.Errorf("negative: error %v", err)
	}
	if err := runSequitur(nil, &out, &out); err != errUsage {
		t.Errorf("no file: %v", err)
	}
}
