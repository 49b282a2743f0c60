package tcpexp

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/pseudocong/pseudocong/experiments"
	"github.com/pseudocong/pseudocong/experiments/sim"
	"github.com/pseudocong/pseudocong/netsim"
	"github.com/pseudocong/pseudocong/probes"
	"github.com/pseudocong/pseudocong/profile"
	"github.com/pseudocong/pseudocong/tcp"
)

// Options adjust a run.
type Options struct {
	// Workers is how many simulations run in parallel; 0: GOMAXPROCS.
	Workers int
	// Seed, if set, replaces the spec's.
	Seed *uint64
	// Progress, if set, is told after every finished simulation.
	Progress func(done, total int, label string)
}

// Switch roles of a bulk run.
const (
	RoleProfile   = "profile"
	RoleReference = "reference"
)

// BulkRun is one simulation of a bulk cell.
type BulkRun struct {
	Cell       CellSpec
	Timers     string
	Role       string // RoleProfile or RoleReference
	Mitigation string
	Outcome    *sim.Outcome
}

// Label names the run for progress lines.
func (b BulkRun) Label() string {
	return fmt.Sprintf("%s %s %s %s", b.Cell.ID, b.Timers, b.Role, b.Mitigation)
}

// MitigationResult is what one mitigation measured beyond its bulk runs.
type MitigationResult struct {
	Mitigation Mitigation
	// Probe is the probe cells' summary values (experiments' keys), nil
	// when the mitigation leaves the switch unchanged (then the
	// baseline's apply) or the spec runs none.
	Probe map[string][]float64
	// SpaceLost is the TCAM share the layout keeps out of use.
	SpaceLost float64
	// ProbeWall is the CPU-side wall time of its probe cells.
	ProbeWall time.Duration
	// SwitchCPU is the switch CPU time (agent + TCAM driver) summed over
	// its bulk runs; Memory the TCAM slots its layout holds (capacity).
	SwitchCPU time.Duration
}

// Result is a finished run.
type Result struct {
	Spec       *Spec
	Seed       uint64
	Profile    *profile.Profile
	Reference  *profile.Profile
	Runs       []BulkRun
	Mitigation []MitigationResult
	Values     map[string][]float64
	Wall       time.Duration
}

// Execute runs the spec.
func Execute(ctx context.Context, s *Spec, opts Options) (*Result, error) {
	began := time.Now()
	prof, err := profile.Load(s.Profile)
	if err != nil {
		return nil, fmt.Errorf("spec %s: %w", s.Source, err)
	}
	ref, err := profile.Load(s.Reference)
	if err != nil {
		return nil, fmt.Errorf("spec %s: %w", s.Source, err)
	}
	top, err := experiments.LoadTopology(s.Topology)
	if err != nil {
		return nil, fmt.Errorf("spec %s: %w", s.Source, err)
	}
	r := &Result{Spec: s, Seed: s.Seed, Profile: prof, Reference: ref}
	if opts.Seed != nil {
		r.Seed = *opts.Seed
	}
	mits := s.Mitigations
	if len(mits) == 0 {
		mits = []string{BaselineName}
	}
	type job struct {
		run *BulkRun
		sc  sim.Scenario
	}
	var jobs []job
	for _, name := range mits {
		m, err := ParseMitigation(name)
		if err != nil {
			return nil, err
		}
		mp, err := m.Apply(prof)
		if err != nil {
			return nil, err
		}
		lost, err := m.SpaceLost(mp)
		if err != nil {
			return nil, err
		}
		r.Mitigation = append(r.Mitigation, MitigationResult{Mitigation: m, SpaceLost: lost})
		for _, c := range s.Cells {
			for _, tn := range s.Timers {
				roles := []string{RoleProfile}
				if name == mits[0] {
					roles = append(roles, RoleReference) // one reference per cell and timers
				}
				for _, role := range roles {
					p, mm := mp, m
					if role == RoleReference {
						p, mm = ref, Mitigation{Name: BaselineName}
					}
					sc, err := s.scenario(c, tn, p, top, r.Seed, mm)
					if err != nil {
						return nil, err
					}
					r.Runs = append(r.Runs, BulkRun{Cell: c, Timers: tn, Role: role, Mitigation: name})
					jobs = append(jobs, job{sc: sc})
				}
			}
		}
	}
	for i := range jobs {
		jobs[i].run = &r.Runs[i]
	}
	// The probe cells of switch-side mitigations (and the baseline's).
	type probeJob struct {
		idx  int
		spec *experiments.Spec
		prof *profile.Profile
	}
	var pjobs []probeJob
	if len(s.Mitigations) > 0 && s.ProbeCells != "none" {
		for i, mr := range r.Mitigation {
			m := mr.Mitigation
			if m.Name != BaselineName && !m.switchSide() {
				continue
			}
			ps, err := probeSpec(s, m, s.ProbeCells)
			if err != nil {
				return nil, err
			}
			mp, _ := m.Apply(prof)
			pjobs = append(pjobs, probeJob{i, ps, mp})
		}
	}
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	total := len(jobs) + len(pjobs)
	var (
		mu   sync.Mutex
		done int
		errs []error
		wg   sync.WaitGroup
	)
	tick := func(label string, err error) {
		mu.Lock()
		defer mu.Unlock()
		done++
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", label, err))
		}
		if opts.Progress != nil {
			opts.Progress(done, total, label)
		}
	}
	work := make(chan func())
	for range min(workers, max(total, 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for f := range work {
				f()
			}
		}()
	}
feed:
	for _, j := range jobs {
		f := func() {
			o, err := sim.Run(j.sc)
			j.run.Outcome = o
			tick(j.run.Label(), err)
		}
		select {
		case work <- f:
		case <-ctx.Done():
			break feed
		}
	}
	for _, pj := range pjobs {
		if ctx.Err() != nil {
			break
		}
		f := func() {
			t0 := time.Now()
			res, err := experiments.Execute(ctx, pj.spec, experiments.Options{ProfileValue: pj.prof, Workers: 1})
			if err == nil {
				r.Mitigation[pj.idx].Probe = res.Values
				r.Mitigation[pj.idx].ProbeWall = time.Since(t0)
			}
			tick("probe cells "+r.Mitigation[pj.idx].Mitigation.Name, err)
		}
		select {
		case work <- f:
		case <-ctx.Done():
		}
	}
	close(work)
	wg.Wait()
	if err := errors.Join(append(errs, ctx.Err())...); err != nil {
		return nil, err
	}
	for i := range r.Mitigation {
		for _, b := range r.Runs {
			if b.Mitigation == r.Mitigation[i].Mitigation.Name && b.Role == RoleProfile {
				r.Mitigation[i].SwitchCPU += b.Outcome.Agent.BusyTime
			}
		}
	}
	r.Values = summarize(r)
	r.Wall = time.Since(began)
	return r, nil
}

// scenario is the simulation of cell c with timers tn on switch p.
func (s *Spec) scenario(c CellSpec, tn string, p *profile.Profile, top *netsim.Topology, seed uint64, m Mitigation) (sim.Scenario, error) {
	tp, err := tcp.ProfileByName(tn)
	if err != nil {
		return sim.Scenario{}, err
	}
	prio := c.Priority
	if m.Descending {
		prio = "descending"
	}
	// A layout that keeps slots out of use (hermes) gets the same number
	// of free usable slots as the cell gives the full table: the base
	// load shrinks by the reserved slots.
	base := c.BaseLoad
	if c.TCAMCapacity == 0 && base > 0 {
		usable, err := usableSlots(p)
		if err != nil {
			return sim.Scenario{}, err
		}
		base = max(0, min(base, base-(p.TCAM.Capacity-usable)))
	}
	return sim.Scenario{
		Kind: sim.Bulk, Flows: c.Flows, Rate: c.StartRate, BaseLoad: base, Priority: prio,
		Profile: p, Topology: top, ControllerService: s.ControllerService, LinkLatency: s.LinkLatency,
		Timers: probes.Berkeley(), Seed: seed,
		TCP: &sim.BulkTCP{Timers: tp, CC: s.CC, Duration: s.Duration, TraceInterval: s.TraceInterval,
			TCAMCapacity: c.TCAMCapacity, SDN: m.SDN},
	}, nil
}
