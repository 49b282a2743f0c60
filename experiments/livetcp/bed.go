package livetcp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/pseudocong/pseudocong/testbed"
)

// PortEmu is the emulation on one switch port's transmit side; empty
// fields are off.
type PortEmu struct {
	Qdisc string // netsim.ParseQdisc spec
	Rate  string // line rate, e.g. 100mbit
	Delay string // one-way delay line, e.g. 12500us
	Loss  string // netsim.ParseLoss spec
}

func (p PortEmu) flags(iface string) []string {
	var out []string
	add := func(flag, v string) {
		if v != "" {
			out = append(out, "--"+flag, iface+"="+v)
		}
	}
	add("port-qdisc", p.Qdisc)
	add("port-rate", p.Rate)
	add("port-delay", p.Delay)
	add("port-loss", p.Loss)
	return out
}

// SwitchEmu is one switch of the chain: Left is its port 1 (towards host
// 1, the client), Right its port 2 (towards host 2, the server).
type SwitchEmu struct {
	Left, Right PortEmu
}

// Config describes a Bed.
type Config struct {
	// Binary is the pseudocong binary the switches run.
	Binary string
	// Switches is the chain, client side first; at least one.
	Switches []SwitchEmu
	// Name prefixes the testbed's objects; empty: a random one.
	Name string
	// CC lists the congestion controls runs will use (added to the
	// host's allowed list until Close).
	CC  []string
	Log *slog.Logger
}

// Bed is a running live testbed.
type Bed struct {
	cfg      Config
	topo     *testbed.Topology
	dir      string
	switches []*testbed.Daemon
	metrics  []string
	restore  []func() error
	log      *slog.Logger
	// Client and Server are host 1 and host 2.
	Client, Server testbed.Host
}

// Up builds the testbed, widens the allowed congestion controls and
// starts the switches. On error everything made so far is undone.
func Up(ctx context.Context, cfg Config) (b *Bed, err error) {
	if len(cfg.Switches) < 1 || len(cfg.Switches) > testbed.MaxChain {
		return nil, fmt.Errorf("livetcp: %d switches, want 1..%d", len(cfg.Switches), testbed.MaxChain)
	}
	if cfg.Binary == "" {
		return nil, errors.New("livetcp: no pseudocong binary")
	}
	for _, c := range []string{"ip", "iperf3", "nstat", "ping", "ss"} {
		if _, err := exec.LookPath(c); err != nil {
			return nil, fmt.Errorf("livetcp: %s: %w", c, err)
		}
	}
	if cfg.Name == "" {
		var r [3]byte
		_, _ = rand.Read(r[:])
		cfg.Name = "t" + hex.EncodeToString(r[:])
	}
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	dir, err := os.MkdirTemp("", "livetcp-")
	if err != nil {
		return nil, err
	}
	b = &Bed{cfg: cfg, dir: dir, log: log}
	defer func() {
		if err != nil {
			err = errors.Join(err, b.Close())
			b = nil
		}
	}()
	b.restore = append(b.restore, func() error { return os.RemoveAll(dir) })
	chain := len(cfg.Switches)
	if chain == 1 {
		chain = 0
	}
	b.restore = append(b.restore, func() error { return testbed.Down(cfg.Name, testbed.DownOptions{StateDir: dir}) })
	if b.topo, err = testbed.Up(ctx, testbed.Config{Name: cfg.Name, Hosts: 2, Chain: chain, StateDir: dir}); err != nil {
		return b, fmt.Errorf("livetcp: testbed: %w", err)
	}
	b.Client, b.Server = b.topo.Hosts[0], b.topo.Hosts[1]
	undo, err := WidenAllowedCC(cfg.CC...)
	if err != nil {
		return b, err
	}
	b.restore = append(b.restore, undo)
	for _, h := range []testbed.Host{b.Client, b.Server} {
		if err := NetnsSysctl(h.Netns, "net.ipv4.tcp_no_metrics_save", "1"); err != nil {
			return b, err
		}
	}
	if err := b.startSwitches(ctx, cfg.Switches); err != nil {
		return b, err
	}
	return b, nil
}

// Ports is each switch's (port 1, port 2) interface names.
func (b *Bed) Ports() [][]string { return b.topo.ChainSwitchPorts() }

// Reconfigure restarts the switches with new port emulation (same chain
// length); the namespaces stay.
func (b *Bed) Reconfigure(ctx context.Context, sw []SwitchEmu) error {
	if len(sw) != len(b.cfg.Switches) {
		return fmt.Errorf("livetcp: %d switches, the bed has %d", len(sw), len(b.cfg.Switches))
	}
	if err := b.stopSwitches(); err != nil {
		return err
	}
	return b.startSwitches(ctx, sw)
}

func (b *Bed) startSwitches(ctx context.Context, sw []SwitchEmu) error {
	ports := b.topo.ChainSwitchPorts()
	for i, s := range sw {
		args := []string{"switch", "--listen", "ptcp:0:127.0.0.1", "--fail-mode", "standalone",
			"--metrics-addr", "127.0.0.1:0", "--log-level", "warn",
			"--port", ports[i][0], "--port", ports[i][1]}
		args = append(args, s.Left.flags(ports[i][0])...)
		args = append(args, s.Right.flags(ports[i][1])...)
		b.log.Debug("livetcp switch", "i", i+1, "args", strings.Join(args, " "))
		d, err := testbed.StartDaemon(testbed.DaemonConfig{Binary: b.cfg.Binary, Args: args, Ready: true})
		if err != nil {
			return fmt.Errorf("livetcp: switch %d: %w", i+1, err)
		}
		b.switches = append(b.switches, d)
		rctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		rep, err := d.WaitReady(rctx)
		cancel()
		if err != nil {
			return fmt.Errorf("livetcp: switch %d ready: %w\n%s", i+1, err, d.Output())
		}
		b.metrics = append(b.metrics, rep.Metrics)
	}
	// Ports come up and MAC tables fill asynchronously: wait for a ping
	// end to end (a deadline, polling).
	deadline := time.Now().Add(20 * time.Second)
	for {
		out, err := exec.CommandContext(ctx, "ip", "netns", "exec", b.Client.Netns, "ping", "-c", "1", "-W", "1",
			b.Server.Addr.Addr().String()).CombinedOutput()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("livetcp: no ping through the chain: %v\n%s", err, out)
		}
		time.Sleep(100 * time.Millisecond) // polling, not asserting
	}
}

func (b *Bed) stopSwitches() error {
	var errs []error
	for i := len(b.switches) - 1; i >= 0; i-- {
		if err := b.switches[i].Stop(5 * time.Second); err != nil {
			errs = append(errs, fmt.Errorf("switch %d: %w\n%s", i+1, err, b.switches[i].Output()))
		}
	}
	b.switches, b.metrics = nil, nil
	return errors.Join(errs...)
}

// SwitchOutput is the tail of every switch's output (for failures).
func (b *Bed) SwitchOutput() string {
	var s strings.Builder
	for i, d := range b.switches {
		fmt.Fprintf(&s, "switch %d:\n%s\n", i+1, d.Output())
	}
	return s.String()
}

// Close stops the switches, removes the testbed and restores the sysctls,
// in reverse order of making; it reports every failure.
func (b *Bed) Close() error {
	errs := []error{b.stopSwitches()}
	for i := len(b.restore) - 1; i >= 0; i-- {
		errs = append(errs, b.restore[i]())
	}
	b.restore = nil
	return errors.Join(errs...)
}

// Drops scrapes every switch's drop counters (metric names containing
// "dropped" or "lost"): "s<i> <metric>{<labels>}" → value, nonzero only.
func (b *Bed) Drops(ctx context.Context) (map[string]float64, error) {
	out := map[string]float64{}
	for i, addr := range b.metrics {
		m, err := testbed.Scrape(ctx, addr)
		if err != nil {
			return nil, fmt.Errorf("livetcp: switch %d metrics: %w", i+1, err)
		}
		for name, fam := range m {
			if !strings.Contains(name, "dropped") && !strings.Contains(name, "lost") {
				continue
			}
			for _, mm := range fam.GetMetric() {
				v := mm.GetCounter().GetValue()
				if v == 0 {
					continue
				}
				var l []string
				for _, lp := range mm.GetLabel() {
					l = append(l, lp.GetName()+"="+lp.GetValue())
				}
				out[fmt.Sprintf("s%d %s{%s}", i+1, name, strings.Join(l, ","))] = v
			}
		}
	}
	return out, nil
}
