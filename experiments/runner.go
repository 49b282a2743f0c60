package experiments

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"time"

	"github.com/pseudocong/pseudocong/experiments/sim"
	"github.com/pseudocong/pseudocong/internal/workpool"
	"github.com/pseudocong/pseudocong/netsim"
	"github.com/pseudocong/pseudocong/probes"
	"github.com/pseudocong/pseudocong/profile"
)

// Backends a spec can run on.
const (
	BackendSim = "sim"
)

// Backends lists the backends `experiment run` accepts.
var Backends = []string{BackendSim, BackendLive}

// Options adjust a run of a spec.
type Options struct {
	// Backend: "sim" (the only one so far).
	Backend string
	// Profile, if set, replaces the spec's switch profile (name or path).
	Profile string
	// ProfileValue, if set, replaces both: a profile built in code (a
	// variant of a loaded one, e.g. another TCAM layout).
	ProfileValue *profile.Profile
	// Seed, if set, replaces the spec's seed.
	Seed *uint64
	// Workers is how many runs go in parallel; 0 means GOMAXPROCS. Each
	// run has its own virtual clock, so the result does not depend on it.
	Workers int
	// Progress, if set, is told after every finished run.
	Progress func(done, total int, label string)
	// Live tunes the live backend (backend_live.go).
	Live LiveOptions
	// Shard, if set, restricts the run to one shard of the grid; such a
	// run goes through ExecuteShard (shard.go), not Execute.
	Shard *Shard
	// SeriesInterval, if set, replaces the spec's series.interval (time
	// series of every run; negative: none).
	SeriesInterval time.Duration
}

// Cell is one run of the grid: one experiment at one base load, rate and
// priority pattern.
type Cell struct {
	Exp      ExperimentSpec
	BaseLoad int
	Rate     float64
	Priority string
	// Switches is the chain length K of an experiment over chains (0:
	// the experiment's own topology).
	Switches int
	// prefix is the spec's key_prefix.
	prefix string
	// Outcome is the simulation's measurement.
	Outcome *sim.Outcome
}

// Label names the cell for progress lines and reports:
// "handshake L3500 5000pps ascending".
func (c Cell) Label() string {
	if c.Switches > 0 {
		return fmt.Sprintf("%s k%d L%d %spps %s", c.Exp.ID, c.Switches, c.BaseLoad, rateString(c.Rate), c.Priority)
	}
	return fmt.Sprintf("%s L%d %spps %s", c.Exp.ID, c.BaseLoad, rateString(c.Rate), c.Priority)
}

// Result is a finished spec run.
type Result struct {
	Spec    *Spec
	Backend string
	Profile *profile.Profile
	Timers  probes.TimerProfile
	Seed    uint64
	Cells   []Cell
	// Values maps summary keys to numbers ([]float64 for bins), in the
	// summary.json contract (docs/experiments.md).
	Values map[string][]float64
	Wall   time.Duration
	// topologies holds the compiled networks the cells run on, by name.
	topologies map[string]*netsim.Topology
	// series is the time-series interval of the sim runs (0: none).
	series time.Duration
}

// topologyName is the network cell c runs on: chain:K for an experiment
// over chains, else the experiment's, the spec's or the default topology.
func (c Cell) topologyName(spec *Spec) string {
	switch {
	case c.Switches > 0:
		return fmt.Sprintf("chain:%d", c.Switches)
	case c.Exp.Topology != "":
		return c.Exp.Topology
	case spec.Topology != "":
		return spec.Topology
	}
	return DefaultTopology
}

// loadTopologies loads every topology the cells name.
func loadTopologies(spec *Spec, cells []Cell) (map[string]*netsim.Topology, error) {
	m := map[string]*netsim.Topology{}
	for _, c := range cells {
		name := c.topologyName(spec)
		if _, ok := m[name]; ok {
			continue
		}
		t, err := LoadTopology(name)
		if err != nil {
			return nil, &SpecError{spec.Source, fmt.Errorf("experiment %s: %w", c.Exp.ID, err)}
		}
		for _, s := range t.Switches {
			if s.Profile == "" {
				continue
			}
			if _, err := profile.Load(s.Profile); err != nil {
				return nil, &SpecError{spec.Source, fmt.Errorf("experiment %s: topology %s: switch %s: %w", c.Exp.ID, name, s.Name, err)}
			}
		}
		m[name] = t
	}
	return m, nil
}

func rateString(r float64) string { return strconv.FormatFloat(r, 'f', -1, 64) }

// Execute runs every cell of the spec's grid and computes the summary
// values. Input errors (unknown backend or profile, impossible
// parameters) are *SpecError; the run itself fails only on a model error.
func Execute(ctx context.Context, spec *Spec, opts Options) (*Result, error) {
	if opts.Shard != nil {
		return nil, errors.New("experiments: a sharded run goes through ExecuteShard")
	}
	began := time.Now()
	res, profName, err := prepare(spec, &opts)
	if err != nil {
		return nil, err
	}
	var extra map[string][]float64
	if opts.Backend == BackendLive {
		extra, err = runLive(ctx, res, spec, opts, profName)
	} else {
		err = runCells(ctx, res, spec, opts)
	}
	if err != nil {
		return nil, err
	}
	res.Values = summarize(res)
	maps.Copy(res.Values, extra)
	res.Wall = time.Since(began)
	return res, nil
}

// CheckInputs reports the input errors Execute would report (a
// *SpecError: unknown backend, profile or timers, a grid that does not fit
// the profile's TCAM) without running anything, so a caller can check
// everything else it needs (e.g. the output directory) before a long run.
func CheckInputs(spec *Spec, opts Options) error {
	_, _, err := prepare(spec, &opts)
	return err
}

// prepare checks the run's inputs, fills opts' defaults and returns the
// result to fill (its grid laid out) and the profile argument.
func prepare(spec *Spec, opts *Options) (*Result, string, error) {
	if opts.Backend == "" {
		opts.Backend = BackendSim
	}
	if opts.Backend != BackendSim && opts.Backend != BackendLive {
		return nil, "", &SpecError{spec.Source, fmt.Errorf("backend %q: want one of %v", opts.Backend, Backends)}
	}
	profName := spec.Profile
	if opts.Profile != "" {
		profName = opts.Profile
	}
	prof, err := profile.Load(profName)
	if opts.ProfileValue != nil {
		prof, profName, err = opts.ProfileValue, opts.ProfileValue.Name, nil
	}
	if err != nil {
		return nil, "", &SpecError{spec.Source, err}
	}
	timers, err := probes.ProfileByName(spec.Timers)
	if err != nil {
		return nil, "", &SpecError{spec.Source, err}
	}
	if err := spec.checkCapacity(prof.TCAM.Capacity); err != nil {
		return nil, "", err
	}
	seed := spec.Seed
	if opts.Seed != nil {
		seed = *opts.Seed
	}
	if opts.Shard != nil {
		if err := opts.Shard.check(opts.Backend); err != nil {
			return nil, "", &SpecError{spec.Source, err}
		}
	}
	res := &Result{Spec: spec, Backend: opts.Backend, Profile: prof, Timers: timers, Seed: seed, Cells: grid(spec)}
	if res.topologies, err = loadTopologies(spec, res.Cells); err != nil {
		return nil, "", err
	}
	res.series = spec.Series.Interval
	if opts.SeriesInterval != 0 {
		res.series = max(opts.SeriesInterval, 0)
		if err := checkSeriesInterval(res.series); err != nil {
			return nil, "", &SpecError{spec.Source, fmt.Errorf("series interval %v: %w", opts.SeriesInterval, err)}
		}
	}
	return res, profName, nil
}

// grid lays out the cells of spec in grid order: experiments in spec
// order, then chain lengths, base loads, rates and priority patterns. Shards are cut
// from this order, so it must not depend on anything but the spec.
func grid(spec *Spec) []Cell {
	var cells []Cell
	for _, e := range spec.Runs {
		ks := e.Chain
		if len(ks) == 0 {
			ks = []int{0}
		}
		for _, k := range ks {
			for _, l := range e.BaseLoads {
				for _, r := range e.Rates {
					for _, p := range e.Priorities {
						cells = append(cells, Cell{Exp: e, BaseLoad: l, Rate: r, Priority: p, Switches: k, prefix: spec.KeyPrefix})
					}
				}
			}
		}
	}
	return cells
}

// runCells simulates the cells on a pool of workers. Each cell is a pure
// function of its scenario, so the pool changes only the wall time.
func runCells(ctx context.Context, res *Result, spec *Spec, opts Options) error {
	pool := workpool.Options{Workers: opts.Workers}
	if opts.Progress != nil {
		pool.Progress = func(done, total, i int) { opts.Progress(done, total, res.Cells[i].Label()) }
	}
	return workpool.Run(ctx, len(res.Cells), pool, func(i int) error {
		c := &res.Cells[i]
		var err error
		c.Outcome, err = sim.Run(sim.Scenario{
			Topology:          res.topologies[c.topologyName(spec)],
			Kind:              sim.Kind(c.Exp.Kind),
			Flows:             c.Exp.Flows,
			Rate:              c.Rate,
			BaseLoad:          c.BaseLoad,
			Priority:          c.Priority,
			Profile:           res.Profile,
			ControllerService: spec.Controller.ServiceTime,
			LinkLatency:       spec.Network.LinkLatency,
			Timers:            res.Timers,
			Seed:              res.Seed,
			SeriesInterval:    res.series,
		})
		if err != nil {
			return fmt.Errorf("%s: %w", c.Label(), err)
		}
		return nil
	})
}
