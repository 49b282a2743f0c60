package live

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/pseudocong/pseudocong/internal/ready"
	"github.com/pseudocong/pseudocong/testbed"
)

// stopGrace is how long a child gets to exit on SIGTERM before SIGKILL.
const stopGrace = 5 * time.Second

// stackConfig is one controller + switch pair of a cell.
type stackConfig struct {
	binary     string
	profileArg string
	priority   string
	ports      []string
	// ctrlMetrics / swMetrics: /metrics addresses ("" = any port, as reported).
	ctrlMetrics, swMetrics string
	output                 func(who string) io.Writer
	// rules, if set, is a rule file (ovs-ofctl flow syntax) for the
	// proactive app, which pushes it when the switch connects, instead of
	// the reactive app; priority is then unused.
	rules string
	// switchArgs are extra `pseudocong switch` flags (link emulation,
	// --tcam-capacity).
	switchArgs []string
}

// stack is a running controller and switch.
type stack struct {
	ctrl, sw *testbed.Daemon
	// ofAddr is the controller's OpenFlow address; mgmtAddr the switch's
	// passive listener (base load, BARRIER).
	ofAddr, mgmtAddr       string
	ctrlMetrics, swMetrics string
}

// orAny is addr, or a loopback address with port 0: the child binds a
// port of its own choosing and reports it (--ready-fd). Handing a child a
// port that "was free a moment ago" races every other process on the
// machine for it.
func orAny(addr string) string {
	if addr != "" {
		return addr
	}
	return "127.0.0.1:0"
}

// readyWait bounds a child's start-up: seconds, because a busy 2-core
// machine may take that long to exec and initialise a Go binary.
const readyWait = 30 * time.Second

// waitReady waits for d's address report.
func waitReady(ctx context.Context, d *testbed.Daemon, who string) (ready.Report, error) {
	ctx, cancel := context.WithTimeout(ctx, readyWait)
	defer cancel()
	rep, err := d.WaitReady(ctx)
	if err != nil {
		return rep, fmt.Errorf("%s did not come up: %w%s", who, err, exitNote(d))
	}
	return rep, nil
}

// startStack starts the controller (reactive app, permanent rules, the
// cell's priority pattern: the sim's controller) and the switch (the
// profile's data plane on the testbed's veths), and waits until the
// switch is connected. Both bind port 0 unless the config fixes a
// metrics address, and report what they bound. On error everything
// started is stopped.
func startStack(ctx context.Context, cfg stackConfig) (_ *stack, err error) {
	s := &stack{}
	defer func() {
		if err != nil {
			err = errors.Join(err, s.stop())
		}
	}()
	ctrlArgs := []string{"controller",
		"--listen", "ptcp:0:127.0.0.1",
		"--app", "reactive",
		"--priority", cfg.priority,
		// Permanent rules, as the sim's controller: the paper's tables
		// keep growing during a run.
		"--idle-timeout", "0",
		"--metrics-addr", orAny(cfg.ctrlMetrics),
	}
	if cfg.rules != "" {
		ctrlArgs = []string{"controller",
			"--listen", "ptcp:0:127.0.0.1",
			"--app", "proactive", "--rules", cfg.rules,
			"--metrics-addr", orAny(cfg.ctrlMetrics),
		}
	}
	if s.ctrl, err = testbed.StartDaemon(testbed.DaemonConfig{Binary: cfg.binary, Args: ctrlArgs, Output: cfg.output("controller"), Ready: true}); err != nil {
		return s, err
	}
	rep, err := waitReady(ctx, s.ctrl, "controller")
	if err != nil {
		return s, err
	}
	s.ofAddr, s.ctrlMetrics = rep.OpenFlow, rep.Metrics
	swArgs := []string{"switch",
		"--controller", "tcp:" + s.ofAddr,
		"--listen", "ptcp:0:127.0.0.1",
		"--profile", cfg.profileArg,
		"--fail-mode", "secure",
		"--metrics-addr", orAny(cfg.swMetrics),
	}
	for _, p := range cfg.ports {
		swArgs = append(swArgs, "--port", p)
	}
	swArgs = append(swArgs, cfg.switchArgs...)
	if s.sw, err = testbed.StartDaemon(testbed.DaemonConfig{Binary: cfg.binary, Args: swArgs, Output: cfg.output("switch"), Ready: true}); err != nil {
		return s, err
	}
	if rep, err = waitReady(ctx, s.sw, "switch"); err != nil {
		return s, err
	}
	if len(rep.Listen) != 1 {
		return s, fmt.Errorf("switch reported %d management listeners, want 1", len(rep.Listen))
	}
	s.mgmtAddr, s.swMetrics = rep.Listen[0], rep.Metrics
	if err := waitMetrics(ctx, s.ctrl, s.ctrlMetrics, "pseudocong_controller_connected_switches", func(v float64) bool { return v >= 1 }); err != nil {
		return s, fmt.Errorf("switch did not connect to the controller: %w%s", err, exitNote(s.sw))
	}
	return s, nil
}

// waitMetrics waits for a metric condition, giving up early when the
// process it asks about has exited.
func waitMetrics(ctx context.Context, d *testbed.Daemon, addr, name string, ok func(float64) bool) error {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	go func() {
		select {
		case <-d.Done():
			cancel()
		case <-ctx.Done():
		}
	}()
	_, err := testbed.WaitMetric(ctx, addr, name, nil, ok)
	if err != nil {
		return fmt.Errorf("%w%s", err, exitNote(d))
	}
	return nil
}

// exitNote describes a daemon that has exited, with its last output.
func exitNote(d *testbed.Daemon) string {
	if d == nil {
		return ""
	}
	select {
	case <-d.Done():
	default:
		return ""
	}
	out := d.Output()
	if len(out) > 2000 {
		out = out[len(out)-2000:]
	}
	return fmt.Sprintf(" (process %d exited: %v; output:\n%s)", d.Pid(), d.Err(), out)
}

// alive reports an error if either process has exited: a cell measured
// against a dead switch would be garbage.
func (s *stack) alive() error {
	for _, d := range []*testbed.Daemon{s.ctrl, s.sw} {
		if n := exitNote(d); n != "" {
			return errors.New("live: a child process died" + n)
		}
	}
	return nil
}

// stop stops the switch first (so the controller sees an orderly
// disconnect), then the controller. Safe on a partly started stack.
func (s *stack) stop() error {
	var errs []error
	for _, d := range []*testbed.Daemon{s.sw, s.ctrl} {
		if d == nil {
			continue
		}
		if err := d.Stop(stopGrace); err != nil && !exitedBySignal(err) {
			errs = append(errs, fmt.Errorf("stop pid %s: %w", strconv.Itoa(d.Pid()), err))
		}
	}
	s.sw, s.ctrl = nil, nil
	return errors.Join(errs...)
}
