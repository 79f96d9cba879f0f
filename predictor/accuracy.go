package predictor

// score adds the grammar's prediction of the symbol s that just came to
// the model's running context score: the weight its candidates gave s
// (Omnisc'IO section III-B, with the candidates' own weights), 0 when none
// predicted it. Every symbol after the first is scored, so the score
// needs no caller to ask for predictions.
func (m *Model) score(s int) {
	if m.prev < 0 {
		return
	}
	w, _ := m.main.Weight(s)
	m.selfSteps++
	m.selfScore += w
}

// ContextScore returns how many context symbols the model has scored and
// the sum of their scores: score/steps is the share of the next context
// the grammar predicted, weighted by its candidates' probabilities, over
// the whole run. Unlike the footer's "accuracy", which counts only the
// predictions callers asked for, it covers every call.
func (m *Model) ContextScore() (steps uint64, score float64) { return m.selfSteps, m.selfScore }
