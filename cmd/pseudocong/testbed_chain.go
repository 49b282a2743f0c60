package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/viper"

	"github.com/pseudocong/pseudocong/internal/ready"
	"github.com/pseudocong/pseudocong/testbed"
)

// `testbed up --topo chain:K`: K switch processes in a chain, one
// reactive controller, hosts at both ends. Unlike a bare `testbed up`,
// which builds the plumbing and returns, this runs the processes in the
// foreground until interrupted (or one of them exits), then stops them
// and removes the testbed: nothing it started outlives it, and the
// switches and controller also get SIGTERM if this process is killed
// (testbed.Daemon's Pdeathsig).

// parseTopo reads --topo: "" (hosts only, no processes) or "chain:K".
func parseTopo(s string) (int, error) {
	if s == "" {
		return 0, nil
	}
	kind, arg, ok := strings.Cut(s, ":")
	if !ok || kind != "chain" {
		return 0, usageErrorf("--topo %q: want chain:K (K switches in a chain, 1..%d)", s, testbed.MaxChain)
	}
	k, err := strconv.Atoi(arg)
	if err != nil || k < 1 || k > testbed.MaxChain {
		return 0, usageErrorf("--topo %q: want chain:K with K in 1..%d", s, testbed.MaxChain)
	}
	return k, nil
}

// chainRun is the processes of a running chain.
type chainRun struct {
	ctrl     *testbed.Daemon
	switches []*testbed.Daemon
	report   ready.Report
}

// stop stops every process (switches first, so none reconnects to a
// stopping controller) and reports what did not stop cleanly.
func (c *chainRun) stop() error {
	var errs []error
	for i, d := range c.switches {
		if err := d.Stop(5 * time.Second); err != nil {
			errs = append(errs, fmt.Errorf("switch %d: %w\n%s", i+1, err, d.Output()))
		}
	}
	if c.ctrl != nil {
		if err := c.ctrl.Stop(5 * time.Second); err != nil {
			errs = append(errs, fmt.Errorf("controller: %w\n%s", err, c.ctrl.Output()))
		}
	}
	return errors.Join(errs...)
}

// startChain starts the controller and one switch per entry of ports
// (datapath ids 1..K), and waits until every switch is connected. Their
// output is kept in memory and shown when one fails.
func startChain(ctx context.Context, ports [][]string, log *slog.Logger) (_ *chainRun, err error) {
	c := &chainRun{}
	defer func() {
		if err != nil {
			err = errors.Join(err, c.stop())
		}
	}()
	c.ctrl, err = testbed.StartDaemon(testbed.DaemonConfig{Ready: true, Args: []string{
		"controller", "--listen", "ptcp:0:127.0.0.1", "--app", "reactive", "--metrics-addr", "127.0.0.1:0"}})
	if err != nil {
		return c, err
	}
	rep, err := waitDaemon(ctx, c.ctrl, "controller")
	if err != nil {
		return c, err
	}
	c.report.OpenFlow, c.report.Metrics = rep.OpenFlow, rep.Metrics
	for i, pp := range ports {
		args := []string{"switch", "--controller", "tcp:" + rep.OpenFlow, "--dpid", strconv.Itoa(i + 1),
			"--listen", "ptcp:0:127.0.0.1", "--fail-mode", "secure", "--metrics-addr", "127.0.0.1:0"}
		for _, p := range pp {
			args = append(args, "--port", p)
		}
		d, err := testbed.StartDaemon(testbed.DaemonConfig{Ready: true, Args: args})
		if err != nil {
			return c, err
		}
		c.switches = append(c.switches, d)
		srep, err := waitDaemon(ctx, d, fmt.Sprintf("switch %d", i+1))
		if err != nil {
			return c, err
		}
		c.report.Listen = append(c.report.Listen, srep.Listen...)
		log.Info("switch started", "switch", i+1, "dpid", i+1, "ports", pp, "listen", srep.Listen)
	}
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if _, err := testbed.WaitMetric(wctx, rep.Metrics, "pseudocong_controller_connected_switches", nil,
		func(v float64) bool { return v >= float64(len(ports)) }); err != nil {
		return c, fmt.Errorf("not all %d switches connected to the controller: %w", len(ports), err)
	}
	return c, nil
}

// waitDaemon waits for a daemon's ready report, or its early exit.
func waitDaemon(ctx context.Context, d *testbed.Daemon, what string) (ready.Report, error) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	rep, err := d.WaitReady(ctx)
	if err != nil {
		return rep, fmt.Errorf("%s: %w\n%s", what, err, d.Output())
	}
	return rep, nil
}

// runChain brings the chain testbed up, runs it until ctx ends or a
// process exits, and tears everything down.
func runChain(ctx context.Context, v *viper.Viper, cfg testbed.Config, out io.Writer, log *slog.Logger) (err error) {
	topo, err := testbed.Up(ctx, cfg)
	if err != nil {
		return err
	}
	defer func() {
		if derr := testbed.Down(cfg.Name, testbed.DownOptions{StateDir: cfg.StateDir}); derr != nil {
			err = errors.Join(err, fmt.Errorf("testbed down: %w", derr))
		}
	}()
	ports := topo.ChainSwitchPorts()
	run, err := startChain(ctx, ports, log)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, run.stop()) }()
	h1, h2 := topo.Hosts[0], topo.Hosts[len(topo.Hosts)-1]
	fmt.Fprintf(out, "chain of %d switches, controller %s (metrics %s)\n", len(ports), run.report.OpenFlow, run.report.Metrics)
	for i, pp := range ports {
		fmt.Fprintf(out, "switch %d: dpid %d ports %s, management tcp:%s\n", i+1, i+1, strings.Join(pp, " "), run.report.Listen[i])
	}
	fmt.Fprintf(out, "host 1: ip netns exec %s ... (%s)   host 2: ip netns exec %s ... (%s)\nrunning until interrupted\n",
		h1.Netns, h1.Addr.Addr(), h2.Netns, h2.Addr.Addr())
	if err := reportReady(v, run.report); err != nil {
		return err
	}
	done := make(chan string, len(run.switches)+1)
	watch := func(d *testbed.Daemon, what string) {
		go func() {
			select {
			case <-d.Done():
				done <- what
			case <-ctx.Done():
			}
		}()
	}
	watch(run.ctrl, "controller")
	for i, d := range run.switches {
		watch(d, fmt.Sprintf("switch %d", i+1))
	}
	select {
	case <-ctx.Done():
		log.Info("stopping the chain")
		return nil
	case what := <-done:
		return fmt.Errorf("%s exited; stopping the chain", what)
	}
}
