package vccgrid

import (
	"fmt"
	"time"

	"github.com/pseudocong/pseudocong/internal/clock"
	"github.com/pseudocong/pseudocong/netsim"
	"github.com/pseudocong/pseudocong/packet"
	"github.com/pseudocong/pseudocong/softswitch/vcc"
	"github.com/pseudocong/pseudocong/tcp"
	"github.com/pseudocong/pseudocong/tcp/dumbbell"
)

// FlowConfig is one sender.
type FlowConfig struct {
	CC     string // the sender's congestion control
	ECN    bool   // the sender negotiates ECN itself (tcp_ecn=1)
	Access int64  // the sender's access link, bit/s
}

// RunConfig is one dumbbell run: every sender to one receiver host
// through a bottleneck with Qdisc (a netsim spec, e.g. RED with ecn).
type RunConfig struct {
	Flows      []FlowConfig
	Bottleneck int64 // bit/s
	RTT        time.Duration
	Qdisc      string
	// VCC puts a vcc.Translator at the tenant edge of every sender (the
	// ECN senders' flows pass it untouched, as live).
	VCC      bool
	React    vcc.React
	Duration time.Duration
	Warmup   time.Duration // throughput is measured from Warmup to Duration
	Seed     uint64
	// Verify decodes every frame the translator rewrote and checks its
	// IPv4 and TCP checksums (counted in RunResult.BadChecksums).
	Verify bool
}

// FlowResult is one sender's outcome.
type FlowResult struct {
	FlowConfig
	Mbps        float64 // goodput from Warmup to Duration
	Retransmits uint64
	Timeouts    uint64
	// ECNReductions are the sender's own window cuts on ECE; CE the data
	// segments that reached the receiver CE-marked (whole run).
	ECNReductions, CE uint64
}

// RunResult is one run.
type RunResult struct {
	Flows []FlowResult
	// Rewritten counts frames the translator changed; BadChecksums those
	// of them whose checksums did not verify (Verify only).
	Rewritten, BadChecksums uint64
	VCC                     vcc.Stats
	Events                  uint64
}

const segment = 1448

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// pkt is a segment in flight with its link descriptor.
type pkt struct {
	p    netsim.Packet
	seg  tcp.Segment
	flow int
}

// edge is the tenant-facing side of the virtual switch for one run: it
// turns a sender's segments into frames, lets the translator rewrite
// them, and turns them back. The frames are real (Ethernet, IPv4, TCP with
// checksums), so the translator runs exactly as on a live port.
type edge struct {
	tr      *vcc.Translator
	verify  bool
	buf     []byte
	orig    []byte
	pk, chk packet.Packet
	res     *RunResult
}

var (
	tenantMAC = packet.MAC{2, 0, 0, 0, 0, 1}
	fabricMAC = packet.MAC{2, 0, 0, 0, 0, 2}
	rcvIP     = [4]byte{10, 0, 1, 1}
)

func senderIP(i int) [4]byte { return [4]byte{10, 0, byte(i >> 8), byte(i + 1)} }

// pass runs s through the translator (fromTenant: the tenant sent it).
func (e *edge) pass(s *tcp.Segment, src, dst [4]byte, fromTenant bool) error {
	if err := tcp.ToPacket(s, src, dst, nil, &e.pk); err != nil {
		return err
	}
	e.pk.Layers |= packet.LayerEthernet
	e.pk.Ethernet = packet.Ethernet{Src: tenantMAC, Dst: fabricMAC}
	var err error
	if e.buf, err = e.pk.AppendBinary(e.buf[:0]); err != nil {
		return fmt.Errorf("vcc sim: encode: %w", err)
	}
	e.orig = append(e.orig[:0], e.buf...)
	if fromTenant {
		e.tr.FromTenant(e.buf)
	} else {
		e.tr.ToTenant(e.buf)
	}
	if string(e.orig) == string(e.buf) {
		return nil
	}
	e.res.Rewritten++
	if err := e.chk.DecodeFromBytes(e.buf); err != nil {
		return fmt.Errorf("vcc sim: decode rewritten frame: %w", err)
	}
	if e.verify && e.chk.VerifyChecksums() != nil {
		e.res.BadChecksums++
	}
	// Only the header fields vCC rewrites come back: ECN, flags, window.
	// (The simulator's segment keeps its own SACK blocks and options.)
	var out tcp.Segment
	if err := tcp.FromPacket(&e.chk, &out); err != nil {
		return err
	}
	s.ECN, s.Flags, s.Window = out.ECN, out.Flags, out.Window
	return nil
}

// RunDumbbell runs one dumbbell.
func RunDumbbell(cfg RunConfig) (*RunResult, error) {
	if len(cfg.Flows) == 0 || cfg.Bottleneck <= 0 || cfg.RTT <= 0 || cfg.Duration <= cfg.Warmup {
		return nil, fmt.Errorf("vcc sim: want flows, a positive rate and RTT, and duration > warmup")
	}
	sim := clock.NewSim(epoch)
	lim := clock.DefaultLimits()
	lim.MaxEvents = 0
	sim.SetLimits(lim)
	res := &RunResult{Flows: make([]FlowResult, len(cfg.Flows))}
	var ed *edge
	if cfg.VCC {
		ed = &edge{tr: vcc.New(sim, vcc.Config{React: cfg.React}), verify: cfg.Verify, res: res}
	}
	var firstErr error
	fail := func(err error) {
		if firstErr == nil {
			firstErr = err
		}
	}
	mtu := segment + 20 + 20 + 12 + 20
	drop := func(*netsim.Packet, netsim.DropReason) {}
	mk := func(rate int64, delay time.Duration, q netsim.Qdisc, deliver func(*netsim.Packet)) (*netsim.Link, error) {
		if q == nil {
			var err error
			if q, err = netsim.NewDropTail(10000, 0); err != nil {
				return nil, err
			}
		}
		return netsim.NewLink(sim, netsim.LinkConfig{Rate: rate, Delay: delay, MTU: mtu, Qdisc: q, Deliver: deliver, Drop: drop})
	}
	access := cfg.RTT / 8
	bneck := cfg.RTT/2 - 2*access
	q, err := netsim.ParseQdisc(cfg.Qdisc)
	if err != nil {
		return nil, fmt.Errorf("vcc sim: bottleneck: %w", err)
	}
	n := len(cfg.Flows)
	snd, rcv := make([]*tcp.Conn, n), make([]*tcp.Conn, n)
	down, downR := make([]*netsim.Link, n), make([]*netsim.Link, n)
	up, upR := make([]*netsim.Link, n), make([]*netsim.Link, n)
	fwd, err := mk(cfg.Bottleneck, bneck, q, func(p *netsim.Packet) { down[p.Meta.(*pkt).flow].Send(p) })
	if err != nil {
		return nil, err
	}
	rq, _ := netsim.NewDropTail(10000, 0)
	rev, err := mk(cfg.Bottleneck, bneck, rq, func(p *netsim.Packet) { downR[p.Meta.(*pkt).flow].Send(p) })
	if err != nil {
		return nil, err
	}
	send := func(l *netsim.Link, flow int, s *tcp.Segment) {
		p := &pkt{seg: *s, flow: flow}
		p.p.Meta = p
		p.p.Len = s.WireLen()
		p.p.ECN = netsim.ECN(s.ECN)
		l.Send(&p.p)
	}
	deliver := func(c *tcp.Conn, np *netsim.Packet) {
		p := np.Meta.(*pkt)
		p.seg.ECN = tcp.ECN(np.ECN)
		c.Input(&p.seg)
	}
	atWarmup := make([]uint64, n)
	for i, fc := range cfg.Flows {
		tc := tcp.DefaultConfig()
		tc.Clock = sim
		tc.MSS = segment + 12
		tc.CC = fc.CC
		tc.ECN = fc.ECN
		tc.Seed = cfg.Seed*1000 + uint64(i)
		tc.LocalPort, tc.RemotePort = uint16(10000+i), 5001
		rc := tcp.DefaultConfig()
		rc.Clock = sim
		rc.MSS = tc.MSS
		rc.ECN = true // the receiver host is ECN-capable (tcp_ecn=1), as live
		rc.Seed = tc.Seed + 500
		rc.LocalPort, rc.RemotePort = tc.RemotePort, tc.LocalPort
		rc.ISS = uint32(cfg.Seed*7919 + uint64(i)*104729)
		tc.ISS = rc.ISS ^ 0x5a5a5a5a
		flow := i
		sip := senderIP(i)
		tc.Output = func(s *tcp.Segment) {
			if ed != nil {
				if err := ed.pass(s, sip, rcvIP, true); err != nil {
					fail(err)
				}
			}
			send(up[flow], flow, s)
		}
		rc.Output = func(s *tcp.Segment) { send(upR[flow], flow, s) }
		if snd[i], err = tcp.New(tc); err != nil {
			return nil, fmt.Errorf("vcc sim: flow %d: %w", i, err)
		}
		if rcv[i], err = tcp.New(rc); err != nil {
			return nil, fmt.Errorf("vcc sim: flow %d: %w", i, err)
		}
		acc := fc.Access
		if acc <= 0 {
			acc = 1_000_000_000
		}
		if up[i], err = mk(acc, access, nil, func(p *netsim.Packet) { fwd.Send(p) }); err != nil {
			return nil, err
		}
		if down[i], err = mk(1_000_000_000, access, nil, func(p *netsim.Packet) { deliver(rcv[flow], p) }); err != nil {
			return nil, err
		}
		if upR[i], err = mk(1_000_000_000, access, nil, func(p *netsim.Packet) { rev.Send(p) }); err != nil {
			return nil, err
		}
		// The frames to the tenant pass the translator as the switch
		// transmits them on the tenant's port: at the end of the way back.
		if downR[i], err = mk(acc, access, nil, func(p *netsim.Packet) {
			if ed != nil {
				pp := p.Meta.(*pkt)
				pp.seg.ECN = tcp.ECN(p.ECN)
				if err := ed.pass(&pp.seg, rcvIP, sip, false); err != nil {
					fail(err)
				}
				p.ECN = netsim.ECN(pp.seg.ECN)
			}
			deliver(snd[flow], p)
		}); err != nil {
			return nil, err
		}
		if err := rcv[i].Listen(); err != nil {
			return nil, err
		}
		tcp.Bulk(snd[i])
		res.Flows[i].FlowConfig = fc
		// Starts spread over the first 50 ms, in a seeded order.
		start := time.Duration((uint64(i)*7919+cfg.Seed*104729)%50) * time.Millisecond
		c := snd[i]
		sim.AfterFunc(start, func() { _ = c.Connect() })
	}
	sim.AfterFunc(cfg.Warmup, func() {
		for i := range rcv {
			atWarmup[i] = rcv[i].Stats().BytesReceived
		}
	})
	if err := sim.TryRunUntil(epoch.Add(cfg.Duration)); err != nil {
		return nil, fmt.Errorf("vcc sim: %w", err)
	}
	if firstErr != nil {
		return nil, firstErr
	}
	secs := (cfg.Duration - cfg.Warmup).Seconds()
	for i := range res.Flows {
		st := snd[i].Stats()
		res.Flows[i].Mbps = float64(rcv[i].Stats().BytesReceived-atWarmup[i]) * 8 / secs / 1e6
		res.Flows[i].Retransmits = st.RetransSegs
		res.Flows[i].Timeouts = st.TCPTimeouts
		res.Flows[i].ECNReductions = st.TCPECNReductions
		res.Flows[i].CE = rcv[i].Stats().SegsCE
	}
	if ed != nil {
		res.VCC = ed.tr.Stats()
	}
	res.Events = sim.Fired()
	return res, nil
}

// Classes are a run's per-class means: the native ECN senders' and the
// others' (non-ECN, or vECN under vCC), in Mbit/s per flow.
func (r *RunResult) Classes() (ecn, nonECN float64) {
	var ne, nn int
	for _, f := range r.Flows {
		if f.ECN {
			ecn += f.Mbps
			ne++
		} else {
			nonECN += f.Mbps
			nn++
		}
	}
	if ne > 0 {
		ecn /= float64(ne)
	}
	if nn > 0 {
		nonECN /= float64(nn)
	}
	return ecn, nonECN
}

// Jain is Jain's index over every flow.
func (r *RunResult) Jain() float64 {
	x := make([]float64, len(r.Flows))
	for i, f := range r.Flows {
		x[i] = f.Mbps
	}
	return dumbbell.Jain(x)
}
