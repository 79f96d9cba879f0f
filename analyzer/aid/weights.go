package aid

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Weights are the band weights w of the load score s = Σ w_i (f_i + α_i).
type Weights struct {
	BandWidth float64   `json:"band_width"` // bytes/s
	W         []float64 `json:"w"`
	// TrainRate is what the training jobs asked of each OST, bytes/s.
	TrainRate float64 `json:"train_rate"`
	// Trials and RMS describe the fit.
	Trials int     `json:"trials"`
	RMS    float64 `json:"rms"`
	Source string  `json:"source,omitempty"`
}

// DefaultWeights are the weights fitted on the simulated center (see the
// README, "Default weights", for the command that regenerates them).
func DefaultWeights() *Weights {
	w := defaultWeights
	w.W = append([]float64(nil), defaultWeights.W...)
	return &w
}

// Measurements are training trials: per trial, the IOLT's band shares
// at dispatch (averaged over the OSTs) and the I/O time.
type Measurements struct {
	BandWidth float64
	Rate      float64 // the training jobs' demand per OST, bytes/s (0: unknown)
	F         [][]float64
	IOTime    []float64
}

// ReadMeasurements reads a CSV of trials. Comment lines start with '#';
// "# band_width=B" and "# train_rate=R" set those. The header names the
// columns: io_time_s, then f0, f1, ... (the band shares); other columns
// (trial, app, ...) are ignored. Every row needs a positive I/O time and
// shares in [0, 1].
func ReadMeasurements(r io.Reader, name string) (*Measurements, error) {
	m := &Measurements{BandWidth: 30e6}
	br := bufio.NewReader(r)
	var body strings.Builder
	line := 0
	for {
		s, err := br.ReadString('\n')
		if s != "" {
			line++
			t := strings.TrimSpace(s)
			if strings.HasPrefix(t, "#") {
				k, v, ok := strings.Cut(strings.TrimSpace(t[1:]), "=")
				if ok {
					x, perr := strconv.ParseFloat(strings.TrimSpace(v), 64)
					bad := perr != nil || x <= 0 || math.IsInf(x, 0)
					switch strings.TrimSpace(k) {
					case "band_width":
						if bad {
							return nil, fmt.Errorf("%s:%d: band_width %q", name, line, v)
						}
						m.BandWidth = x
					case "train_rate":
						if bad {
							return nil, fmt.Errorf("%s:%d: train_rate %q", name, line, v)
						}
						m.Rate = x
					}
				}
				body.WriteString("\n") // keep line numbers
				continue
			}
			body.WriteString(s)
			if !strings.HasSuffix(s, "\n") {
				body.WriteString("\n")
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	cr := csv.NewReader(strings.NewReader(body.String()))
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	hdr, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: no header: %v", name, err)
	}
	timeCol := -1
	var bandCols []int
	for i, h := range hdr {
		h = strings.TrimSpace(strings.ToLower(h))
		if h == "io_time_s" {
			timeCol = i
		}
		if len(h) > 1 && h[0] == 'f' {
			if k, err := strconv.Atoi(h[1:]); err == nil && k == len(bandCols) && k < 1000 {
				bandCols = append(bandCols, i)
			}
		}
	}
	if timeCol < 0 || len(bandCols) == 0 {
		return nil, fmt.Errorf("%s: header needs io_time_s and the band columns f0, f1 and so on", name)
	}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			// A csv.ParseError names its line.
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		ln, _ := cr.FieldPos(0)
		if len(rec) != len(hdr) {
			return nil, fmt.Errorf("%s:%d: %d fields, the header has %d", name, ln, len(rec), len(hdr))
		}
		t, err := strconv.ParseFloat(strings.TrimSpace(rec[timeCol]), 64)
		if err != nil || !(t > 0) || math.IsInf(t, 0) {
			return nil, fmt.Errorf("%s:%d: io_time_s %q is not a positive number", name, ln, rec[timeCol])
		}
		f := make([]float64, len(bandCols))
		for k, c := range bandCols {
			v, err := strconv.ParseFloat(strings.TrimSpace(rec[c]), 64)
			if err != nil || !(v >= 0 && v <= 1) {
				return nil, fmt.Errorf("%s:%d: f%d %q is not a share in [0, 1]", name, ln, k, rec[c])
			}
			f[k] = v
		}
		m.F = append(m.F, f)
		m.IOTime = append(m.IOTime, t)
	}
	if len(m.F) == 0 {
		return nil, fmt.Errorf("%s: no trial", name)
	}
	return m, nil
}

// Fit solves for the weights by least squares: each trial's I/O time
// over the best trial's is Σ w_i f_i, with the weights non-negative and
// non-decreasing from band to band (a busier band never counts less).
// It writes w_i = Σ_{k≤i} d_k with d ≥ 0 and solves the non-negative
// least squares problem in d (Lawson and Hanson's active set method).
func Fit(m *Measurements) (*Weights, error) {
	if len(m.F) == 0 {
		return nil, errors.New("fit: no trial")
	}
	best := math.Inf(1)
	for _, t := range m.IOTime {
		best = min(best, t)
	}
	nb := len(m.F[0])
	A := make([][]float64, len(m.F))
	y := make([]float64, len(m.F))
	for r, f := range m.F {
		if len(f) != nb {
			return nil, errors.New("fit: trials with different band counts")
		}
		// Σ_i w_i f_i = Σ_k d_k Σ_{i≥k} f_i
		A[r] = make([]float64, nb)
		tail := 0.0
		for k := nb - 1; k >= 0; k-- {
			tail += f[k]
			A[r][k] = tail
		}
		y[r] = m.IOTime[r] / best
	}
	d := nnls(A, y)
	w := &Weights{BandWidth: m.BandWidth, W: make([]float64, nb), TrainRate: m.Rate, Trials: len(y)}
	acc := 0.0
	for k := range d {
		acc += d[k]
		w.W[k] = acc
	}
	ss := 0.0
	for r := range A {
		p := 0.0
		for k := range d {
			p += A[r][k] * d[k]
		}
		ss += (p - y[r]) * (p - y[r])
	}
	w.RMS = math.Sqrt(ss / float64(len(y)))
	return w, nil
}

// nnls minimises |Ax - y| subject to x ≥ 0.
func nnls(A [][]float64, y []float64) []float64 {
	n := len(A[0])
	x := make([]float64, n)
	passive := make([]bool, n)
	grad := func() []float64 {
		g := make([]float64, n)
		for r := range A {
			res := y[r]
			for k := range n {
				res -= A[r][k] * x[k]
			}
			for k := range n {
				g[k] += A[r][k] * res
			}
		}
		return g
	}
	for iter := 0; iter < 3*n+10; iter++ {
		g := grad()
		j, gmax := -1, 1e-10
		for k := range n {
			if !passive[k] && g[k] > gmax {
				j, gmax = k, g[k]
			}
		}
		if j < 0 {
			break
		}
		passive[j] = true
		for inner := 0; inner < 3*n+10; inner++ {
			z := lsq(A, y, passive)
			ok := true
			for k := range n {
				if passive[k] && z[k] <= 0 {
					ok = false
				}
			}
			if ok {
				copy(x, z)
				break
			}
			alpha := 1.0
			for k := range n {
				if passive[k] && z[k] <= 0 {
					alpha = min(alpha, x[k]/(x[k]-z[k]))
				}
			}
			for k := range n {
				x[k] += alpha * (z[k] - x[k])
				if passive[k] && x[k] <= 1e-12 {
					passive[k], x[k] = false, 0
				}
			}
		}
	}
	return x
}

// lsq solves the unconstrained least squares problem on the passive
// columns (normal equations, Gaussian elimination with pivoting; a tiny
// ridge keeps collinear bands solvable); the other entries are 0.
func lsq(A [][]float64, y []float64, passive []bool) []float64 {
	var cols []int
	for k, p := range passive {
		if p {
			cols = append(cols, k)
		}
	}
	m := len(cols)
	M := make([][]float64, m)
	for a := range m {
		M[a] = make([]float64, m+1)
		for b := range m {
			for r := range A {
				M[a][b] += A[r][cols[a]] * A[r][cols[b]]
			}
		}
		M[a][a] += 1e-9
		for r := range A {
			M[a][m] += A[r][cols[a]] * y[r]
		}
	}
	for c := range m {
		p := c
		for r := c + 1; r < m; r++ {
			if math.Abs(M[r][c]) > math.Abs(M[p][c]) {
				p = r
			}
		}
		M[c], M[p] = M[p], M[c]
		if M[c][c] == 0 {
			continue
		}
		for r := range m {
			if r != c {
				f := M[r][c] / M[c][c]
				for k := c; k <= m; k++ {
					M[r][k] -= f * M[c][k]
				}
			}
		}
	}
	out := make([]float64, len(passive))
	for a, k := range cols {
		if M[a][a] != 0 {
			out[k] = M[a][m] / M[a][a]
		}
	}
	return out
}
