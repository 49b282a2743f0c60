package mptcpgrid

import (
	"context"
	"fmt"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/pseudocong/pseudocong/experiments"
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
func (r *CellResult) MeanGoodput() float64 { return mean(r.Goodput) }
func (r *CellResult) MeanBlocked() float64 { return mean(r.Blocked) }

func mean(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

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
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	cells := s.Cells()
	res := &Result{Spec: s, Cells: make([]*CellResult, len(cells))}
	for i, c := range cells {
		res.Cells[i] = &CellResult{Cell: c, Goodput: make([]float64, s.Seeds), Blocked: make([]float64, s.Seeds)}
	}
	type job struct{ cell, seed int }
	jobs := make(chan job)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				cr := res.Cells[j.cell]
				r, err := mptcp.Run(s.RunConfig(cr.Cell, s.Seed+uint64(j.seed)))
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("mptcp grid: cell %s seed %d: %w", cr.Suffix(), j.seed, err)
					}
					mu.Unlock()
					continue
				}
				cr.Goodput[j.seed], cr.Blocked[j.seed] = r.GoodputMbps, r.BlockedShare
			}
		}()
	}
feed:
	for i := range cells {
		for k := range s.Seeds {
			select {
			case jobs <- job{i, k}:
			case <-ctx.Done():
				break feed
			}
		}
	}
	close(jobs)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if firstErr != nil {
		return nil, firstErr
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
	s := experiments.Summary{
		Spec: r.Spec.Name, Backend: "sim", Profile: r.Spec.Profile, Seed: r.Spec.Seed,
		WallSeconds: float64(r.Wall.Milliseconds()) / 1000,
		Results:     map[string]any{}, Paper: map[string]any{},
	}
	keys := make([]string, 0)
	vals := r.Values()
	for k := range vals {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		s.Results[k] = round(vals[k])
	}
	return s
}

func round(x float64) float64 {
	const p = 1e9
	return float64(int64(x*p+0.5)) / p
}
