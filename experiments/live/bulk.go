package live

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/pseudocong/pseudocong/controller"
	"github.com/pseudocong/pseudocong/openflow"
	"github.com/pseudocong/pseudocong/profile"
	"github.com/pseudocong/pseudocong/testbed"
)

// Bulk runs: paper-tcp's live cell. Kernel-TCP bulk flows from host 1 to
// host 2 through our switch, once per switch profile, each with a fresh
// proactive controller (`pseudocong controller --app proactive`) that
// pushes every flow's two rules (one per direction, the priority
// pattern's priorities) when the switch connects, as the sim's bulk run
// preloads them. With the TCAM scaled below the rules (the switch's
// --tcam-capacity) the switch's LRU cache evicts and swaps rules in and
// out for the whole run, on the wall clock.

// BulkProfile is one switch of a bulk run.
type BulkProfile struct {
	// Arg is the switch's --profile (a name or path).
	Arg string
	// TCAMCapacity, if positive, is the switch's --tcam-capacity.
	TCAMCapacity int
}

// BulkConfig is a live bulk run.
type BulkConfig struct {
	// Binary is the pseudocong executable (default os.Executable()).
	Binary string
	// Name is the testbed name (default "lb" + 6 random hex digits).
	Name     string
	Profiles []BulkProfile
	// Flows bulk flows start at Rate per second and send for Duration
	// from the first start; their rules follow Priority (ascending,
	// descending, constant).
	Flows    int
	Rate     float64
	Priority string
	Duration time.Duration
	// SampleInterval is the TCP_INFO sampling period (default 10 ms).
	SampleInterval time.Duration
	// CC is the senders' congestion control (TCP_CONGESTION; "": the
	// kernel's default).
	CC string
	// PortRate, PortDelay and PortQdisc are the link emulation on both
	// switch ports' egress (the switch's --port-rate/-delay/-qdisc
	// values, e.g. "100mbit", "2ms", "droptail,limit=100"); empty: off.
	PortRate, PortDelay, PortQdisc string
	// ProcessOutput, if set, receives the child processes' output.
	ProcessOutput io.Writer
	// Progress, if set, is told after every finished profile.
	Progress func(done, total int, label string)
	Logger   *slog.Logger
}

// BulkResult is one profile's run.
type BulkResult struct {
	// Profile is the loaded profile's name; TCAMCapacity the entries the
	// switch had.
	Profile      string
	TCAMCapacity int
	Flows        []KernelFlow
	Duration     time.Duration
	// Nstat is the client namespace's counters over the run (differences
	// of `nstat -as`): TcpExtTCPTimeouts, TcpRetransSegs,
	// TcpExtTCPSynRetrans, TcpExtTCPLossProbes, TcpExtTCPSpuriousRTOs.
	Nstat map[string]uint64
	// Switch counters over the run, from its /metrics: swap-ins,
	// evictions, TCAM moves, Packet-Ins (table misses: none expected),
	// the frames the ports' emulated drop-tail queues dropped (congestion,
	// QueueDrops) and the packets the modelled data plane and agent
	// dropped (ModelDrops: full hold lists and queues).
	SwapIns, Evictions, Moves, PacketIns, QueueDrops, ModelDrops float64
}

// BulkPortBase is the first flow's source port; the sink listens on
// BulkSinkPort. Each profile's run uses its own port range (base +
// 1000 × run), so no connection of one run meets the TIME_WAIT of the
// one before.
const (
	BulkPortBase = 40000
	BulkSinkPort = 5001
)

// maxBulkFlows keeps the flows' ports in their 1000-port range.
const maxBulkFlows = 1000

// RunBulk brings a testbed up, runs the flows under every profile in turn
// and tears everything down on every exit path.
func RunBulk(ctx context.Context, cfg BulkConfig) (res []BulkResult, err error) {
	if cfg.Flows < 1 || cfg.Flows > maxBulkFlows || !(cfg.Rate > 0) || cfg.Duration <= 0 || len(cfg.Profiles) == 0 {
		return nil, fmt.Errorf("live bulk: flows %d (1..%d), rate %v, duration %v, %d profiles: out of range", cfg.Flows, maxBulkFlows, cfg.Rate, cfg.Duration, len(cfg.Profiles))
	}
	if os.Geteuid() != 0 {
		return nil, errors.New("live bulk: needs root (network namespaces, veths, AF_PACKET sockets)")
	}
	if _, err := exec.LookPath("nstat"); err != nil {
		return nil, fmt.Errorf("live bulk: nstat (iproute2): %w", err)
	}
	if cfg.Binary == "" {
		if cfg.Binary, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("live bulk: own executable: %w", err)
		}
	}
	if cfg.Name == "" {
		var b [3]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, err
		}
		cfg.Name = "lb" + hex.EncodeToString(b[:])
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	dir, err := os.MkdirTemp("", "pseudocong-bulk-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	topo, err := testbed.Up(ctx, testbed.Config{Name: cfg.Name, Hosts: 2, StateDir: dir})
	if err != nil {
		return nil, fmt.Errorf("live bulk: testbed up: %w", err)
	}
	defer func() {
		if derr := testbed.Down(cfg.Name, testbed.DownOptions{StateDir: dir}); derr != nil {
			err = errors.Join(err, fmt.Errorf("live bulk: testbed down: %w", derr))
		}
	}()
	cfg.Logger.Info("live bulk testbed up", "name", cfg.Name)
	h1, h2 := topo.Hosts[0], topo.Hosts[1]
	// Static neighbours: the proactive rules carry only the flows' TCP
	// packets, so ARP would find no rule (and no controller answers it).
	for _, x := range [][2]testbed.Host{{h1, h2}, {h2, h1}} {
		if err := staticNeighbour(x[0], x[1]); err != nil {
			return nil, err
		}
		// No cached ssthresh from one run to the next.
		if _, err := netnsExec(ctx, x[0].Netns, "sysctl", "-q", "-w", "net.ipv4.tcp_no_metrics_save=1"); err != nil {
			return nil, err
		}
	}
	out := outputs(cfg.ProcessOutput)
	for i, bp := range cfg.Profiles {
		r, err := bulkRun(ctx, cfg, topo, bp, filepath.Join(dir, fmt.Sprintf("rules%d.txt", i)), uint16(BulkPortBase+1000*i), out)
		if err != nil {
			return nil, fmt.Errorf("live bulk: %s: %w", bp.Arg, err)
		}
		res = append(res, *r)
		if cfg.Progress != nil {
			cfg.Progress(i+1, len(cfg.Profiles), "live bulk "+r.Profile)
		}
	}
	return res, nil
}

// bulkRun is one profile: rules, controller and switch, the flows.
func bulkRun(ctx context.Context, cfg BulkConfig, topo *testbed.Topology, bp BulkProfile, rulesPath string, base uint16, out func(string) io.Writer) (_ *BulkResult, err error) {
	prof, err := profile.Load(bp.Arg)
	if err != nil {
		return nil, err
	}
	h1, h2 := topo.Hosts[0], topo.Hosts[1]
	ports := make([]uint16, cfg.Flows)
	for i := range ports {
		ports[i] = base + uint16(i)
	}
	rules, err := BulkRules(h1, h2, ports, BulkSinkPort, cfg.Priority)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(rulesPath, []byte(rules), 0o644); err != nil {
		return nil, err
	}
	var swArgs []string
	if bp.TCAMCapacity > 0 {
		swArgs = append(swArgs, "--tcam-capacity", strconv.Itoa(bp.TCAMCapacity))
	}
	for _, p := range topo.SwitchPorts() {
		for _, f := range []struct{ flag, v string }{{"--port-rate", cfg.PortRate}, {"--port-delay", cfg.PortDelay}, {"--port-qdisc", cfg.PortQdisc}} {
			if f.v != "" {
				swArgs = append(swArgs, f.flag, p+"="+f.v)
			}
		}
	}
	st, err := startStack(ctx, stackConfig{
		binary: cfg.Binary, profileArg: bp.Arg, ports: topo.SwitchPorts(), output: out,
		rules: rulesPath, switchArgs: swArgs,
	})
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, st.stop()) }()
	// The controller pushes the rules when the switch connects: wait until
	// the switch's table holds them all, then for a BARRIER (the modelled
	// data plane answers it once every accepted FLOW_MOD's TCAM work is
	// done), so the first SYN meets the table the run is about.
	if err := waitMetrics(ctx, st.sw, st.swMetrics, "pseudocong_switch_flow_entries", func(v float64) bool { return v >= float64(2*cfg.Flows) }); err != nil {
		return nil, fmt.Errorf("the proactive rules did not arrive: %w", err)
	}
	if err := barrier(ctx, st.mgmtAddr); err != nil {
		return nil, errors.Join(err, st.alive())
	}
	before, err := readNstat(ctx, h1.Netns)
	if err != nil {
		return nil, err
	}
	swBefore := scrapeBulkCounters(ctx, st)
	cfg.Logger.Info("live bulk: flows start", "profile", prof.Name, "testbed", topo.Name, "flows", cfg.Flows, "duration", cfg.Duration)
	flows, err := RunKernelBulk(ctx, KernelBulkConfig{
		ClientNetns: h1.Netns, ServerNetns: h2.Netns, Src: h1.Addr.Addr(), Dst: h2.Addr.Addr(),
		SrcPorts: ports, DstPort: BulkSinkPort, Rate: cfg.Rate, Duration: cfg.Duration,
		SampleInterval: cfg.SampleInterval, CC: cfg.CC,
	})
	if err != nil {
		return nil, errors.Join(err, st.alive())
	}
	if err := st.alive(); err != nil {
		return nil, err
	}
	after, err := readNstat(ctx, h1.Netns)
	if err != nil {
		return nil, err
	}
	sw := scrapeBulkCounters(ctx, st).sub(swBefore)
	capacity := prof.TCAM.Capacity
	if bp.TCAMCapacity > 0 {
		capacity = bp.TCAMCapacity
	}
	r := &BulkResult{Profile: prof.Name, TCAMCapacity: capacity, Flows: flows, Duration: cfg.Duration, Nstat: map[string]uint64{},
		SwapIns: sw.swapIns, Evictions: sw.evictions, Moves: sw.moves, PacketIns: sw.packetIns,
		QueueDrops: sw.queueDrops, ModelDrops: sw.modelDrops}
	for _, k := range NstatCounters {
		if after[k] >= before[k] {
			r.Nstat[k] = uint64(after[k] - before[k])
		}
	}
	return r, nil
}

// BulkRules is the proactive controller's rule file for the flows from
// h1's ports to h2's sink: per flow the data rule (port 1 → 2) and the
// ACK rule (2 → 1), with priorities 2i and 2i+1 of the pattern (the sim's
// controller.PriorityStrategy.Nth numbering).
func BulkRules(h1, h2 testbed.Host, ports []uint16, sinkPort uint16, pattern string) (string, error) {
	pat, err := controller.ParsePriorityStrategy(pattern)
	if err != nil {
		return "", err
	}
	a1, a2 := h1.Addr.Addr(), h2.Addr.Addr()
	var b strings.Builder
	fmt.Fprintf(&b, "# paper-tcp live cell: %d bulk flows %s -> %s:%d, %s priorities\n", len(ports), a1, a2, sinkPort, pattern)
	for i, p := range ports {
		fwd, err1 := pat.Nth(2 * i)
		rev, err2 := pat.Nth(2*i + 1)
		if err := errors.Join(err1, err2); err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "priority=%d,in_port=%d,dl_src=%s,dl_dst=%s,tcp,nw_src=%s,nw_dst=%s,tp_src=%d,tp_dst=%d,actions=output:%d\n",
			fwd, h1.Index, h1.MAC, h2.MAC, a1, a2, p, sinkPort, h2.Index)
		fmt.Fprintf(&b, "priority=%d,in_port=%d,dl_src=%s,dl_dst=%s,tcp,nw_src=%s,nw_dst=%s,tp_src=%d,tp_dst=%d,actions=output:%d\n",
			rev, h2.Index, h2.MAC, h1.MAC, a2, a1, sinkPort, p, h1.Index)
	}
	return b.String(), nil
}

// barrier sends a BARRIER through the switch's passive listener and waits
// for its reply.
func barrier(ctx context.Context, mgmtAddr string) error {
	nc, err := openflow.Dial(ctx, "tcp:"+mgmtAddr, nil)
	if err != nil {
		return fmt.Errorf("barrier: dial switch %s: %w", mgmtAddr, err)
	}
	c := openflow.NewConn(nc, openflow.ConnConfig{})
	defer c.Close()
	if err := c.Handshake(ctx); err != nil {
		return fmt.Errorf("barrier: handshake with %s: %w", mgmtAddr, err)
	}
	go func() {
		for {
			if _, err := c.ReadMessage(); err != nil {
				return
			}
		}
	}()
	bctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := c.Barrier(bctx); err != nil {
		return fmt.Errorf("barrier: %w", err)
	}
	return nil
}

// bulkCounters are a switch's counters a bulk run reports.
type bulkCounters struct {
	swapIns, evictions, moves, packetIns, queueDrops, modelDrops float64
}

// scrapeBulkCounters reads them; a failed scrape leaves zeros (they are
// informative, not the run's measured results).
func scrapeBulkCounters(ctx context.Context, st *stack) bulkCounters {
	var c bulkCounters
	m, err := testbed.Scrape(ctx, st.swMetrics)
	if err != nil {
		return c
	}
	c.swapIns, _ = m.Value("pseudocong_dataplane_swap_ins_total", nil)
	c.evictions, _ = m.Value("pseudocong_dataplane_evictions_total", nil)
	c.moves, _ = m.Value("pseudocong_tcam_entries_moved_total", nil)
	c.packetIns, _ = m.Value("pseudocong_agent_packet_ins_sent_total", nil)
	c.queueDrops, _ = m.Value("pseudocong_port_egress_dropped_total", map[string]string{"reason": "qdisc"})
	dp, _ := m.Value("pseudocong_dataplane_drops_total", nil)
	ag, _ := m.Value("pseudocong_agent_drops_total", nil)
	c.modelDrops = dp + ag
	return c
}

func (c bulkCounters) sub(o bulkCounters) bulkCounters {
	return bulkCounters{c.swapIns - o.swapIns, c.evictions - o.evictions, c.moves - o.moves, c.packetIns - o.packetIns,
		c.queueDrops - o.queueDrops, c.modelDrops - o.modelDrops}
}

// staticNeighbour makes from's kernel resolve to's address without ARP.
func staticNeighbour(from, to testbed.Host) error {
	out, err := exec.Command("ip", "netns", "exec", from.Netns, "ip", "neigh", "replace", to.Addr.Addr().String(),
		"lladdr", to.MAC, "dev", from.Iface, "nud", "permanent").CombinedOutput()
	if err != nil {
		return fmt.Errorf("static neighbour %s in %s: %v: %s", to.Addr.Addr(), from.Netns, err, out)
	}
	return nil
}
