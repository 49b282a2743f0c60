package live

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pseudocong/pseudocong/experiments/sim"
	"github.com/pseudocong/pseudocong/internal/metricsserver"
	"github.com/pseudocong/pseudocong/probes"
	"github.com/pseudocong/pseudocong/probes/probemetrics"
	"github.com/pseudocong/pseudocong/testbed"
)

// Result is a finished live run.
type Result struct {
	// Outcomes holds, per Config.Cells entry, what the live cell measured,
	// in the sim backend's shape so the experiments' CSVs, figures and
	// report need nothing new. Delays are RTTs; the model counters
	// (Agent, Table, Controller) come from the processes' /metrics.
	Outcomes []*sim.Outcome
	// Sim holds the simulated outcome of the same cells (agreement).
	Sim []*sim.Outcome
	// Kernel holds one result per KernelRun profile.
	Kernel []KernelResult
	// Values are summary values (see Values).
	Values map[string][]float64
	// Testbed is the name the run used.
	Testbed string
}

// Run brings the testbed up, measures every cell and kernel run, and
// tears everything down again — also when ctx is cancelled or a step
// fails. The returned error joins a measurement error with any teardown
// error.
func Run(ctx context.Context, cfg Config) (res *Result, err error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	if os.Geteuid() != 0 {
		return nil, errors.New("live: the live backend needs root (network namespaces, veths, AF_PACKET sockets)")
	}
	if cfg.Binary == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("live: own executable: %w", err)
		}
		cfg.Binary = exe
	}
	res = &Result{Testbed: cfg.Name, Values: map[string][]float64{}}

	// The simulations first: seconds of CPU that must not compete with the
	// wall-clock measurement on a 2-core host.
	for _, c := range cfg.Cells {
		o, err := simulate(cfg, c)
		if err != nil {
			return nil, fmt.Errorf("live: agreement sim of %s: %w", c.Label, err)
		}
		res.Sim = append(res.Sim, o)
	}

	if cfg.StateDir == "" {
		dir, err := os.MkdirTemp("", "pseudocong-live-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		cfg.StateDir = dir
	}
	topo, err := testbed.Up(ctx, testbed.Config{Name: cfg.Name, Hosts: 2, StateDir: cfg.StateDir})
	if err != nil {
		return nil, fmt.Errorf("live: testbed up: %w", err)
	}
	defer func() {
		if derr := testbed.Down(cfg.Name, testbed.DownOptions{StateDir: cfg.StateDir}); derr != nil {
			err = errors.Join(err, fmt.Errorf("live: testbed down: %w", derr))
			return
		}
		cfg.Logger.Info("live testbed down", "name", cfg.Name)
	}()
	cfg.Logger.Info("live testbed up", "name", cfg.Name, "ports", topo.SwitchPorts())

	var obs probes.Observer
	if cfg.ProbeMetrics != "" {
		reg := metricsserver.NewRegistry()
		o, err := probemetrics.New(reg, cfg.Timers, probes.Linux())
		if err != nil {
			return nil, err
		}
		sctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		if _, err := metricsserver.Serve(sctx, cfg.ProbeMetrics, prometheus.Gatherer(reg), cfg.Logger); err != nil {
			return nil, fmt.Errorf("live: probe metrics: %w", err)
		}
		obs = o
	}

	r := &runner{cfg: cfg, topo: topo, out: outputs(cfg.ProcessOutput), obs: obs}
	total := len(cfg.Cells)
	if cfg.Kernel != nil {
		total += len(cfg.Kernel.Variants)
	}
	done := 0
	progress := func(label string) {
		done++
		if cfg.Progress != nil {
			cfg.Progress(done, total, label)
		}
	}
	for _, c := range cfg.Cells {
		o, err := r.cell(ctx, c)
		if err != nil {
			return nil, fmt.Errorf("live: %s: %w", c.Label, err)
		}
		res.Outcomes = append(res.Outcomes, o)
		progress("live " + c.Label)
	}
	if k := cfg.Kernel; k != nil {
		for _, h := range topo.Hosts[:2] {
			restore, err := setSysctls(ctx, h.Netns, k.HostSysctls)
			if err != nil {
				return nil, fmt.Errorf("live: host sysctls: %w", err)
			}
			_ = restore // the namespaces go away with the testbed
		}
		for _, v := range k.Variants {
			kr, err := r.kernel(ctx, *k, v)
			if err != nil {
				return nil, fmt.Errorf("live: kernel TCP run on %s: %w", cmp.Or(v.Name, v.ProfileArg), err)
			}
			res.Kernel = append(res.Kernel, *kr)
			progress(fmt.Sprintf("kernel connect() L%d %gpps %s", k.BaseLoad, k.Rate, kr.Name))
		}
	}
	res.Values = Values(cfg.Cells, res.Outcomes, res.Sim, res.Kernel)
	return res, nil
}

// simulate runs the cell on the sim backend with the run's models.
func simulate(cfg Config, c Cell) (*sim.Outcome, error) {
	return sim.Run(sim.Scenario{
		Kind:              sim.Kind(c.Kind),
		Flows:             c.Flows,
		Rate:              c.Rate,
		BaseLoad:          c.BaseLoad,
		Priority:          c.Priority,
		Profile:           cfg.Profile,
		ControllerService: cfg.ControllerService,
		LinkLatency:       cfg.LinkLatency,
		Timers:            cfg.Timers,
		Seed:              cfg.Seed,
	})
}

// runner holds what every step of one run shares.
type runner struct {
	cfg  Config
	topo *testbed.Topology
	out  func(who string) io.Writer
	obs  probes.Observer
}

func (r *runner) stackConfig(profileArg, priority string) stackConfig {
	return stackConfig{
		binary: r.cfg.Binary, profileArg: profileArg, priority: priority,
		ports:       r.topo.SwitchPorts(),
		ctrlMetrics: r.cfg.ControllerMetrics, swMetrics: r.cfg.SwitchMetrics,
		output: r.out,
	}
}

// settle bounds how long a step may wait for its processes beyond its own
// measurement.
const settle = 30 * time.Second
