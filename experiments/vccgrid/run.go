package vccgrid

import (
	"context"
	"fmt"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/pseudocong/pseudocong/experiments"
)

// Side is a cell's runs with or without vCC, one per seed.
type Side struct {
	ECN, NonECN, Jain []float64 // per-flow mean Mbit/s of each class; Jain over all flows
	Retrans           []uint64  // the non-ECN class's retransmitted segments
	Rewritten, Bad    uint64    // frames the translator rewrote; of them, bad checksums
}

// Ratio is the mean over seeds of nonECN/ECN.
func (s *Side) Ratio() float64 {
	var r float64
	for i := range s.ECN {
		if s.ECN[i] > 0 {
			r += s.NonECN[i] / s.ECN[i]
		}
	}
	return r / float64(len(s.ECN))
}

// CellResult is a cell with both sides.
type CellResult struct {
	Cell
	Without, With Side
}

// Result is a grid's outcome.
type Result struct {
	Spec  *Spec
	Cells []*CellResult
	Wall  time.Duration
}

func mean(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// Run runs every cell, both sides and every seed on up to workers
// goroutines (0: GOMAXPROCS); each run is seeded, so the result does not
// depend on workers. Every rewritten frame's checksums are verified.
func Run(ctx context.Context, s *Spec, workers int) (*Result, error) {
	start := time.Now()
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	cells := s.Cells()
	res := &Result{Spec: s, Cells: make([]*CellResult, len(cells))}
	for i, c := range cells {
		cr := &CellResult{Cell: c}
		for _, sd := range []*Side{&cr.Without, &cr.With} {
			sd.ECN, sd.NonECN, sd.Jain, sd.Retrans = make([]float64, s.Seeds), make([]float64, s.Seeds), make([]float64, s.Seeds), make([]uint64, s.Seeds)
		}
		res.Cells[i] = cr
	}
	type job struct {
		cell, seed int
		with       bool
	}
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
				rc := s.RunConfig(cr.Cell, j.with, s.Seed+uint64(j.seed))
				rc.Verify = true
				r, err := RunDumbbell(rc)
				mu.Lock()
				if err != nil {
					if firstErr == nil {
						firstErr = fmt.Errorf("vcc grid: cell %s vcc=%v seed %d: %w", cr.Key(), j.with, j.seed, err)
					}
					mu.Unlock()
					continue
				}
				sd := &cr.Without
				if j.with {
					sd = &cr.With
				}
				sd.ECN[j.seed], sd.NonECN[j.seed] = r.Classes()
				sd.Jain[j.seed] = r.Jain()
				for _, f := range r.Flows {
					if !f.ECN {
						sd.Retrans[j.seed] += f.Retransmits
					}
				}
				sd.Rewritten += r.Rewritten
				sd.Bad += r.BadChecksums
				mu.Unlock()
			}
		}()
	}
feed:
	for i := range cells {
		for k := range s.Seeds {
			for _, w := range []bool{false, true} {
				select {
				case jobs <- job{i, k, w}:
				case <-ctx.Done():
					break feed
				}
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

// Values are the summary's results, per cell and side: the ratio of the
// non-ECN (vECN) class's mean per-flow throughput over the ECN class's,
// Jain's index, and each class's Mbit/s per flow, means over the seeds.
func (r *Result) Values() map[string]float64 {
	out := map[string]float64{}
	p := r.Spec.KeyPrefix + "."
	for _, c := range r.Cells {
		for _, x := range []struct {
			name string
			sd   *Side
		}{{"without", &c.Without}, {"with", &c.With}} {
			k := p + c.Key() + "."
			out[k+"throughput_ratio_nonecn_over_ecn."+x.name] = x.sd.Ratio()
			out[k+"jain."+x.name] = mean(x.sd.Jain)
			out[k+"mbps_ecn."+x.name] = mean(x.sd.ECN)
			out[k+"mbps_nonecn."+x.name] = mean(x.sd.NonECN)
		}
	}
	return out
}

// Summary is summary.json in the shape of the other specs'.
func (r *Result) Summary() experiments.Summary {
	s := experiments.Summary{
		Spec: r.Spec.Name, Backend: "sim", Seed: r.Spec.Seed,
		WallSeconds: float64(r.Wall.Milliseconds()) / 1000,
		Results:     map[string]any{}, Paper: map[string]any{},
	}
	vals := r.Values()
	keys := make([]string, 0, len(vals))
	for k := range vals {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		s.Results[k] = float64(int64(vals[k]*1e9+0.5)) / 1e9
	}
	return s
}
