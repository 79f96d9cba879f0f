// Package dtw is dynamic time warping (Berndt and Clifford 1994), the
// baseline the IOSI paper compares against: the optimal monotone alignment
// of two series under absolute difference, in O(n·m) time and space, and
// the paper's progressive averaging of many samples (the first two are
// aligned and averaged, the result is aligned with the third, and so on).
package dtw

import (
	"fmt"
	"math"
)

// Step is one pair of the warping path: x[I] is matched with y[J].
type Step struct{ I, J int }

// Align returns the cost of the best warping of x onto y (the sum of
// |x[i]-y[j]| along the path) and the path from (0, 0) to
// (len(x)-1, len(y)-1). Among equal costs the diagonal move is preferred,
// then the move in x.
func Align(x, y []float64) (float64, []Step, error) {
	n, m := len(x), len(y)
	if n == 0 || m == 0 {
		return 0, nil, fmt.Errorf("dtw: empty series (%d and %d values)", n, m)
	}
	if int64(n)*int64(m) > 1<<31 {
		return 0, nil, fmt.Errorf("dtw: %d×%d cells are too many", n, m)
	}
	// Two rows of costs and a byte per cell for the move that reached it.
	prev, cur := make([]float64, m), make([]float64, m)
	move := make([]byte, n*m)
	const diag, up, left = 0, 1, 2
	for i := range n {
		for j := range m {
			c := math.Abs(x[i] - y[j])
			switch {
			case i == 0 && j == 0:
				cur[j] = c
			case i == 0:
				cur[j], move[j] = c+cur[j-1], left
			case j == 0:
				cur[j], move[i*m] = c+prev[0], up
			default:
				best, mv := prev[j-1], byte(diag)
				if prev[j] < best {
					best, mv = prev[j], up
				}
				if cur[j-1] < best {
					best, mv = cur[j-1], left
				}
				cur[j], move[i*m+j] = c+best, mv
			}
		}
		prev, cur = cur, prev
	}
	cost := prev[m-1]
	path := make([]Step, 0, n+m)
	for i, j := n-1, m-1; ; {
		path = append(path, Step{i, j})
		if i == 0 && j == 0 {
			break
		}
		switch move[i*m+j] {
		case diag:
			i, j = i-1, j-1
		case up:
			i--
		default:
			j--
		}
	}
	for a, b := 0, len(path)-1; a < b; a, b = a+1, b-1 {
		path[a], path[b] = path[b], path[a]
	}
	return cost, path, nil
}

// Average warps y onto base and returns the weighted mean on base's time
// axis: point i becomes (w·base[i] + mean of the y values matched with i)
// / (w+1), so that base, the running average of w series, keeps its
// length as samples are added.
func Average(base []float64, w float64, y []float64) ([]float64, error) {
	_, path, err := Align(base, y)
	if err != nil {
		return nil, err
	}
	sum := make([]float64, len(base))
	cnt := make([]float64, len(base))
	for _, s := range path {
		sum[s.I] += y[s.J]
		cnt[s.I]++
	}
	out := make([]float64, len(base))
	for i := range base {
		out[i] = (w*base[i] + sum[i]/cnt[i]) / (w + 1)
	}
	return out, nil
}

// Progressive averages the series by the IOSI paper's progressive
// pairwise DTW: the first is the running average, each next one is warped
// onto it and averaged in. The result has the first series' length.
func Progressive(series [][]float64) ([]float64, error) {
	if len(series) == 0 {
		return nil, fmt.Errorf("dtw: no series")
	}
	avg := append([]float64(nil), series[0]...)
	for k := 1; k < len(series); k++ {
		var err error
		if avg, err = Average(avg, float64(k), series[k]); err != nil {
			return nil, fmt.Errorf("dtw: series %d: %w", k, err)
		}
	}
	return avg, nil
}
