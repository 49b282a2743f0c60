package highbdp

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"time"

	"github.com/pseudocong/pseudocong/internal/clock"
	"github.com/pseudocong/pseudocong/netsim"
	"github.com/pseudocong/pseudocong/tcp"
)

// Scenario is one run of paper 002's dumbbell: sources S1..Sn each on
// its own access link to router R1, the bottleneck L from R1 to R2, and
// access links from R2 to sinks D1..Dn; ACKs come back the same way over
// a reverse L of the same rate.
type Scenario struct {
	Bottleneck int64 // bit/s of L
	Access     int64 // bit/s of each access link; 0: 1 Gbit/s
	// AccessDelay and BottleneckDelay are one-way propagation delays;
	// a flow's base RTT is 2·(2·AccessDelay + BottleneckDelay).
	AccessDelay, BottleneckDelay time.Duration
	// BufferPkts is L's DropTail limit in packets (R1's output queue).
	BufferPkts int
	// AccessBufferPkts is every access link's DropTail limit in packets;
	// 0: 10 000, enough never to bind (ns-2's default limit_ is 50:
	// docs/high-bdp.md, "ns-2 side by side").
	AccessBufferPkts int
	Duration         time.Duration
	CC               string // every flow's algorithm (NS2Reno or a cc name)
	MSS              int    // payload bytes; 0: 1460
	// SsthreshBytes is the initial slow-start threshold; 0: the
	// algorithm's own (infinite).
	SsthreshBytes int
	DelAck        bool
	// Modern turns on what current stacks negotiate and ns-2's NewReno
	// lacks: SACK, timestamps and F-RTO (tcp.DefaultConfig's).
	Modern bool
	// InitialCwnd in segments; 0: 2 (ns-2.35's windowInit_).
	InitialCwnd uint32
	// RTORestart restarts a sender's retransmission timer when it
	// retransmits its first unacknowledged segment, as ns-2's agents
	// and Linux do (tcp.RTOConfig.RestartOnRetransmit); off, the timer
	// restarts on new ACKs only (RFC 6298, ns-3), which every result
	// in docs/high-bdp.md was made with.
	RTORestart bool
	// Flows: Long bulk flows for the whole run, Short transfers of
	// ShortBytes[i] each, Web on/off sources.
	Long, Short, Web int
	// ShortBytes are the short flows' sizes; ShortStart their start
	// times as fractions of Duration.
	ShortBytes []int
	ShortStart []float64
	// LongStartSpread: long flows start at uniform random times in
	// [0, LongStartSpread).
	LongStartSpread time.Duration
	// WebMeanBytes and WebThink: the web flows' Pareto object size mean
	// (shape 1.2) and exponential think time.
	WebMeanBytes int
	WebThink     time.Duration
	Seed         uint64
	// TraceEvery samples flow 0 (a long flow) over the whole run, and
	// FineEvery over its first FineFor (Figs. 4–7); UtilEvery samples
	// L's utilisation (Fig. 3). Zero: none of that kind. Each is a
	// bounded series: at most Duration/interval points.
	TraceEvery, FineEvery, UtilEvery time.Duration
	FineFor                          time.Duration
	// Progress, if set, is called every ProgressEvery of simulated time.
	Progress      func(simulated time.Duration, events uint64)
	ProgressEvery time.Duration
	// Ctx, if set, stops the run early (SIGTERM of a Kubernetes pod):
	// the simulation advances in slices of at most a second of virtual
	// time and checks it between them.
	Ctx context.Context
	// ThreadCPU locks the run to its OS thread and reports that thread's
	// CPU time in Outcome.CPUS, not the process's: for runs in parallel
	// (RunShard with Workers > 1). A split run adds its second thread's.
	ThreadCPU bool
	// Split runs the cell on two event loops, cut at L (SplitBottleneck)
	// or at the sources' access links and L (SplitMixed; split.go):
	// faster on two free cores, deterministic, but not the serial run's
	// order of simultaneous events, so its outcomes may differ from the
	// serial run's within the noise, not to the bit. SplitNone: one loop.
	Split string
	// SpareCore, if set, is asked before each window of a split run
	// whether a second core is free; if not, that window runs both sides
	// on this thread, one after the other, with the same results
	// (RunShard: while another cell runs beside this one). Nil: always
	// two threads.
	SpareCore func() bool
}

// RTT is the scenario's base round-trip time.
func (s *Scenario) RTT() time.Duration { return 2 * (2*s.AccessDelay + s.BottleneckDelay) }

// BDPPkts is L's bandwidth-delay product in full packets.
func (s *Scenario) BDPPkts() float64 {
	return float64(s.Bottleneck) * s.RTT().Seconds() / 8 / float64(s.mss()+40)
}

func (s *Scenario) mss() int {
	if s.MSS == 0 {
		return 1460
	}
	return s.MSS
}

// Point is one sample of a long flow.
type Point struct {
	T        float64 `json:"t_s"`
	Cwnd     uint32  `json:"cwnd"`
	Ssthresh uint32  `json:"ssthresh"`
	Sent     uint64  `json:"sent_segs"`  // data segments sent so far
	Acked    uint64  `json:"acked_segs"` // segments cumulatively acknowledged
	SRTTms   float64 `json:"srtt_ms"`
}

// Outcome is a run's measurement.
type Outcome struct {
	Utilisation float64 `json:"utilisation"` // L's delivered payload+headers / capacity·duration
	Goodput     float64 `json:"goodput"`     // all flows' payload bytes received / capacity·duration
	Drops       uint64  `json:"drops"`
	// Oversized counts packets any link refused for its MTU: always 0
	// in a correct model (a segment that does not fit is a bug).
	Oversized uint64 `json:"oversized"`
	// SlowStartEnd is when flow 0 left slow start, seconds after its
	// start; negative if it never did.
	SlowStartEnd float64   `json:"slow_start_end_s"`
	ShortDone    []float64 `json:"short_done_s"` // completion seconds, -1: not done
	WebObjects   int       `json:"web_objects"`
	Events       uint64    `json:"events"`
	WallS        float64   `json:"wall_s"`
	CPUS         float64   `json:"cpu_s"` // process (or, with ThreadCPU, the run's thread's) CPU time over the run
	Trace        []Point   `json:"trace,omitempty"`
	Fine         []Point   `json:"fine,omitempty"`
	Util         []float64 `json:"util_series,omitempty"` // per UtilEvery
	Timeouts     uint64    `json:"timeouts"`
	// Per flow (long, short, web in order): segments retransmitted and
	// RTO expiries.
	FlowRetrans  []uint64 `json:"flow_retrans"`
	FlowTimeouts []uint64 `json:"flow_timeouts"`
	Retrans      uint64   `json:"retrans"`
}

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// pkt is a segment in the network, recycled through a netsim.Pool (the
// hot path allocates nothing once warmed up). It is 128 bytes, two cache
// lines in a slab: what the links read (p and flow) fills the first, the
// segment the rest of it and the second. With a large window every
// descriptor is out of cache when a link delivers it, and each line it
// spans is one more memory access (so the segment is a wireSeg, not a
// whole tcp.Segment).
type pkt struct {
	p    netsim.Packet
	flow int32
	seg  wireSeg
}

func initPkt(p *pkt) { p.p.Meta = p }

type network struct {
	// pools are the senders' side's and the sinks' side's descriptors:
	// one pool twice, unless the cell is split (split.go).
	pools      [2]*netsim.Pool[pkt]
	up, down   []*netsim.Link
	upR, downR []*netsim.Link
	fwd, rev   *netsim.Link
	snd, rcv   []*tcp.Conn
	// in is each side's arriving segment, a whole tcp.Segment for
	// tcp.Conn.Input, which does not keep it. Its MP stays zero. One per
	// side suffices: a delivery is always an event of its own (a link
	// never delivers inside Send), so no Input runs inside another on the
	// same side. The padding keeps each side's a cache line away from the
	// other's and from the fields above, which both sides read for every
	// packet: a split cell writes in on two cores, and a line one core
	// writes moves away from the other's cache each time.
	_  [64]byte
	in [2]struct {
		tcp.Segment
		_ [64]byte
	}
}

// Sides of a cell: the senders' (0) and the sinks' (1).
const (
	sndSide = 0
	rcvSide = 1
)

// dropper is the Drop func of a link on side: the descriptor goes back to
// that side's pool.
func (n *network) dropper(side int) func(*netsim.Packet, netsim.DropReason) {
	pool := n.pools[side]
	return func(p *netsim.Packet, _ netsim.DropReason) { pool.Put(p.Meta.(*pkt)) }
}

func (n *network) inject(side int, l *netsim.Link, flow int, s *tcp.Segment) {
	if s.MP.Kind != 0 {
		panic("highbdp: a segment with an MPTCP option: this scenario has no MPTCP, and its descriptors do not carry one")
	}
	p := n.pools[side].Get()
	p.seg.put(s)
	p.flow = int32(flow)
	p.p.Len = s.WireLen()
	l.Send(&p.p)
}

// deliver hands np's segment to c. The descriptor goes back to the pool
// first, so a segment c sends in reply reuses it while it is in cache.
func (n *network) deliver(side int, c *tcp.Conn, np *netsim.Packet) {
	p := np.Meta.(*pkt)
	in := &n.in[side].Segment
	p.seg.get(in)
	n.pools[side].Put(p)
	c.Input(in)
}

func (s *Scenario) check() error {
	switch {
	case s.Bottleneck <= 0:
		return fmt.Errorf("highbdp: bottleneck %d bit/s: want > 0", s.Bottleneck)
	case s.AccessBufferPkts < 0:
		return fmt.Errorf("highbdp: access buffer %d packets: want >= 1 (0: 10 000)", s.AccessBufferPkts)
	case s.BufferPkts < 1:
		return fmt.Errorf("highbdp: buffer %d packets: want >= 1", s.BufferPkts)
	case s.Duration <= 0:
		return fmt.Errorf("highbdp: duration %v: want > 0", s.Duration)
	case s.Long+s.Short+s.Web < 1:
		return fmt.Errorf("highbdp: no flows")
	case len(s.ShortBytes) < s.Short || len(s.ShortStart) < s.Short:
		return fmt.Errorf("highbdp: %d short flows but %d sizes and %d starts", s.Short, len(s.ShortBytes), len(s.ShortStart))
	case s.RTT() <= 0:
		return fmt.Errorf("highbdp: rtt %v: want > 0", s.RTT())
	case !knownSplit(s.Split):
		return fmt.Errorf("highbdp: split %q: want %q, %q or none", s.Split, SplitBottleneck, SplitMixed)
	case s.Split != SplitNone && s.BottleneckDelay <= 0, s.Split == SplitMixed && s.AccessDelay <= 0:
		return fmt.Errorf("highbdp: split %s across a link of no delay: the two sides need a lookahead", s.Split)
	}
	return nil
}

// rng is the scenario's random source: the long flows' starts, then the
// web flows'.
func (s Scenario) rng() *rand.Rand {
	return rand.New(rand.NewPCG(s.Seed, 0x68696768626470)) // "highbdp"
}

// LongStarts is when each long flow starts, from the run's start: flow 0
// at 0, the others at uniform times in [0, LongStartSpread) drawn from
// the seed. Run uses exactly these (the ns-3 side by side hands them to
// validation/ns3/highbdp.cc, so both simulators run the same instance).
func (s Scenario) LongStarts() []time.Duration { return s.longStarts(s.rng()) }

func (s Scenario) longStarts(rng *rand.Rand) []time.Duration {
	starts := make([]time.Duration, s.Long)
	for i := range starts {
		if s.LongStartSpread > 0 {
			starts[i] = time.Duration(rng.Int64N(int64(s.LongStartSpread)))
		}
		if i == 0 {
			starts[i] = 0 // the traced long flow starts the run, as in the paper's figures
		}
	}
	return starts
}

// setDefaults fills the zero fields that have a default: the access
// rate (1 Gbit/s), the initial window (2) and the access buffers (10 000
// packets).
func (s *Scenario) setDefaults() {
	if s.Access == 0 {
		s.Access = 1_000_000_000
	}
	if s.InitialCwnd == 0 {
		s.InitialCwnd = 2
	}
	if s.AccessBufferPkts == 0 {
		s.AccessBufferPkts = 10000
	}
}

// Run runs the scenario on a fresh virtual clock.
func (s Scenario) Run() (*Outcome, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	s.setDefaults()
	mss := s.mss()
	cpu := cpuTime
	if s.ThreadCPU {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		cpu = threadCPUTime
	}
	wall, cpu0 := time.Now(), cpu()
	lim := clock.DefaultLimits()
	lim.MaxEvents = 0 // a bulk run never comes to rest
	newSim := func() *clock.Sim {
		sim := clock.NewSim(epoch)
		sim.SetLimits(lim)
		return sim
	}
	// sims are the senders' side's and the sinks' side's clock: one
	// clock twice, unless the cell is split (split.go).
	sim := newSim()
	sims := [2]*clock.Sim{sim, sim}
	pool := &netsim.Pool[pkt]{Init: initPkt}
	n := &network{pools: [2]*netsim.Pool[pkt]{pool, pool}}
	var h *halves
	if s.Split != SplitNone {
		sims[rcvSide] = newSim()
		n.pools[rcvSide] = &netsim.Pool[pkt]{Init: initPkt}
		h = &halves{sims: sims, pools: n.pools, spare: s.SpareCore}
	}
	// Room for the options: timestamps (12) and SACK blocks on ACKs
	// (at most 4 blocks, 36 B with the kind/length and padding).
	mtu := mss + 40 + 12 + 36
	// Each link's side, and whether it is cut (its far end on the other
	// side): by kind, fwd, rev, up, down, upR, downR (split.go).
	const (
		kFwd = iota
		kRev
		kUp
		kDown
		kUpR
		kDownR
	)
	side := [6]int{sndSide, rcvSide, sndSide, rcvSide, rcvSide, sndSide}
	var cut [6]bool
	switch s.Split {
	case SplitBottleneck:
		cut[kFwd], cut[kRev] = true, true
	case SplitMixed:
		side[kFwd] = rcvSide
		cut[kUp], cut[kRev] = true, true
	}
	// fwdEnd is L's far end when L is cut.
	var fwdEnd *inbound
	mk := func(kind int, rate int64, delay time.Duration, limit int, deliver func(*netsim.Packet)) (*netsim.Link, error) {
		q, err := netsim.NewDropTail(limit, 0)
		if err != nil {
			return nil, err
		}
		c := netsim.LinkConfig{Rate: rate, Delay: delay, MTU: mtu, Qdisc: q, Deliver: deliver, Drop: n.dropper(side[kind])}
		if cut[kind] {
			var end *inbound
			end, c.Handoff = h.cut(side[kind], deliver)
			c.Deliver = nil
			if kind == kFwd {
				fwdEnd = end
			}
		}
		return netsim.NewLink(sims[side[kind]], c)
	}
	var err error
	if n.fwd, err = mk(kFwd, s.Bottleneck, s.BottleneckDelay, s.BufferPkts, func(p *netsim.Packet) { n.down[p.Meta.(*pkt).flow].Send(p) }); err != nil {
		return nil, err
	}
	// The reverse path carries only ACKs; its queue never binds.
	if n.rev, err = mk(kRev, s.Bottleneck, s.BottleneckDelay, 1<<20, func(p *netsim.Packet) { n.downR[p.Meta.(*pkt).flow].Send(p) }); err != nil {
		return nil, err
	}
	// Endpoint buffers: twice L's BDP (ns-2's window_ raised out of the
	// way, as the paper must have: the receive window never binds).
	buf := max(4<<20, int(2*s.BDPPkts())*(mss+40))
	buf = min(buf, 1<<30)
	ss := uint32(0)
	if s.SsthreshBytes > 0 {
		ss = uint32(max(s.SsthreshBytes/mss, 2))
	}
	rng := s.rng()
	longStarts := s.longStarts(rng)
	out := &Outcome{SlowStartEnd: -1}
	total := s.Long + s.Short + s.Web
	starts := make([]time.Duration, total)
	var webRecs []*[]tcp.ObjectRecord
	for i := range total {
		flow := i
		var start time.Duration
		switch {
		case i < s.Long:
			start = longStarts[i]
		case i < s.Long+s.Short:
			start = time.Duration(s.ShortStart[i-s.Long] * float64(s.Duration))
		default:
			start = time.Duration(rng.Int64N(int64(max(s.Duration/10, time.Millisecond))))
		}
		starts[i] = start
		var onSS func(time.Time)
		if i == 0 {
			onSS = func(t time.Time) { out.SlowStartEnd = t.Sub(epoch.Add(starts[0])).Seconds() }
		}
		alg, err := newAlgorithm(s.CC, ss, onSS)
		if err != nil {
			return nil, fmt.Errorf("highbdp: %w", err)
		}
		tc := tcp.DefaultConfig()
		tc.Clock = sims[sndSide]
		tc.Profile = ns2Profile(s.DelAck, s.InitialCwnd)
		tc.Profile.RTO.RestartOnRetransmit = s.RTORestart
		// ns-2's Agent/TCP/Newreno: no SACK, no timestamps, no F-RTO.
		tc.SACK, tc.Timestamps, tc.FRTO = s.Modern, s.Modern, s.Modern
		tc.Recovery = recoveryFor(s.CC)
		tc.MSS = mss
		if s.Modern {
			tc.MSS += 12 // the timestamp option: keep 1460 B of payload
		}
		tc.SndBuf, tc.RcvBuf = buf, buf
		tc.CC = s.CC
		tc.Algorithm = alg
		tc.Seed = s.Seed*1000 + uint64(i)
		tc.LocalPort, tc.RemotePort = uint16(10000+i), 5001
		rc := tc
		rc.Clock = sims[rcvSide]
		rc.Algorithm = nil
		rc.CC = "newreno" // the sink sends no data
		rc.LocalPort, rc.RemotePort = tc.RemotePort, tc.LocalPort
		rc.ISS = uint32(s.Seed*7919 + uint64(i)*104729)
		tc.ISS = rc.ISS ^ 0x5a5a5a5a
		tc.Output = func(sg *tcp.Segment) { n.inject(sndSide, n.up[flow], flow, sg) }
		rc.Output = func(sg *tcp.Segment) { n.inject(rcvSide, n.upR[flow], flow, sg) }
		snd, err := tcp.New(tc)
		if err != nil {
			return nil, err
		}
		rcv, err := tcp.New(rc)
		if err != nil {
			return nil, err
		}
		n.snd, n.rcv = append(n.snd, snd), append(n.rcv, rcv)
		links := make([]*netsim.Link, 4)
		for j, d := range []func(*netsim.Packet){
			func(p *netsim.Packet) { n.fwd.Send(p) },
			func(p *netsim.Packet) { n.deliver(rcvSide, n.rcv[flow], p) },
			func(p *netsim.Packet) { n.rev.Send(p) },
			func(p *netsim.Packet) { n.deliver(sndSide, n.snd[flow], p) },
		} {
			if links[j], err = mk([]int{kUp, kDown, kUpR, kDownR}[j], s.Access, s.AccessDelay, s.AccessBufferPkts, d); err != nil {
				return nil, err
			}
		}
		n.up, n.down, n.upR, n.downR = append(n.up, links[0]), append(n.down, links[1]), append(n.upR, links[2]), append(n.downR, links[3])
		if err := rcv.Listen(); err != nil {
			return nil, err
		}
		switch {
		case i < s.Long:
			tcp.Bulk(snd)
		case i < s.Long+s.Short:
			k := i - s.Long
			out.ShortDone = append(out.ShortDone, -1)
			tcp.Transfer(snd, s.ShortBytes[k], func(at time.Time) {
				out.ShortDone[k] = at.Sub(epoch).Seconds()
			})
		default:
			webRecs = append(webRecs, tcp.OnOff(snd, tcp.OnOffConfig{
				Size:  tcp.Pareto{Xm: float64(s.WebMeanBytes) * 0.2 / 1.2, Alpha: 1.2, Max: float64(s.WebMeanBytes) * 100},
				Think: tcp.Exponential{Mean: s.WebThink.Seconds()},
				Seed:  s.Seed*31 + uint64(i),
			}))
		}
		sim.AfterFunc(start, func() { _ = snd.Connect() })
	}
	// Samplers: each a bounded series (Duration / interval points).
	sample := func(c *tcp.Conn, t0 time.Time) Point {
		in := c.Info()
		st := c.Stats()
		return Point{T: sim.Now().Sub(t0).Seconds(), Cwnd: in.Cwnd, Ssthresh: in.Ssthresh,
			Sent: st.OutSegs, Acked: st.BytesAcked / uint64(mss), SRTTms: float64(in.SRTT) / 1e6}
	}
	every(sim, s.TraceEvery, s.Duration, func() { out.Trace = append(out.Trace, sample(n.snd[0], epoch)) })
	every(sim, s.FineEvery, min(s.FineFor, s.Duration), func() { out.Fine = append(out.Fine, sample(n.snd[0], epoch)) })
	// L's delivered bytes, counted where it delivers: on the sinks' side.
	fwdDelivered := func() uint64 { return n.fwd.Stats().DeliveredBytes }
	if fwdEnd != nil {
		fwdDelivered = func() uint64 { return fwdEnd.deliveredBytes }
	}
	var lastBytes uint64
	rsim := sims[rcvSide]
	every(rsim, s.UtilEvery, s.Duration, func() {
		b := fwdDelivered()
		if rsim.Elapsed() > 0 {
			out.Util = append(out.Util, float64(b-lastBytes)*8/(float64(s.Bottleneck)*s.UtilEvery.Seconds()))
		}
		lastBytes = b
	})
	stopped := func(at time.Duration) error {
		if s.Ctx != nil && s.Ctx.Err() != nil {
			return fmt.Errorf("highbdp: stopped at %v of %v simulated: %w", at, s.Duration, context.Cause(s.Ctx))
		}
		return nil
	}
	var rcvCPU time.Duration
	if h == nil {
		if s.Progress != nil && s.ProgressEvery > 0 {
			every(sim, s.ProgressEvery, s.Duration, func() { s.Progress(sim.Elapsed(), sim.Fired()) })
		}
		for at := time.Duration(0); at < s.Duration; {
			at = min(at+time.Second, s.Duration)
			if err := sim.TryRunUntil(epoch.Add(at)); err != nil {
				return nil, fmt.Errorf("highbdp: %w", err)
			}
			if err := stopped(at); err != nil {
				return nil, err
			}
		}
	} else {
		// Progress between windows, where both sides stand still.
		var next time.Duration
		between := func(at time.Duration) error {
			if s.Progress != nil && s.ProgressEvery > 0 && at >= next {
				s.Progress(at, h.sims[sndSide].Fired()+h.sims[rcvSide].Fired())
				next = (at/s.ProgressEvery + 1) * s.ProgressEvery
			}
			return stopped(at)
		}
		w := s.BottleneckDelay
		if s.Split != SplitBottleneck {
			w = min(w, s.AccessDelay)
		}
		if rcvCPU, err = h.run(s.Duration, w, between); err != nil {
			return nil, fmt.Errorf("highbdp: %w", err)
		}
	}
	var rx uint64
	for i := range n.rcv {
		rx += n.rcv[i].Stats().BytesReceived
		st := n.snd[i].Stats()
		out.Timeouts += st.TCPTimeouts
		out.Retrans += st.RetransSegs
		out.FlowRetrans = append(out.FlowRetrans, st.RetransSegs)
		out.FlowTimeouts = append(out.FlowTimeouts, st.TCPTimeouts)
	}
	capBytes := float64(s.Bottleneck) / 8 * s.Duration.Seconds()
	out.Utilisation = float64(fwdDelivered()) / capBytes
	out.Goodput = float64(rx) / capBytes
	out.Drops = n.fwd.Stats().QdiscDropped
	for _, ls := range [][]*netsim.Link{{n.fwd, n.rev}, n.up, n.down, n.upR, n.downR} {
		for _, l := range ls {
			out.Oversized += l.Stats().Oversized
		}
	}
	for _, r := range webRecs {
		out.WebObjects += len(*r)
	}
	out.Events = sim.Fired()
	if h != nil {
		out.Events += h.sims[rcvSide].Fired()
	}
	out.WallS = time.Since(wall).Seconds()
	out.CPUS = (cpu() - cpu0).Seconds()
	if s.ThreadCPU { // the sinks' side ran on a thread of its own
		out.CPUS += rcvCPU.Seconds()
	}
	return out, nil
}

// every calls f at 0, d, 2d, ... up to end (d <= 0: never).
func every(sim *clock.Sim, d, end time.Duration, f func()) {
	if d <= 0 {
		return
	}
	var tick func()
	tick = func() {
		f()
		if sim.Elapsed()+d <= end {
			sim.AfterFunc(d, tick)
		}
	}
	sim.AfterFunc(0, tick)
}

// ns2Profile is ns-2's TCP timers as far as they matter here: delayed
// ACK every 2 segments or after 100 ms (Agent/TCPSink/DelAck interval_),
// no quick-ACK start, a 200 ms minimum RTO (ns-2.35's minrto_ 0.2), the
// initial window in segments; a connection never gives up.
func ns2Profile(delack bool, iw uint32) tcp.Profile {
	p := tcp.NS3() // 1 s initial RTO, 200 ms minimum, 200 ms delayed-ACK timer
	p.Name = "ns2"
	p.DelAckTimeout = 100 * time.Millisecond
	p.QuickAcks = 0
	p.InitialCwnd = iw
	p.RTO.Min = 200 * time.Millisecond
	p.RTO.Retries = 1 << 20 // ns-2 never gives up
	p.DelAckCount = 2
	if !delack {
		p.DelAckCount = 1
	}
	return p
}
