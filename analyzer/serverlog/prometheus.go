package serverlog

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// PrometheusConfig names what the Prometheus source reads: two counters
// per OST, told apart by a label, as lustre_exporter exports them
// (lustre_read_bytes_total{component="ost",target="scratch-OST0000"}).
// A center that renamed them (relabelling, a recording rule, another
// exporter) sets its own names. The zero value reads lustre_exporter's.
type PrometheusConfig struct {
	// ReadMetric and WriteMetric are the cumulative byte counters;
	// default lustre_read_bytes_total and lustre_write_bytes_total.
	ReadMetric, WriteMetric string
	// OSTLabel is the label that names the OST; default target.
	OSTLabel string
	// Selector is more label matchers, PromQL syntax without braces;
	// default component="ost" (lustre_exporter's client-side llite
	// counters have the same metric names with component="client").
	// "-" means none.
	Selector string
	// MaxPoints is the most evaluation steps one query_range asks for;
	// default 10,000, under Prometheus's limit of 11,000 points per
	// series. Longer windows are read in several queries.
	MaxPoints int
	// Timeout bounds each HTTP request; default 5 minutes.
	Timeout time.Duration
	// Lookback is how far back the first sample is searched for;
	// default 10 years.
	Lookback time.Duration
}

// Defaults of PrometheusConfig: lustre_exporter's names.
const (
	DefaultPromReadMetric  = "lustre_read_bytes_total"
	DefaultPromWriteMetric = "lustre_write_bytes_total"
	DefaultPromOSTLabel    = "target"
	DefaultPromSelector    = `component="ost"`
	// DefaultPromMaxPoints keeps a query under Prometheus's limit of
	// 11,000 points per series (query_range refuses more).
	DefaultPromMaxPoints = 10000
)

func (c PrometheusConfig) withDefaults() PrometheusConfig {
	def := func(s *string, v string) {
		if *s == "" {
			*s = v
		}
	}
	def(&c.ReadMetric, DefaultPromReadMetric)
	def(&c.WriteMetric, DefaultPromWriteMetric)
	def(&c.OSTLabel, DefaultPromOSTLabel)
	def(&c.Selector, DefaultPromSelector)
	if c.Selector == "-" {
		c.Selector = ""
	}
	if c.MaxPoints <= 0 {
		c.MaxPoints = DefaultPromMaxPoints
	}
	if c.Timeout <= 0 {
		c.Timeout = 5 * time.Minute
	}
	if c.Lookback <= 0 {
		c.Lookback = 10 * 365 * 24 * time.Hour
	}
	return c
}

var (
	promMetricName = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`)
	promLabelName  = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)
)

func (c PrometheusConfig) check() error {
	for _, m := range []struct{ flag, v string }{{"read-metric", c.ReadMetric}, {"write-metric", c.WriteMetric}} {
		if !promMetricName.MatchString(m.v) {
			return fmt.Errorf("--prometheus-%s %q is not a Prometheus metric name", m.flag, m.v)
		}
	}
	if !promLabelName.MatchString(c.OSTLabel) || strings.HasPrefix(c.OSTLabel, "__") {
		return fmt.Errorf("--prometheus-ost-label %q is not a Prometheus label name", c.OSTLabel)
	}
	if strings.ContainsAny(c.Selector, "{}") {
		return fmt.Errorf("--prometheus-selector %q: give the matchers without braces, as in component=\"ost\",fs=\"scratch\"", c.Selector)
	}
	return nil
}

// RegisterPrometheus adds the flags of the Prometheus source's names to fs.
func (c *PrometheusConfig) RegisterPrometheus(fs *flag.FlagSet) {
	fs.StringVar(&c.ReadMetric, "prometheus-read-metric", DefaultPromReadMetric, "Prometheus: cumulative read byte counter per OST")
	fs.StringVar(&c.WriteMetric, "prometheus-write-metric", DefaultPromWriteMetric, "Prometheus: cumulative write byte counter per OST")
	fs.StringVar(&c.OSTLabel, "prometheus-ost-label", DefaultPromOSTLabel, "Prometheus: label naming the OST")
	fs.StringVar(&c.Selector, "prometheus-selector", DefaultPromSelector, "Prometheus: more label matchers, without braces (\"-\" for none)")
	fs.DurationVar(&c.Lookback, "prometheus-lookback", 0, "Prometheus: how far back to look for the first sample (default 10 years; the gate and advise need only the last hour)")
}

// IsPrometheusURL tells whether src is an http(s):// address, which
// only the Prometheus source reads.
func IsPrometheusURL(src string) bool {
	return strings.HasPrefix(src, "http://") || strings.HasPrefix(src, "https://")
}

// OpenPrometheus opens a Prometheus server's per-OST byte counters as a
// Source. base is the server's address (http://host:9090, with a path
// prefix when it is behind a proxy; user:password@ for basic auth).
//
// Counters are read with /api/v1/query_range at the scrape interval, the
// evaluation times half an interval after the scrapes, as
// last_over_time over one interval: each raw sample is read once, at
// its scrape time, and the lookback that repeats an old sample over a
// missed scrape cannot hide a gap. The readings then go through the same gridding as
// LMT's: a counter that went down, an interval longer than
// Options.MaxInterval or an impossible rate is unknown (NaN), never
// negative. Series of one OST (an OST that failed over to another server
// and so changed instance) are one series: the largest of them.
//
// Opening finds the span (first and last samples, searched back
// Lookback) and the scrape interval from the raw samples of its first
// quarter hour.
func OpenPrometheus(base string, opts Options) (Source, error) {
	cfg := opts.Prometheus.withDefaults()
	if err := cfg.check(); err != nil {
		return nil, err
	}
	u, err := url.Parse(strings.TrimRight(base, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%s: want a Prometheus address http://HOST:PORT", redactURL(base))
	}
	p := &promLog{base: u, name: u.Redacted(), cfg: cfg, client: &http.Client{Timeout: cfg.Timeout}}
	if err := p.load(context.Background()); err != nil {
		return nil, err
	}
	return newCounterSource(p, &opts), nil
}

func redactURL(s string) string {
	if u, err := url.Parse(s); err == nil {
		return u.Redacted()
	}
	return s
}

// promLog is a counterLog over a Prometheus server.
type promLog struct {
	base   *url.URL
	name   string // base without password, for messages
	cfg    PrometheusConfig
	client *http.Client

	first, last int64 // first and last sample, Unix ns
	step        time.Duration
	phase       int64 // a sample time, Unix ns: evaluations are half a step after phase + k·step
	osts        []string
	index       map[string]int
}

// selector is the series selector of metric with the configured matchers.
func (p *promLog) selector(metric string) string {
	if p.cfg.Selector == "" {
		return metric
	}
	return metric + "{" + p.cfg.Selector + "}"
}

// both selects both counters, so that the span covers either.
func (p *promLog) both() string {
	m := `__name__=~"` + p.cfg.ReadMetric + "|" + p.cfg.WriteMetric + `"`
	if p.cfg.Selector != "" {
		m += "," + p.cfg.Selector
	}
	return "{" + m + "}"
}

func (p *promLog) load(ctx context.Context) error {
	now := time.Now()
	day := 24 * time.Hour
	// Days with samples, newest last: the first and last are refined.
	end := now.Truncate(day).Add(day)
	start := end.Add(-p.cfg.Lookback).Truncate(day)
	present := func(from, to time.Time, step time.Duration) ([]int64, error) {
		// count_over_time drops the metric name: one count per counter,
		// joined with or.
		w := int64(step / time.Second)
		q := fmt.Sprintf("count(count_over_time(%s[%ds])) or count(count_over_time(%s[%ds]))",
			p.selector(p.cfg.ReadMetric), w, p.selector(p.cfg.WriteMetric), w)
		var out []int64
		for _, c := range p.chunks(from.UnixNano(), to.UnixNano(), step) {
			res, err := p.queryRange(ctx, q, c[0], c[1], step)
			if err != nil {
				return nil, err
			}
			for _, s := range res {
				for _, v := range s.Values {
					out = append(out, v.t)
				}
			}
		}
		slices.Sort(out)
		return slices.Compact(out), nil
	}
	// Years first, then the days of the first and last years, then their
	// quarter hours: a few small queries however long the history.
	const quarter = 15 * time.Minute
	year := 365 * day
	years, err := present(start.Add(year), end.Add(year), year)
	if err != nil {
		return err
	}
	if len(years) == 0 {
		return fmt.Errorf("%s: no samples of %s or %s in the last %v (check the metric names, --prometheus-selector and the retention)",
			p.name, p.selector(p.cfg.ReadMetric), p.selector(p.cfg.WriteMetric), p.cfg.Lookback)
	}
	// within returns the first or last evaluation time at step, inside
	// the window (outer-span, outer], that has samples.
	within := func(outer int64, span, step time.Duration, firstOne bool) (int64, error) {
		ts, err := present(time.Unix(0, outer).Add(-span+step), time.Unix(0, outer), step)
		if err != nil {
			return 0, err
		}
		if len(ts) == 0 {
			return 0, fmt.Errorf("%s: samples seen in the %v before %v but in none of its parts of %v", p.name, span, time.Unix(0, outer).UTC(), step)
		}
		if firstOne {
			return ts[0], nil
		}
		return ts[len(ts)-1], nil
	}
	edge := func(yearEnd int64, firstOne bool) (int64, []promSeries, error) {
		d, err := within(yearEnd, year, day, firstOne)
		if err != nil {
			return 0, nil, err
		}
		at, err := within(d, day, quarter, firstOne)
		if err != nil {
			return 0, nil, err
		}
		raw, err := p.queryRaw(ctx, fmt.Sprintf("%s[%ds]", p.both(), int64(quarter/time.Second)), at)
		if err != nil {
			return 0, nil, err
		}
		var t int64 = math.MaxInt64
		if !firstOne {
			t = math.MinInt64
		}
		for _, s := range raw {
			for _, v := range s.Values {
				if firstOne {
					t = min(t, v.t)
				} else {
					t = max(t, v.t)
				}
			}
		}
		if len(raw) == 0 {
			return 0, nil, fmt.Errorf("%s: no raw samples in the quarter hour before %v", p.name, time.Unix(0, at).UTC())
		}
		return t, raw, nil
	}
	if p.first, _, err = edge(years[0], true); err != nil {
		return err
	}
	if p.last, _, err = edge(years[len(years)-1], false); err != nil {
		return err
	}
	// The scrape interval: the median interval of the series with the
	// most samples in the quarter hour after the first sample.
	raw, err := p.queryRaw(ctx, fmt.Sprintf("%s[%ds]", p.both(), int64(quarter/time.Second)), min(p.first+int64(quarter), p.last))
	if err != nil {
		return err
	}
	var ts []int64
	for _, s := range raw {
		if len(s.Values) > len(ts) {
			ts = ts[:0]
			for _, v := range s.Values {
				ts = append(ts, v.t)
			}
		}
	}
	if p.step, err = nativeStep(ts); err != nil {
		return fmt.Errorf("%s: %v", p.name, err)
	}
	if p.step < time.Millisecond*2 {
		return fmt.Errorf("%s: scrape interval %v is below Prometheus's millisecond resolution", p.name, p.step)
	}
	p.phase = p.first
	return p.loadOSTs(ctx)
}

// loadOSTs lists the OSTs of the span from the series endpoint.
func (p *promLog) loadOSTs(ctx context.Context) error {
	var series []map[string]string
	// Each counter on its own: a misnamed one would otherwise leave
	// every sample unknown without a word.
	for _, m := range []struct{ flag, metric string }{{"read", p.cfg.ReadMetric}, {"write", p.cfg.WriteMetric}} {
		v := url.Values{}
		v.Add("match[]", p.selector(m.metric))
		v.Set("start", promTime(p.first))
		v.Set("end", promTime(p.last))
		var ss []map[string]string
		if err := p.get(ctx, "/api/v1/series", v, &ss); err != nil {
			return err
		}
		if len(ss) == 0 {
			return fmt.Errorf("%s: no series %s from %v to %v (check --prometheus-%s-metric and --prometheus-selector)",
				p.name, p.selector(m.metric), time.Unix(0, p.first).UTC(), time.Unix(0, p.last).UTC(), m.flag)
		}
		series = append(series, ss...)
	}
	seen := map[string]bool{}
	for _, s := range series {
		ost, ok := s[p.cfg.OSTLabel]
		if !ok {
			return fmt.Errorf("%s: series %v has no label %q: name the OST label with --prometheus-ost-label, or narrow the series with --prometheus-selector",
				p.name, s, p.cfg.OSTLabel)
		}
		seen[ost] = true
	}
	for o := range seen {
		p.osts = append(p.osts, o)
	}
	sort.Strings(p.osts)
	p.index = make(map[string]int, len(p.osts))
	for i, o := range p.osts {
		p.index[o] = i
	}
	return nil
}

func (p *promLog) names() []string { return p.osts }

func (p *promLog) what() string { return p.name }

func (p *promLog) bounds() (first, last int64, step time.Duration) { return p.first, p.last, p.step }

func (p *promLog) close() error { p.client.CloseIdleConnections(); return nil }

// chunks splits the evaluation times from..to (inclusive) at step into
// ranges of at most MaxPoints steps.
func (p *promLog) chunks(from, to int64, step time.Duration) [][2]int64 {
	var out [][2]int64
	span := int64(p.cfg.MaxPoints) * int64(step)
	for s := from; s <= to; s += span + int64(step) {
		out = append(out, [2]int64{s, min(s+span, to)})
	}
	return out
}

// readings returns the raw samples of [from, to] per OST, read by
// query_range at the scrape interval.
func (p *promLog) readings(from, to int64) ([][]reading, error) {
	ctx := context.Background()
	st := int64(p.step)
	half := st / 2
	// Evaluation g returns the last sample in (g - lookback, g]; with g
	// half a step after the scrapes, the sample of (g - step, g].
	g0 := p.phase + half + ceilDiv(from-p.phase-half, st)*st
	g1 := p.phase + half + ceilDiv(to-p.phase-half, st)*st
	type pair struct{ r, w map[int64]float64 }
	per := make([]pair, len(p.osts))
	for i := range per {
		per[i] = pair{map[int64]float64{}, map[int64]float64{}}
	}
	// last_over_time over one step gives the sample of (g - step, g] and
	// nothing over a missed scrape, where a bare selector would repeat the
	// last sample for the whole lookback (5 minutes) and hide the gap.
	// The sample is taken at its scrape time, g - step/2: exact for
	// regular scrapes (timestamp() would say it exactly, but costs
	// Prometheus 30 times the query's time).
	for _, c := range p.chunks(g0, g1, p.step) {
		for _, m := range []struct {
			metric string
			read   bool
		}{{p.cfg.ReadMetric, true}, {p.cfg.WriteMetric, false}} {
			q := fmt.Sprintf("max by (%s) (last_over_time(%s[%s]))", p.cfg.OSTLabel, p.selector(m.metric), promDuration(p.step))
			vals, err := p.queryRange(ctx, q, c[0], c[1], p.step)
			if err != nil {
				return nil, err
			}
			for _, s := range vals {
				i, ok := p.index[s.Metric[p.cfg.OSTLabel]]
				if !ok {
					continue // an OST that appeared after the series were listed
				}
				dst := per[i].w
				if m.read {
					dst = per[i].r
				}
				for _, v := range s.Values {
					t := v.t - half
					if t < from || t > to || !(v.v >= 0) || math.IsInf(v.v, 0) {
						continue
					}
					dst[t] = v.v
				}
			}
		}
	}
	out := make([][]reading, len(p.osts))
	for i, pr := range per {
		rs := make([]reading, 0, len(pr.r))
		// A time with one counter only is left out: the interval around it
		// is then measured from its neighbours, for both counters alike.
		for t, r := range pr.r {
			if w, ok := pr.w[t]; ok {
				rs = append(rs, reading{t: t, r: counterValue(r), w: counterValue(w)})
			}
		}
		slices.SortFunc(rs, func(a, b reading) int { return cmpInt64(a.t, b.t) })
		out[i] = rs
	}
	return out, nil
}

// counterValue is a counter's float sample as the uint64 LMT keeps;
// Prometheus holds counters exactly up to 2^53 bytes (9 PB per OST).
func counterValue(v float64) uint64 {
	if v >= math.MaxUint64 {
		return math.MaxUint64
	}
	return uint64(v)
}

// promPoint is one point of a result: its time (Unix ns) and value.
type promPoint struct {
	t int64
	v float64
}

func (pt *promPoint) UnmarshalJSON(b []byte) error {
	var raw [2]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	var sec float64
	if err := json.Unmarshal(raw[0], &sec); err != nil {
		return fmt.Errorf("point time %s: %v", raw[0], err)
	}
	var s string
	if err := json.Unmarshal(raw[1], &s); err != nil {
		return fmt.Errorf("point value %s: %v", raw[1], err)
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return fmt.Errorf("point value %q: %v", s, err)
	}
	pt.t, pt.v = int64(math.Round(sec*1e3))*1e6, v
	return nil
}

// promSeries is one series of a matrix result.
type promSeries struct {
	Metric map[string]string `json:"metric"`
	Values []promPoint       `json:"values"`
}

type promResponse struct {
	Status    string          `json:"status"`
	Data      json.RawMessage `json:"data"`
	ErrorType string          `json:"errorType"`
	Error     string          `json:"error"`
	Warnings  []string        `json:"warnings"`
}

type promMatrix struct {
	ResultType string       `json:"resultType"`
	Result     []promSeries `json:"result"`
}

func promTime(ns int64) string {
	return strconv.FormatFloat(float64(ns)/1e9, 'f', 3, 64)
}

// promDuration writes a duration as PromQL reads it, in milliseconds.
func promDuration(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) + "ms" }

func promStep(step time.Duration) string {
	return strconv.FormatFloat(step.Seconds(), 'f', -1, 64) + "s"
}

// queryRange runs query over evaluation times from..to every step.
func (p *promLog) queryRange(ctx context.Context, query string, from, to int64, step time.Duration) ([]promSeries, error) {
	v := url.Values{"query": {query}, "start": {promTime(from)}, "end": {promTime(to)}, "step": {promStep(step)}}
	var m promMatrix
	if err := p.get(ctx, "/api/v1/query_range", v, &m); err != nil {
		return nil, err
	}
	if m.ResultType != "matrix" {
		return nil, fmt.Errorf("%s: query_range %s: result of type %q, want matrix", p.name, query, m.ResultType)
	}
	return m.Result, nil
}

// queryRaw runs an instant query of a range selector at time at: the raw
// samples with their own times.
func (p *promLog) queryRaw(ctx context.Context, query string, at int64) ([]promSeries, error) {
	v := url.Values{"query": {query}, "time": {promTime(at)}}
	var m promMatrix
	if err := p.get(ctx, "/api/v1/query", v, &m); err != nil {
		return nil, err
	}
	if m.ResultType != "matrix" {
		return nil, fmt.Errorf("%s: query %s: result of type %q, want matrix", p.name, query, m.ResultType)
	}
	return m.Result, nil
}

// get POSTs the form v to the API endpoint path and decodes its data
// into out. Errors name the server (without password), the endpoint and
// Prometheus's own message.
func (p *promLog) get(ctx context.Context, path string, v url.Values, out any) error {
	u := *p.base
	u.Path = strings.TrimRight(u.Path, "/") + path
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), strings.NewReader(v.Encode()))
	if err != nil {
		return fmt.Errorf("%s: %v", p.name, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := p.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL, password included, stays out of the message
		}
		return fmt.Errorf("%s%s: %v", p.name, path, err)
	}
	defer resp.Body.Close()
	var r promResponse
	dec := json.NewDecoder(resp.Body)
	if err := dec.Decode(&r); err != nil {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
		return fmt.Errorf("%s%s: HTTP %s, not a Prometheus API answer (%v) %s", p.name, path, resp.Status, err, b)
	}
	if r.Status != "success" {
		return fmt.Errorf("%s%s %s: %s: %s", p.name, path, v.Get("query"), r.ErrorType, r.Error)
	}
	if err := json.Unmarshal(r.Data, out); err != nil {
		return fmt.Errorf("%s%s %s: %v", p.name, path, v.Get("query"), err)
	}
	return nil
}
