package mptcpgrid

import (
	"context"
	"fmt"
	"time"

	"github.com/pseudocong/pseudocong/experiments"
	"github.com/pseudocong/pseudocong/experiments/grid"
	"github.com/pseudocong/pseudocong/mptcp"
)

// Cell is one point of the grid.
type Cell struct {
	Policy   string
	D1, D2   int // one-way delays, ms
	Loss2    int // percent
	BufferKB int
}

// Suffix is the cell's part of a summary key: {policy}.d{D1}-{D2}.l{L2}.b{KB}.
func (c Cell) Suffix() string {
	return fmt.Sprintf("%s.d%d-%d.l%d.b%d", c.Policy, c.D1, c.D2, c.Loss2, c.BufferKB)
}

// CellResult is a cell's runs.
type CellResult struct {
	Cell
	Goodput []float64 // Mbit/s, one per seed
	Blocked []float64 // share of time
}

// MeanGoodput and MeanBlocked average over the seeds.
func (r *CellResult) MeanGoodput() float64 { return grid.Mean(r.Goodput) }
func (r *CellResult) MeanBlocked() float64 { return grid.Mean(r.Blocked) }

// Result is a grid's outcome.
type Result struct {
	Spec  *Spec
	Cells []*CellResult
	Wall  time.Duration
}

// Cells lists the grid's cells in a fixed order.
func (s *Spec) Cells() []Cell {
	var out []Cell
	for _, d := range s.Delays {
		for _, b := range s.BuffersKB {
			for _, l := range s.Loss2 {
				for _, p := range s.Policies {
					out = append(out, Cell{Policy: p, D1: d[0], D2: d[1], Loss2: l, BufferKB: b})
				}
			}
		}
	}
	return out
}

// RunConfig is the mptcp.RunConfig of one cell and seed.
func (s *Spec) RunConfig(c Cell, seed uint64) mptcp.RunConfig {
	rate := int64(s.RateMbps * 1e6)
	ms := time.Millisecond
	return mptcp.RunConfig{
		Paths: []mptcp.PathConfig{
			{Rate: rate, Delay: time.Duration(c.D1) * ms, Loss: s.Loss1 / 100, Queue: s.Queue},
			{Rate: rate, Delay: time.Duration(c.D2) * ms, Loss: float64(c.Loss2) / 100, Queue: s.Queue},
		},
		RcvBuf: c.BufferKB << 10, Policy: c.Policy, Uncoupled: !s.Coupled,
		Duration: s.Duration, Warmup: s.Warmup, Profile: s.Profile, NoSACK: !s.SACK, Seed: seed,
	}
}

// Run runs every cell and seed on up to workers goroutines (0: GOMAXPROCS).
// The result does not depend on workers: each run is seeded by its seed.
func Run(ctx context.Context, s *Spec, workers int) (*Result, error) {
	start := time.Now()
	cells := s.Cells()
	runs, err := grid.Run(ctx, grid.Jobs{Cells: len(cells), Seeds: s.Seeds}, workers, func(cell, seed, _ int) (*mptcp.Result, error) {
		r, err := mptcp.Run(s.RunConfig(cells[cell], s.Seed+uint64(seed)))
		if err != nil {
			return nil, fmt.Errorf("mptcp grid: cell %s seed %d: %w", cells[cell].Suffix(), seed, err)
		}
		return r, nil
	})
	if err != nil {
		return nil, err
	}
	res := &Result{Spec: s, Cells: make([]*CellResult, len(cells))}
	for i, c := range cells {
		cr := &CellResult{Cell: c, Goodput: make([]float64, s.Seeds), Blocked: make([]float64, s.Seeds)}
		for k, r := range runs[i*s.Seeds : (i+1)*s.Seeds] {
			cr.Goodput[k], cr.Blocked[k] = r.GoodputMbps, r.BlockedShare
		}
		res.Cells[i] = cr
	}
	res.Wall = time.Since(start)
	return res, nil
}

// Values are the summary's results: the mean over seeds of every cell's
// goodput and blocked share.
func (r *Result) Values() map[string]float64 {
	out := map[string]float64{}
	for _, c := range r.Cells {
		out[r.Spec.KeyPrefix+".goodput_mbps."+c.Suffix()] = c.MeanGoodput()
		out[r.Spec.KeyPrefix+".blocked_share."+c.Suffix()] = c.MeanBlocked()
	}
	return out
}

// Summary is summary.json in the shape of the other specs'.
func (r *Result) Summary() experiments.Summary {
	return grid.Summary(&r.Spec.Base, r.Spec.Profile, r.Wall, r.Values())
}
