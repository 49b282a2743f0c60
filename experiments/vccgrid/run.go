package vccgrid

import (
	"context"
	"fmt"
	"time"

	"github.com/pseudocong/pseudocong/experiments"
	"github.com/pseudocong/pseudocong/experiments/grid"
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

// Run runs every cell, both sides and every seed on up to workers
// goroutines (0: GOMAXPROCS); each run is seeded, so the result does not
// depend on workers. Every rewritten frame's checksums are verified.
func Run(ctx context.Context, s *Spec, workers int) (*Result, error) {
	start := time.Now()
	cells := s.Cells()
	jobs := grid.Jobs{Cells: len(cells), Seeds: s.Seeds, Sides: 2}
	runs, err := grid.Run(ctx, jobs, workers, func(cell, seed, side int) (*RunResult, error) {
		with := side == 1
		rc := s.RunConfig(cells[cell], with, s.Seed+uint64(seed))
		rc.Verify = true
		r, err := RunDumbbell(rc)
		if err != nil {
			return nil, fmt.Errorf("vcc grid: cell %s vcc=%v seed %d: %w", cells[cell].Key(), with, seed, err)
		}
		return r, nil
	})
	if err != nil {
		return nil, err
	}
	res := &Result{Spec: s, Cells: make([]*CellResult, len(cells))}
	for i, c := range cells {
		cr := &CellResult{Cell: c}
		for _, sd := range []*Side{&cr.Without, &cr.With} {
			sd.ECN, sd.NonECN, sd.Jain, sd.Retrans = make([]float64, s.Seeds), make([]float64, s.Seeds), make([]float64, s.Seeds), make([]uint64, s.Seeds)
		}
		res.Cells[i] = cr
	}
	for k, r := range runs {
		cell, seed, side := jobs.At(k)
		sd := &res.Cells[cell].Without
		if side == 1 {
			sd = &res.Cells[cell].With
		}
		sd.ECN[seed], sd.NonECN[seed] = r.Classes()
		sd.Jain[seed] = r.Jain()
		for _, f := range r.Flows {
			if !f.ECN {
				sd.Retrans[seed] += f.Retransmits
			}
		}
		sd.Rewritten += r.Rewritten
		sd.Bad += r.BadChecksums
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
			out[k+"jain."+x.name] = grid.Mean(x.sd.Jain)
			out[k+"mbps_ecn."+x.name] = grid.Mean(x.sd.ECN)
			out[k+"mbps_nonecn."+x.name] = grid.Mean(x.sd.NonECN)
		}
	}
	return out
}

// Summary is summary.json in the shape of the other specs'.
func (r *Result) Summary() experiments.Summary {
	return grid.Summary(&r.Spec.Base, "", r.Wall, r.Values())
}
