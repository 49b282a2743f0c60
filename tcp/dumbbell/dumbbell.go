// Package dumbbell runs N TCP flows through one bottleneck on the
// virtual clock: N senders, each on its own access link to a router, one
// bottleneck link (a netsim.Link with a qdisc from netsim.ParseQdisc) to a
// second router, and access links to N receivers; the ACKs come back the
// same way through a reverse bottleneck of the same rate.
//
// The routers forward by flow (each segment's descriptor knows its
// flow), which is all a dumbbell needs; when netsim grows hosts with a
// demux, the endpoints attach there instead (an endpoint only needs an
// output func and Input).
//
// Delays: each access link has RTT/8 of propagation and the bottleneck
// RTT/4, each way, so a flow's base round-trip time is RTT (plus
// serialisation).
package dumbbell

import (
	"fmt"
	"strings"
	"time"

	"github.com/pseudocong/pseudocong/internal/clock"
	"github.com/pseudocong/pseudocong/netsim"
	"github.com/pseudocong/pseudocong/tcp"
	"github.com/pseudocong/pseudocong/tcp/cc"
)

// Config is one dumbbell run.
type Config struct {
	Flows      int
	CC         []string // assigned to flows round-robin
	Bottleneck int64    // bit/s
	RTT        time.Duration
	Queue      int    // bottleneck queue, packets
	Qdisc      string // "droptail", "red", "red,ecn", or a full netsim spec with limit=
	Access     int64  // bit/s; 0: 1 Gbit/s
	Duration   time.Duration
	Segment    int  // payload bytes of a full segment; 0: 1448
	DelAck     bool // delayed ACKs on (the profile's); off: ACK every segment
	ECN        bool
	Seed       uint64
	// Profile is the endpoints' timer profile; zero: tcp.Linux().
	Profile tcp.Profile
	// NoSACK, NoTimestamps and NoFRTO turn off what tcp.DefaultConfig
	// turns on (ns-3 has no F-RTO, for instance).
	NoSACK, NoTimestamps, NoFRTO bool
	// CountACKs is tcp.Config.CountACKs (ns-3's per-ACK window growth).
	CountACKs bool
	// NS3Semantics runs each algorithm as ns-3 3.37 implements it where
	// ns-3's differs from Linux's by design, for comparisons with ns-3:
	// newreno and vegas count ACKs (CountACKs, TcpNewReno's per-ACK
	// growth), cubic has no Reno-friendly region and ns-3's HyStart
	// (cc.CubicParams), vegas ns-3's diff and thresholds (cc.VegasParams).
	// BBR and the others are unchanged: ns-3's grow as Linux's do.
	NS3Semantics bool
	// Buffer is each endpoint's send and receive buffer in bytes; 0: 4 MiB.
	Buffer int
	// StartGap is the time between flow starts; 0: 100 ms.
	StartGap time.Duration
	// TraceEvery, if > 0, samples every flow's state that often.
	TraceEvery time.Duration
}

// FlowResult is one flow's outcome.
type FlowResult struct {
	CC          string    `json:"cc"`
	GoodputMbps float64   `json:"goodput_mbps"`
	Retransmits uint64    `json:"retransmits"`
	Timeouts    uint64    `json:"timeouts"`
	Stats       tcp.Stats `json:"-"`
}

// Result is a run's outcome.
type Result struct {
	Flows       []FlowResult `json:"flows"`
	Utilisation float64      `json:"utilisation"`
	Jain        float64      `json:"jain"`
	Events      uint64       `json:"events"`
	WallS       float64      `json:"wall_s"`
	// Bottleneck counters.
	BottleneckDrops uint64       `json:"-"`
	Traces          []*tcp.Trace `json:"-"`
}

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func (c *Config) defaults() error {
	if c.Access == 0 {
		c.Access = 1_000_000_000
	}
	if c.Segment == 0 {
		c.Segment = 1448
	}
	if c.Buffer == 0 {
		c.Buffer = 4 << 20
	}
	if c.StartGap == 0 {
		c.StartGap = 100 * time.Millisecond
	}
	if c.Profile.Name == "" {
		c.Profile = tcp.Linux()
	}
	if c.Qdisc == "" {
		c.Qdisc = "droptail"
	}
	if len(c.CC) == 0 {
		c.CC = []string{"newreno"}
	}
	switch {
	case c.Flows < 1:
		return fmt.Errorf("dumbbell: %d flows: want at least 1", c.Flows)
	case c.Bottleneck <= 0 || c.Access <= 0:
		return fmt.Errorf("dumbbell: rates must be positive")
	case c.RTT <= 0:
		return fmt.Errorf("dumbbell: rtt %v: want > 0", c.RTT)
	case c.Queue < 1:
		return fmt.Errorf("dumbbell: queue %d packets: want at least 1", c.Queue)
	case c.Duration <= 0:
		return fmt.Errorf("dumbbell: duration %v: want > 0", c.Duration)
	case c.Segment < 1 || c.Segment > 9000:
		return fmt.Errorf("dumbbell: segment %d bytes: want 1..9000", c.Segment)
	}
	for _, n := range c.CC {
		if _, err := cc.New(n); err != nil {
			return fmt.Errorf("dumbbell: %w", err)
		}
	}
	return nil
}

// wireMTU is the largest datagram a flow sends: a full segment with
// header and options.
func (c *Config) wireMTU() int {
	return c.Segment + 20 + 20 + 12 + 20 // 12 for timestamps, 20 spare for SACK blocks
}

// QdiscSpec turns the --qdisc value and the queue length into a netsim
// spec: a bare "droptail" gets limit=Queue packets; "red" (with any
// flags, such as ecn) gets limit = Queue full packets, min/max at a
// quarter and three quarters of it, avpkt a full packet, bandwidth the
// bottleneck's, probability 0.1, unless the spec gives them.
func (c *Config) QdiscSpec() string {
	parts := strings.Split(c.Qdisc, ",")
	kind := strings.ToLower(strings.TrimSpace(parts[0]))
	have := map[string]bool{}
	for _, p := range parts[1:] {
		k, _, _ := strings.Cut(strings.TrimSpace(p), "=")
		have[strings.ToLower(k)] = true
	}
	add := func(k, v string) {
		if !have[k] {
			parts = append(parts, k+"="+v)
		}
	}
	pkt := c.Segment + 52
	switch kind {
	case "droptail", "pfifo":
		add("limit", fmt.Sprint(c.Queue))
	case "red":
		add("limit", fmt.Sprint(c.Queue*pkt))
		add("min", fmt.Sprint(max(c.Queue*pkt/4, pkt)))
		add("max", fmt.Sprint(max(c.Queue*pkt*3/4, 2*pkt)))
		add("avpkt", fmt.Sprint(pkt))
		add("bandwidth", fmt.Sprintf("%dbit", c.Bottleneck))
		add("probability", "0.1")
		add("seed", fmt.Sprint(c.Seed+1))
	}
	return strings.Join(parts, ",")
}

// QdiscSpecWithDefaults is QdiscSpec after filling the defaults Run
// fills (for callers that check a spec before running).
func (c Config) QdiscSpecWithDefaults() string {
	if err := c.defaults(); err != nil {
		return c.Qdisc
	}
	return c.QdiscSpec()
}

// pkt is a segment in the network: the link's descriptor and the segment
// it carries, recycled through a netsim.Pool.
type pkt struct {
	p    netsim.Packet
	seg  tcp.Segment
	flow int
}

func initPkt(p *pkt) { p.p.Meta = p }

type net struct {
	sim        *clock.Sim
	pool       netsim.Pool[pkt]
	up, down   []*netsim.Link // access: sender→router, router→receiver
	upR, downR []*netsim.Link // access back: receiver→router, router→sender
	fwd, rev   *netsim.Link   // bottleneck both ways
	snd, rcv   []*tcp.Conn
}

func (n *net) get() *pkt { return n.pool.Get() }

func (n *net) put(p *netsim.Packet, _ netsim.DropReason) { n.release(p.Meta.(*pkt)) }

func (n *net) release(p *pkt) { n.pool.Put(p) }

// Run runs one dumbbell.
func Run(cfg Config) (*Result, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	wall := time.Now()
	sim := clock.NewSim(epoch)
	// A bulk run never comes to rest: lift the event budget meant for
	// runaway models, keep the horizon and the same-instant guard.
	lim := clock.DefaultLimits()
	lim.MaxEvents = 0
	sim.SetLimits(lim)
	n := &net{sim: sim, pool: netsim.Pool[pkt]{Init: initPkt}}
	access := cfg.RTT / 8
	bneck := cfg.RTT/2 - 2*access
	mtu := cfg.wireMTU()
	mk := func(rate int64, delay time.Duration, q netsim.Qdisc, deliver func(*netsim.Packet)) (*netsim.Link, error) {
		if q == nil {
			var err error
			if q, err = netsim.NewDropTail(10000, 0); err != nil {
				return nil, err
			}
		}
		return netsim.NewLink(sim, netsim.LinkConfig{Rate: rate, Delay: delay, MTU: mtu, Qdisc: q, Deliver: deliver, Drop: n.put})
	}
	spec := cfg.QdiscSpec()
	q, err := netsim.ParseQdisc(spec)
	if err != nil {
		return nil, fmt.Errorf("dumbbell: bottleneck: %w", err)
	}
	if n.fwd, err = mk(cfg.Bottleneck, bneck, q, func(p *netsim.Packet) { n.down[p.Meta.(*pkt).flow].Send(p) }); err != nil {
		return nil, err
	}
	rq, err := netsim.NewDropTail(max(cfg.Queue, 1000), 0)
	if err != nil {
		return nil, err
	}
	if n.rev, err = mk(cfg.Bottleneck, bneck, rq, func(p *netsim.Packet) { n.downR[p.Meta.(*pkt).flow].Send(p) }); err != nil {
		return nil, err
	}
	res := &Result{}
	tracers := make([]*tcp.Tracer, 0, cfg.Flows)
	for i := range cfg.Flows {
		algo := cfg.CC[i%len(cfg.CC)]
		tc := tcp.DefaultConfig()
		tc.Clock = sim
		tc.Profile = cfg.Profile
		if !cfg.DelAck {
			tc.Profile.DelAckCount = 1
		}
		tc.SACK, tc.Timestamps, tc.FRTO = !cfg.NoSACK, !cfg.NoTimestamps, !cfg.NoFRTO
		tc.CountACKs = cfg.CountACKs
		if cfg.NS3Semantics {
			tc.Algorithm = ns3Algorithm(algo)
			tc.CountACKs = tc.CountACKs || algo == "newreno" || algo == "vegas"
		}
		tc.MSS = cfg.Segment
		if tc.Timestamps {
			tc.MSS += 12
		}
		tc.SndBuf, tc.RcvBuf = cfg.Buffer, cfg.Buffer
		tc.ECN = cfg.ECN
		tc.CC = algo
		tc.Seed = cfg.Seed*1000 + uint64(i)
		tc.LocalPort, tc.RemotePort = uint16(10000+i), 5001
		rc := tc
		rc.LocalPort, rc.RemotePort = tc.RemotePort, tc.LocalPort
		rc.ISS = uint32(cfg.Seed*7919 + uint64(i)*104729)
		tc.ISS = rc.ISS ^ 0x5a5a5a5a
		flow := i
		tc.Output = func(s *tcp.Segment) { n.inject(n.up[flow], flow, s) }
		rc.Output = func(s *tcp.Segment) { n.inject(n.upR[flow], flow, s) }
		snd, err := tcp.New(tc)
		if err != nil {
			return nil, err
		}
		rcv, err := tcp.New(rc)
		if err != nil {
			return nil, err
		}
		n.snd, n.rcv = append(n.snd, snd), append(n.rcv, rcv)
		up, err := mk(cfg.Access, access, nil, func(p *netsim.Packet) { n.fwd.Send(p) })
		if err != nil {
			return nil, err
		}
		down, err := mk(cfg.Access, access, nil, func(p *netsim.Packet) { n.deliver(n.rcv[flow], p) })
		if err != nil {
			return nil, err
		}
		upR, err := mk(cfg.Access, access, nil, func(p *netsim.Packet) { n.rev.Send(p) })
		if err != nil {
			return nil, err
		}
		downR, err := mk(cfg.Access, access, nil, func(p *netsim.Packet) { n.deliver(n.snd[flow], p) })
		if err != nil {
			return nil, err
		}
		n.up, n.down, n.upR, n.downR = append(n.up, up), append(n.down, down), append(n.upR, upR), append(n.downR, downR)
		if err := rcv.Listen(); err != nil {
			return nil, err
		}
		tcp.Bulk(snd)
		res.Flows = append(res.Flows, FlowResult{CC: algo})
		start := time.Duration(i) * cfg.StartGap
		sim.AfterFunc(start, func() {
			if cfg.TraceEvery > 0 {
				tracers = append(tracers, tcp.NewTracer(fmt.Sprintf("flow%d-%s", flow, algo), snd, cfg.TraceEvery))
			}
			_ = snd.Connect()
		})
	}
	end := epoch.Add(cfg.Duration)
	if err := sim.TryRunUntil(end); err != nil {
		return nil, fmt.Errorf("dumbbell: %w", err)
	}
	var rates []float64
	var total float64
	for i := range res.Flows {
		active := cfg.Duration - time.Duration(i)*cfg.StartGap
		st := n.snd[i].Stats()
		rst := n.rcv[i].Stats()
		g := 0.0
		if active > 0 {
			g = float64(rst.BytesReceived) * 8 / active.Seconds() / 1e6
		}
		res.Flows[i].GoodputMbps = g
		res.Flows[i].Retransmits = st.RetransSegs
		res.Flows[i].Timeouts = st.TCPTimeouts
		res.Flows[i].Stats = st
		rates = append(rates, g)
		total += float64(rst.BytesReceived) * 8
	}
	res.Utilisation = total / (float64(cfg.Bottleneck) * cfg.Duration.Seconds())
	res.Jain = Jain(rates)
	res.Events = sim.Fired()
	res.WallS = time.Since(wall).Seconds()
	res.BottleneckDrops = n.fwd.Stats().QdiscDropped
	for _, t := range tracers {
		t.Stop()
		tr := t.Trace
		res.Traces = append(res.Traces, &tr)
	}
	return res, nil
}

func (n *net) inject(l *netsim.Link, flow int, s *tcp.Segment) {
	p := n.get()
	p.seg = *s
	p.flow = flow
	p.p.Len = s.WireLen()
	p.p.ECN = netsim.ECN(s.ECN)
	l.Send(&p.p)
}

func (n *net) deliver(c *tcp.Conn, np *netsim.Packet) {
	p := np.Meta.(*pkt)
	p.seg.ECN = tcp.ECN(np.ECN)
	c.Input(&p.seg)
	n.release(p)
}

// Jain is Jain's fairness index (Σx)² / (n·Σx²); 1 for one flow or all
// equal, 0 for no throughput at all.
func Jain(x []float64) float64 {
	var s, s2 float64
	for _, v := range x {
		s += v
		s2 += v * v
	}
	if s2 == 0 {
		return 0
	}
	return s * s / (float64(len(x)) * s2)
}

// ns3Algorithm is Config.NS3Semantics' instance of algo, or nil where
// ours already computes as ns-3's does.
func ns3Algorithm(algo string) cc.Algorithm {
	switch algo {
	case "cubic":
		return &cc.Cubic{Params: cc.CubicParams{NoRenoFriendly: true, NS3HyStart: true}}
	case "vegas":
		return &cc.Vegas{Params: cc.VegasParams{NS3: true}}
	}
	return nil
}
