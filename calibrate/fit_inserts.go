package calibrate

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Batch is one measured group of inserts: m FLOW_MODs sent back to back,
// and the time from the first one's send until a probe frame for the last
// one was forwarded (the data-plane confirmation).
type Batch struct {
	Pattern  string
	Inserts  []Insert
	Duration time.Duration
	// Barrier is when the BARRIER_REPLY after the batch arrived, from the
	// first send (for the report: how early the control plane says done).
	Barrier time.Duration
}

// InsertFit is the fitted insert cost model:
//
//	duration = Overhead + m·CWrite + Σ moves·CMove + Σ slow moves·CSlow
//
// where a move is slow when at most SlowWindow slots are free (package
// tcam's slow path), moves are counted under Layout, and Overhead is the
// fixed cost of one batch (control channel, probe resolution, hit delay).
type InsertFit struct {
	Layout                 string
	CWrite, CMove, CSlow   time.Duration
	SECWrite, SECMove      time.Duration
	SECSlow, SEOverhead    time.Duration
	Overhead               time.Duration
	SlowWindow             int
	Capacity               int
	Samples                int
	Sigma                  time.Duration
	Score                  float64       // model-selection score (huberScore), lower is better
	Alternatives           []LayoutScore // every layout tried, best window each
	MaxInsertsPerBatchUsed int

	resid  []float64 // per batch, ns
	params int
}

// LayoutScore is how well one layout hypothesis explains the batches.
type LayoutScore struct {
	Layout     string
	Score      float64
	Sigma      time.Duration
	CMove      time.Duration
	SlowWindow int
}

// Predict returns the fitted duration of a batch.
func (f InsertFit) Predict(b Batch) time.Duration {
	fast, slow := splitMoves(b.Inserts, f.Layout, f.Capacity, f.SlowWindow)
	d := float64(f.Overhead) + float64(len(b.Inserts))*float64(f.CWrite) +
		fast*float64(f.CMove) + slow*float64(f.CSlow)
	return time.Duration(d)
}

// PerInsert returns the fitted cost of one insert (without the batch
// overhead): c_write + moves·c_move, slow moves priced at c_slow.
func (f InsertFit) PerInsert(in Insert) time.Duration {
	fast, slow := splitMoves([]Insert{in}, f.Layout, f.Capacity, f.SlowWindow)
	return time.Duration(float64(f.CWrite) + fast*float64(f.CMove) + slow*float64(f.CSlow))
}

func splitMoves(ins []Insert, layout string, capacity, window int) (fast, slow float64) {
	for _, in := range ins {
		mv := float64(in.Moves(layout))
		if window > 0 && capacity > 0 && capacity-in.Occ <= window {
			slow += mv
		} else {
			fast += mv
		}
	}
	return fast, slow
}

// slowWindows are the candidate slow-path windows for a table of
// capacity slots: none, then every step up to a quarter of the table.
func slowWindows(capacity int) []int {
	ws := []int{0}
	if capacity <= 0 {
		return ws
	}
	step := max(1, capacity/400)
	for w := step; w <= capacity/4; w += step {
		ws = append(ws, w)
	}
	return ws
}

// FitInserts fits the insert model to batches made while the table had
// room (batches with an insert at or beyond capacity are left out: they
// evict, which the model prices separately). It tries every layout and
// slow-path window and keeps the lowest robust information criterion
// (huberScore, Score); a layout whose per-move cost is
// not positive with 3 σ, or adds less than the noise, loses to LayoutFlat.
func FitInserts(batches []Batch, capacity int) (InsertFit, error) {
	var use []Batch
	maxM := 0
	for _, b := range batches {
		if len(b.Inserts) == 0 {
			continue
		}
		full := false
		for _, in := range b.Inserts {
			if capacity > 0 && in.Occ >= capacity {
				full = true
			}
		}
		if !full {
			use = append(use, b)
			maxM = max(maxM, len(b.Inserts))
		}
	}
	if len(use) < 4 {
		return InsertFit{}, fmt.Errorf("calibrate: insert fit: %d usable batches, need at least 4", len(use))
	}
	var cands []InsertFit
	for _, layout := range []string{LayoutFlat, LayoutHighestFirst, LayoutLowestFirst} {
		windows := []int{0}
		if layout != LayoutFlat {
			windows = slowWindows(capacity)
		}
		for _, w := range windows {
			f, err := fitInsertModel(use, layout, capacity, w)
			if err != nil {
				continue
			}
			// A per-move cost must be significant (3 σ) and matter: over
			// the most moves measured it must add at least the residual
			// noise of one batch, or the layout is a fit to noise.
			if layout != LayoutFlat && !(f.CMove > 0 && float64(f.CMove) > 3*float64(f.SECMove) &&
				float64(f.CMove)*float64(maxMoves(use, layout)) >= float64(f.Sigma)) {
				continue
			}
			if w > 0 && !(f.CSlow > f.CMove && float64(f.CSlow-f.CMove) > 3*float64(f.SECSlow)) {
				continue
			}
			cands = append(cands, f)
		}
	}
	// Score every candidate on one scale, the smallest robust σ any of
	// them reached: Huber loss (quadratic within 1.345 σ, linear beyond)
	// plus k·ln(n). Stalled batches cost every model alike and only
	// linearly; a model that misprices a block of batches (a slow-path
	// window ten slots off) pays for each of them.
	scale := math.Inf(1)
	for _, c := range cands {
		if c.Sigma > 0 {
			scale = math.Min(scale, float64(c.Sigma))
		}
	}
	var best *InsertFit
	var alts []LayoutScore
	byLayout := map[string]*InsertFit{}
	for i := range cands {
		c := &cands[i]
		if !math.IsInf(scale, 1) {
			c.Score = huberScore(c.resid, scale, c.params)
		}
		if lb := byLayout[c.Layout]; lb == nil || c.Score < lb.Score {
			byLayout[c.Layout] = c
		}
	}
	for _, layout := range []string{LayoutFlat, LayoutHighestFirst, LayoutLowestFirst} {
		lbest := byLayout[layout]
		if lbest == nil {
			continue
		}
		alts = append(alts, LayoutScore{Layout: layout, Score: lbest.Score, Sigma: lbest.Sigma, CMove: lbest.CMove, SlowWindow: lbest.SlowWindow})
		if best == nil || lbest.Score < best.Score {
			best = lbest
		}
	}
	if best == nil {
		return InsertFit{}, errors.New("calibrate: insert fit: no model fits (every design singular)")
	}
	best.Alternatives = alts
	best.MaxInsertsPerBatchUsed = maxM
	return *best, nil
}

func fitInsertModel(batches []Batch, layout string, capacity, window int) (InsertFit, error) {
	x := make([][]float64, 0, len(batches))
	y := make([]float64, 0, len(batches))
	anySlow := false
	for _, b := range batches {
		fast, slow := splitMoves(b.Inserts, layout, capacity, window)
		row := []float64{1, float64(len(b.Inserts))}
		if layout != LayoutFlat {
			row = append(row, fast)
		}
		if window > 0 {
			row = append(row, slow)
			anySlow = anySlow || slow > 0
		}
		x = append(x, row)
		y = append(y, float64(b.Duration))
	}
	if window > 0 && !anySlow {
		return InsertFit{}, errSingular
	}
	lf, err := robustLeastSquares(x, y)
	if err != nil {
		return InsertFit{}, err
	}
	d := func(v float64) time.Duration { return time.Duration(math.Round(v)) }
	f := InsertFit{
		Layout: layout, Capacity: capacity, SlowWindow: window, Samples: lf.N,
		Overhead: d(lf.Beta[0]), SEOverhead: d(lf.SE[0]),
		CWrite: d(lf.Beta[1]), SECWrite: d(lf.SE[1]),
		Sigma: d(lf.RobustSigma), Score: robustBIC(lf), params: len(lf.Beta),
	}
	for r, row := range x {
		p := 0.0
		for j, v := range row {
			p += v * lf.Beta[j]
		}
		f.resid = append(f.resid, y[r]-p)
	}
	i := 2
	if layout != LayoutFlat {
		f.CMove, f.SECMove = d(lf.Beta[i]), d(lf.SE[i])
		i++
	}
	if window > 0 {
		f.CSlow, f.SECSlow = d(lf.Beta[i]), d(lf.SE[i])
	}
	return f, nil
}

// DeleteFit is the per-rule cost of DELETE_STRICT batches:
// duration = overhead + m·CInvalidate.
type DeleteFit struct {
	CInvalidate, SE, Overhead time.Duration
	Samples                   int
}

// DeleteBatch is one timed group of m deletes (sent → BARRIER_REPLY).
type DeleteBatch struct {
	N        int
	Duration time.Duration
}

// FitDeletes fits the delete cost from batches of different sizes.
func FitDeletes(batches []DeleteBatch) (DeleteFit, error) {
	var x [][]float64
	var y []float64
	for _, b := range batches {
		if b.N > 0 {
			x = append(x, []float64{1, float64(b.N)})
			y = append(y, float64(b.Duration))
		}
	}
	if len(y) < 3 {
		return DeleteFit{}, fmt.Errorf("calibrate: delete fit: %d batches, need 3", len(y))
	}
	lf, err := robustLeastSquares(x, y)
	if err != nil {
		return DeleteFit{}, fmt.Errorf("calibrate: delete fit: %w", err)
	}
	return DeleteFit{CInvalidate: time.Duration(lf.Beta[1]), SE: time.Duration(lf.SE[1]),
		Overhead: time.Duration(lf.Beta[0]), Samples: lf.N}, nil
}

func maxMoves(bs []Batch, layout string) int {
	m := 0
	for _, b := range bs {
		for _, in := range b.Inserts {
			m = max(m, in.Moves(layout))
		}
	}
	return m
}

// robustBIC compares models by their robust residual scale rather than
// the raw RSS: one batch delayed 400 ms by the host would otherwise
// dominate every model's RSS alike and drown the difference the layouts
// make. n·ln(σ̂²) + k·ln(n), σ̂ from the MAD.
func robustBIC(f LinearFit) float64 {
	s := f.RobustSigma
	if s <= 0 {
		return f.BIC()
	}
	n := float64(f.N)
	return n*math.Log(s*s) + float64(len(f.Beta))*math.Log(n)
}

// huberScore is 2·Σ ρ(r/scale) + k·ln(n) with Huber's ρ (c = 1.345).
func huberScore(resid []float64, scale float64, k int) float64 {
	const c = 1.345
	sum := 0.0
	for _, r := range resid {
		u := math.Abs(r / scale)
		if u <= c {
			sum += u * u / 2
		} else {
			sum += c*u - c*c/2
		}
	}
	return 2*sum + float64(k)*math.Log(float64(len(resid)))
}
