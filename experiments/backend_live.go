package experiments

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"

	"github.com/pseudocong/pseudocong/experiments/live"
)

// BackendLive runs the cells on real processes and Linux namespaces
// (package experiments/live); it needs root.
const BackendLive = "live"

// LiveOptions tune the live backend; the zero value is fine for the CLI.
type LiveOptions struct {
	// Binary is the pseudocong executable for the controller and switch
	// processes (default: this executable).
	Binary string
	// Testbed is the testbed name (default: random "lv…").
	Testbed string
	// ControllerMetrics, SwitchMetrics, ProbeMetrics: fixed /metrics
	// addresses, so a Prometheus can scrape the run (default: free ports,
	// no probe endpoint).
	ControllerMetrics, SwitchMetrics, ProbeMetrics string
	// ProcessOutput receives the child processes' logs.
	ProcessOutput io.Writer
	// Logger: default slog.Default().
	Logger *slog.Logger
}

// runLive measures res.Cells on the live backend, fills their outcomes,
// and returns the live backend's own summary values (kernel.*,
// agreement.*). The first handshake experiment also gets real kernel
// connect() runs: its flows at its highest rate on its largest base load,
// under the spec's switch profile and under ideal.
func runLive(ctx context.Context, res *Result, spec *Spec, opts Options, profName string) (map[string][]float64, error) {
	logger := opts.Live.Logger
	if logger == nil {
		// The testbed's name goes to stderr: after a SIGKILL of this
		// process, `pseudocong testbed down --name NAME` cleans up.
		logger = slog.Default()
	}
	cfg := live.Config{
		Binary: opts.Live.Binary, Name: opts.Live.Testbed,
		ProfileArg: profName, Profile: res.Profile, Timers: res.Timers, Seed: res.Seed,
		ControllerService: spec.Controller.ServiceTime, LinkLatency: spec.Network.LinkLatency,
		ControllerMetrics: opts.Live.ControllerMetrics, SwitchMetrics: opts.Live.SwitchMetrics,
		ProbeMetrics: opts.Live.ProbeMetrics, ProcessOutput: opts.Live.ProcessOutput,
		Progress: opts.Progress, Logger: logger,
	}
	for _, c := range res.Cells {
		if top := c.topologyName(spec); top != DefaultTopology {
			return nil, &SpecError{spec.Source, fmt.Errorf("experiment %s: topology %s: the live backend runs paper 000's testbed (%s) only", c.Exp.ID, top, DefaultTopology)}
		}
		if !live.Supported(string(c.Exp.Kind)) {
			return nil, &SpecError{spec.Source, fmt.Errorf("experiment %s: kind %s is not measured by the live backend (only %s, %s)", c.Exp.ID, c.Exp.Kind, KindPacketIn, KindHandshake)}
		}
		cfg.Cells = append(cfg.Cells, live.Cell{
			Label: c.Label(), Key: strings.Replace(cellKey(c, "_"), "._", "", 1), Kind: string(c.Exp.Kind),
			Flows: c.Exp.Flows, Rate: c.Rate, BaseLoad: c.BaseLoad, Priority: c.Priority,
		})
	}
	for _, e := range spec.Runs {
		if e.Kind != KindHandshake {
			continue
		}
		prio := PriorityAscending
		if !slices.Contains(e.Priorities, prio) {
			prio = e.Priorities[0]
		}
		profiles := []string{profName}
		if res.Profile.Name != "ideal" {
			profiles = append(profiles, "ideal")
		}
		cfg.Kernel = &live.KernelRun{
			Flows: e.Flows, Rate: slices.Max(e.Rates), BaseLoad: slices.Max(e.BaseLoads),
			Priority: prio, Profiles: profiles,
		}
		break
	}
	out, err := live.Run(ctx, cfg)
	if err != nil {
		return nil, err
	}
	for i := range res.Cells {
		res.Cells[i].Outcome = out.Outcomes[i]
	}
	return out.Values, nil
}
