package live

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"

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
	// ctrlMetrics / swMetrics: /metrics addresses ("" = a free port).
	ctrlMetrics, swMetrics string
	output                 func(who string) io.Writer
}

// stack is a running controller and switch.
type stack struct {
	ctrl, sw *testbed.Daemon
	// ofAddr is the controller's OpenFlow address; mgmtAddr the switch's
	// passive listener (base load, BARRIER).
	ofAddr, mgmtAddr       string
	ctrlMetrics, swMetrics string
}

// freeAddr returns a loopback address with a port that was free a moment
// ago.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("free port: %w", err)
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func orFree(addr string) (string, error) {
	if addr != "" {
		return addr, nil
	}
	return freeAddr()
}

// startStack starts the controller (reactive app, permanent rules, the
// cell's priority pattern: the sim's controller) and the switch (the
// profile's data plane on the testbed's veths), and waits until the
// switch is connected. On error everything started is stopped.
func startStack(ctx context.Context, cfg stackConfig) (_ *stack, err error) {
	s := &stack{}
	defer func() {
		if err != nil {
			err = errors.Join(err, s.stop())
		}
	}()
	addrs := make([]string, 4)
	for i, want := range []string{"", "", cfg.ctrlMetrics, cfg.swMetrics} {
		if addrs[i], err = orFree(want); err != nil {
			return s, err
		}
	}
	s.ofAddr, s.mgmtAddr, s.ctrlMetrics, s.swMetrics = addrs[0], addrs[1], addrs[2], addrs[3]
	_, mgmtPort, _ := net.SplitHostPort(s.mgmtAddr)

	ctrlArgs := []string{"controller",
		"--listen", "tcp:" + s.ofAddr,
		"--app", "reactive",
		"--priority", cfg.priority,
		// Permanent rules, as the sim's controller: the paper's tables
		// keep growing during a run.
		"--idle-timeout", "0",
		"--metrics-addr", s.ctrlMetrics,
	}
	if s.ctrl, err = testbed.StartDaemon(testbed.DaemonConfig{Binary: cfg.binary, Args: ctrlArgs, Output: cfg.output("controller")}); err != nil {
		return s, err
	}
	if err := waitMetrics(ctx, s.ctrl, s.ctrlMetrics, "pseudocong_controller_connected_switches", func(float64) bool { return true }); err != nil {
		return s, fmt.Errorf("controller did not come up: %w", err)
	}
	swArgs := []string{"switch",
		"--controller", "tcp:" + s.ofAddr,
		"--listen", "ptcp:" + mgmtPort + ":127.0.0.1",
		"--profile", cfg.profileArg,
		"--fail-mode", "secure",
		"--metrics-addr", s.swMetrics,
	}
	for _, p := range cfg.ports {
		swArgs = append(swArgs, "--port", p)
	}
	if s.sw, err = testbed.StartDaemon(testbed.DaemonConfig{Binary: cfg.binary, Args: swArgs, Output: cfg.output("switch")}); err != nil {
		return s, err
	}
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
