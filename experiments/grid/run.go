package grid

import (
	"context"

	"github.com/pseudocong/pseudocong/internal/workpool"
)

// Jobs is a grid's runs in a fixed order: every cell, every seed of it,
// every side of that (a side is one variant of a run, such as without and
// with vCC; 1 if the grid has none). Job k is cell k / (Seeds·Sides),
// seed (k / Sides) mod Seeds, side k mod Sides.
type Jobs struct{ Cells, Seeds, Sides int }

// Len is how many runs there are.
func (j Jobs) Len() int { return j.Cells * j.Seeds * max(j.Sides, 1) }

// At is job k's cell, seed index and side.
func (j Jobs) At(k int) (cell, seed, side int) {
	s := max(j.Sides, 1)
	return k / (j.Seeds * s), k / s % j.Seeds, k % s
}

// Run runs every job on up to workers goroutines (0: GOMAXPROCS) and
// returns their results in job order. Each run is seeded by its seed, so
// the results do not depend on workers. The error joins every failed
// job's, in job order.
func Run[R any](ctx context.Context, j Jobs, workers int, run func(cell, seed, side int) (R, error)) ([]R, error) {
	return workpool.Map(ctx, j.Len(), workpool.Options{Workers: workers}, func(k int) (R, error) {
		return run(j.At(k))
	})
}

// Mean is the mean of v (NaN for none).
func Mean(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}
