package serverlog

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// ParseTime reads a time as the logs write it: "2006-01-02 15:04:05" or
// "2006-01-02T15:04:05" (with optional fractional seconds) in loc, RFC
// 3339 with its own zone or offset, Unix seconds ("1510782606",
// "1510782606.789180921"), Torque's "01/02/2006 15:04:05" in loc, or a
// date alone (its midnight in loc). Commands use it for --from and --to.
func ParseTime(s string, loc *time.Location) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, fmt.Errorf("empty time")
	}
	if loc == nil {
		loc = time.Local
	}
	if isUnixSeconds(s) {
		return parseUnix(s)
	}
	if len(s) == 10 && s[4] == '-' && s[7] == '-' {
		t, err := time.ParseInLocation(time.DateOnly, s, loc)
		if err != nil {
			return time.Time{}, fmt.Errorf("time %q: not YYYY-MM-DD", s)
		}
		return t, nil
	}
	if len(s) >= 19 && s[4] == '-' && s[7] == '-' && (s[10] == ' ' || s[10] == 'T') {
		// A zone after the seconds (Z, +01:00) makes it RFC 3339.
		rest := s[19:]
		if i := strings.IndexAny(rest, "Z+-"); i >= 0 {
			t, err := time.Parse(time.RFC3339Nano, s[:10]+"T"+s[11:])
			if err != nil {
				return time.Time{}, fmt.Errorf("time %q: not YYYY-MM-DD HH:MM:SS[.frac][zone]", s)
			}
			return t, nil
		}
		t, err := time.ParseInLocation("2006-01-02T15:04:05.999999999", s[:10]+"T"+s[11:], loc)
		if err != nil {
			return time.Time{}, fmt.Errorf("time %q: not YYYY-MM-DD HH:MM:SS", s)
		}
		return t, nil
	}
	if len(s) == 19 && s[2] == '/' && s[5] == '/' && s[10] == ' ' {
		t, err := time.ParseInLocation("01/02/2006 15:04:05", s, loc)
		if err != nil {
			return time.Time{}, fmt.Errorf("time %q: not MM/DD/YYYY HH:MM:SS", s)
		}
		return t, nil
	}
	return time.Time{}, fmt.Errorf("time %q: want YYYY-MM-DD HH:MM:SS, RFC 3339 or Unix seconds", s)
}

func isUnixSeconds(s string) bool {
	dot := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
		case c == '.' && !dot && i > 0:
			dot = true
		default:
			return false
		}
	}
	return true
}

// parseUnix reads decimal Unix seconds exactly to the nanosecond.
func parseUnix(s string) (time.Time, error) {
	sec, frac, _ := strings.Cut(s, ".")
	n, err := strconv.ParseInt(sec, 10, 64)
	if err != nil || n > math.MaxInt64/int64(time.Second)-1 {
		return time.Time{}, fmt.Errorf("time %q: Unix seconds out of range", s)
	}
	var ns int64
	for i := 0; i < 9; i++ {
		ns *= 10
		if i < len(frac) {
			ns += int64(frac[i] - '0')
		}
	}
	return time.Unix(n, ns), nil
}

// formatLocal writes t as "2006-01-02 15:04:05" in loc, with fractional
// seconds only when t has them.
func formatLocal(t time.Time, loc *time.Location, sep byte) string {
	layout := "2006-01-02 15:04:05.999999999"
	if sep == 'T' {
		layout = "2006-01-02T15:04:05.999999999"
	}
	return t.In(loc).Format(layout)
}
