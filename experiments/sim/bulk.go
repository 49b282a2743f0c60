package sim

import (
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/pseudocong/pseudocong/controller"
	"github.com/pseudocong/pseudocong/netsim"
	"github.com/pseudocong/pseudocong/openflow"
	"github.com/pseudocong/pseudocong/packet"
	"github.com/pseudocong/pseudocong/probes"
	"github.com/pseudocong/pseudocong/softswitch/dataplane"
	"github.com/pseudocong/pseudocong/tcp"
)

// Bulk TCP flows (paper 000 §1.3 and §3.2's claim that data transfer
// collapses): the package tcp endpoint on both probe hosts, a tcp.Mux
// per host between the netsim.Host and its connections, so the frames the
// switch parses are the endpoint's real segments. The run is proactive:
// every flow's two rules (one per direction) are in the switch's backing
// table before the first SYN, with the priority pattern's priorities, and
// are swapped into the TCAM when a packet needs them; with more rules than
// the TCAM holds they are swapped in and out for as long as the run lasts.
// No packet goes to the controller (checkDataPremise holds a bulk run to
// that as it holds a data run).

// Bulk is a run of bulk TCP flows from the client to the server.
const Bulk Kind = "tcp_bulk"

// BulkTCP configures a Bulk run; Scenario.Flows is the number of flows and
// Scenario.Rate the rate at which they start (flows per second).
type BulkTCP struct {
	// Timers is the endpoints' timer profile (tcp.Linux(), tcp.Berkeley()).
	Timers tcp.Profile
	// CC names the congestion-control algorithm; "": newreno.
	CC string
	// Duration is how long the run lasts from the first flow's start; the
	// flows send for ever (iperf-like) until then.
	Duration time.Duration
	// TraceInterval samples every sender's state (cwnd, RTO, ...) this
	// often; 0: 10 ms.
	TraceInterval time.Duration
	// TCAMCapacity, if positive, replaces the profile's TCAM size (a
	// scaled-down cache: the same timings with fewer entries, so that a
	// few dozen flows are more than the TCAM holds).
	TCAMCapacity int
	// Buffer is each endpoint's send and receive buffer; 0: 256 KiB.
	Buffer int
	// SDN holds the SDN-aware options (sdnaware.go).
	SDN SDNOptions
}

// BulkOutcome is what a Bulk run measured.
type BulkOutcome struct {
	Flows  []BulkFlow
	Traces []*tcp.Trace
	// Duration is the measured span (the run's Duration).
	Duration time.Duration
	// CoverRules is the number of wildcard cover rules the run placed
	// in the TCAM (SDNOptions.CoverRules).
	CoverRules int
}

// BulkFlow is one flow's outcome.
type BulkFlow struct {
	// Sender is the client connection's counters (nstat names).
	Sender tcp.Stats
	// Received is the payload bytes the server's application got.
	Received uint64
	// Active is the time from the flow's start to the end of the run.
	Active time.Duration
	// Established tells whether the handshake completed.
	Established bool
	// TimeCwnd1 and ShareCwnd1 are the time (and the share of the traced
	// time) the window spent at one segment (tcp.Trace.TimeAtCwnd).
	TimeCwnd1  time.Duration
	ShareCwnd1 float64
}

// GoodputBps is the flow's goodput in bit/s over its active time.
func (f BulkFlow) GoodputBps() float64 {
	if f.Active <= 0 {
		return 0
	}
	return float64(f.Received) * 8 / f.Active.Seconds()
}

// Bulk flow defaults.
const (
	defaultTraceInterval = 10 * time.Millisecond
	defaultBulkBuffer    = 256 << 10
	// bulkMSS is the endpoints' MSS: a 1 514-byte frame with timestamps.
	bulkMSS = 1448
)

// bulkCheck validates a Bulk scenario and returns it with the TCAM
// override applied to a copy of the profile.
func (sc Scenario) bulkCheck() (Scenario, error) {
	b := sc.TCP
	if b == nil {
		return sc, errors.New("sim: tcp_bulk run without a TCP configuration")
	}
	if b.Duration <= 0 {
		return sc, fmt.Errorf("sim: tcp_bulk duration %v: must be positive", b.Duration)
	}
	if b.TCAMCapacity < 0 || b.TCAMCapacity > 1<<20 {
		return sc, fmt.Errorf("sim: tcp_bulk tcam capacity %d: want 0 (the profile's) to %d", b.TCAMCapacity, 1<<20)
	}
	if b.TCAMCapacity > 0 {
		p := *sc.Profile
		p.TCAM.Capacity = b.TCAMCapacity
		sc.Profile = &p
	}
	return sc, nil
}

// preloadBulk places the flows' rules: per flow both directions in the
// backing table (as preloadData), or, with cover rules, two wildcard rules
// per path switch straight into the TCAM (one per direction, matching on
// the ingress port only) and no per-flow rules at all.
func preloadBulk(n *network, pattern controller.PriorityStrategy, tuples []probes.FiveTuple) (int, error) {
	if !n.sc.TCP.SDN.CoverRules {
		return 0, preloadData(n, pattern, tuples)
	}
	covers := 0
	for _, h := range n.path {
		for _, dir := range [][2]uint16{{h.in, h.out}, {h.out, h.in}} {
			fm := &openflow.FlowMod{
				Header:  openflow.Header{Version: openflow.Version, Type: openflow.TypeFlowMod},
				Match:   openflow.Match{Wildcards: openflow.WildcardAll &^ openflow.WildcardInPort, InPort: dir[0]},
				Command: openflow.FlowModAdd, Priority: coverPriority,
				BufferID: openflow.NoBuffer, OutPort: openflow.PortNone,
				Actions: []openflow.Action{openflow.ActionOutput{Port: dir[1]}},
			}
			if _, err := h.sw.pl.Preload(fm, dataplane.InTCAM); err != nil {
				return covers, fmt.Errorf("sim: switch %s: cover rule: %w", h.sw.name, err)
			}
			covers++
		}
	}
	return covers, nil
}

// coverPriority ranks a cover rule below every per-flow rule of every
// pattern (those start at 1) but above nothing: priority 0 is the lowest,
// so a cover rule never shifts an entry on insert in a highest-first TCAM.
const coverPriority = 0

// bulk sets up the flows: a Mux per host, the server listening on the
// tuples' port, a client connection per tuple started at the rate.
func (n *network) bulk(sc Scenario, tuples []probes.FiveTuple) (func(*Outcome), error) {
	b := sc.TCP
	every := b.TraceInterval
	if every <= 0 {
		every = defaultTraceInterval
	}
	buf := b.Buffer
	if buf <= 0 {
		buf = defaultBulkBuffer
	}
	ch, sh := n.hosts()
	cmux, smux := tcp.NewMux(), tcp.NewMux()
	csend, err := n.tcpHost(ch, cmux)
	if err != nil {
		return nil, err
	}
	ssend, err := n.tcpHost(sh, smux)
	if err != nil {
		return nil, err
	}
	cAddr, sAddr := n.client.Prefix.Addr(), n.server.Prefix.Addr()
	config := func(local, remote uint16, out func(*tcp.Segment), iss uint32) tcp.Config {
		cfg := tcp.DefaultConfig()
		cfg.Clock, cfg.Output = n.clk, out
		cfg.LocalPort, cfg.RemotePort = local, remote
		cfg.Profile = b.Timers
		cfg.MSS, cfg.SndBuf, cfg.RcvBuf = bulkMSS, buf, buf
		cfg.FRTO, cfg.Eifel = false, false
		cfg.Pacing = false
		if b.CC != "" {
			cfg.CC = b.CC
		}
		cfg.ISS, cfg.Seed = iss, sc.Seed^uint64(iss)
		b.SDN.apply(&cfg)
		return cfg
	}
	count := len(tuples)
	clients := make([]*tcp.Conn, count)
	servers := make([]*tcp.Conn, count)
	tracers := make([]*tcp.Tracer, count)
	started := make([]time.Time, count)
	index := make(map[uint16]int, count) // client port -> flow
	for i, t := range tuples {
		index[t.SrcPort] = i
	}
	listening := map[uint16]bool{}
	for _, t := range tuples {
		if listening[t.DstPort] {
			continue
		}
		listening[t.DstPort] = true
		port := t.DstPort
		smux.Listen(port, func(remote uint16) (*tcp.Conn, error) {
			i, ok := index[remote]
			if !ok || servers[i] != nil {
				return nil, fmt.Errorf("no flow from port %d", remote)
			}
			c, err := tcp.New(config(port, remote, ssend(sAddr, cAddr), uint32(splitmix(sc.Seed, uint64(2*i+1)))))
			servers[i] = c
			return c, err
		})
	}
	start := n.clk.Now()
	end := start.Add(b.Duration)
	for i, t := range tuples {
		c, err := tcp.New(config(t.SrcPort, t.DstPort, csend(cAddr, sAddr), uint32(splitmix(sc.Seed, uint64(2*i)))))
		if err != nil {
			return nil, fmt.Errorf("sim: flow %d: %w", i, err)
		}
		clients[i] = c
		cmux.Add(c)
		tcp.Bulk(c)
		at := start.Add(time.Duration(float64(i) * float64(time.Second) / sc.Rate))
		if !at.Before(end) {
			return nil, fmt.Errorf("sim: flow %d starts at %v, after the run's %v", i, at.Sub(start), b.Duration)
		}
		n.clk.At(at, func() {
			started[i] = n.clk.Now()
			tracers[i] = tcp.NewTracer(fmt.Sprintf("flow%d", i), c, every)
			if err := c.Connect(); err != nil {
				n.errs = append(n.errs, fmt.Errorf("flow %d: %w", i, err))
			}
		})
	}
	n.bulkEnd = end
	n.clk.At(end, func() {
		for _, t := range tracers {
			if t != nil {
				t.Stop()
			}
		}
	})
	return func(o *Outcome) {
		bo := &BulkOutcome{Duration: b.Duration, CoverRules: n.covers}
		for i, c := range clients {
			f := BulkFlow{Sender: c.Stats(), Established: c.State() == tcp.Established || servers[i] != nil && c.Stats().BytesAcked > 0}
			if !started[i].IsZero() {
				f.Active = end.Sub(started[i])
			}
			if s := servers[i]; s != nil {
				f.Received = s.Stats().BytesReceived
			}
			if t := tracers[i]; t != nil {
				tr := t.Trace
				f.TimeCwnd1, f.ShareCwnd1 = tr.TimeAtCwnd(1)
				bo.Traces = append(bo.Traces, &tr)
			}
			bo.Flows = append(bo.Flows, f)
		}
		o.TCP = bo
	}, nil
}

// tcpHost attaches mux to every TCP port of h and returns a maker of
// Output funcs: one per connection, from src to dst.
func (n *network) tcpHost(h *netsim.Host, mux *tcp.Mux) (func(src, dst netip.Addr) func(*tcp.Segment), error) {
	var seg tcp.Segment
	ep := netsim.EndpointFunc(func(p *packet.Packet, _ []byte) {
		if err := tcp.FromPacket(p, &seg); err != nil {
			n.errs = append(n.errs, fmt.Errorf("%s: %w", h.Name, err))
			return
		}
		mux.Input(&seg)
	})
	send, err := h.Attach(netsim.Binding{Proto: packet.IPProtocolTCP}, ep)
	if err != nil {
		return nil, err
	}
	var scratch packet.Packet
	return func(src, dst netip.Addr) func(*tcp.Segment) {
		s4, d4 := src.As4(), dst.As4()
		return func(s *tcp.Segment) {
			if err := tcp.ToPacket(s, s4, d4, nil, &scratch); err != nil {
				n.errs = append(n.errs, err)
				return
			}
			if err := send(&scratch); err != nil {
				n.errs = append(n.errs, err)
			}
		}
	}, nil
}

// splitmix derives per-flow initial sequence numbers from the seed.
func splitmix(seed, i uint64) uint64 {
	z := seed + 0x9e3779b97f4a7c15*(i+1)
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}
