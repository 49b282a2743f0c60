package mptcp

import (
	"fmt"
	"time"

	"github.com/pseudocong/pseudocong/internal/clock"
	"github.com/pseudocong/pseudocong/netsim"
	"github.com/pseudocong/pseudocong/tcp"
)

// PathConfig is one path between client and server: a link each way of
// Rate bit/s and Delay one-way propagation, a drop-tail queue of Queue
// packets at each sender, and Loss, the probability that the wire loses a
// data-direction packet (independent losses; ACKs are not lost, as with
// ns-3's receive error model on the data path).
type PathConfig struct {
	Rate  int64
	Delay time.Duration
	Loss  float64
	Queue int
}

// RunConfig is one bulk MPTCP transfer over the paths, on clock.Sim.
type RunConfig struct {
	Paths  []PathConfig
	RcvBuf int    // connection-level receive buffer, bytes
	Policy string // PolicyNames; "": rtx-same
	// Uncoupled gives each subflow its own CC (CC, default newreno)
	// instead of LIA.
	Uncoupled bool
	CC        string
	Duration  time.Duration // total simulated time
	Warmup    time.Duration // excluded from goodput and blocked share
	Segment   int           // payload bytes of a full segment; 0: 1448
	// Profile names the subflows' timer profile (tcp.ProfileByName);
	// "": linux.
	Profile string
	// NoSACK turns SACK off (ns-3's MPTCP models have none).
	NoSACK bool
	Seed   uint64
}

// Result is one run's outcome, measured from Warmup to Duration.
type Result struct {
	GoodputMbps  float64        `json:"goodput_mbps"`
	BlockedShare float64        `json:"blocked_share"`
	DupBytes     uint64         `json:"dup_bytes"`
	Subflows     []SubflowStats `json:"subflows"`
	Events       uint64         `json:"events"`
}

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// pkt is a segment on a link, recycled through a netsim.Pool.
type pkt struct {
	p    netsim.Packet
	seg  tcp.Segment
	path int
}

type network struct {
	pool netsim.Pool[pkt]
}

func initPkt(p *pkt) { p.p.Meta = p }

func (n *network) get() *pkt  { return n.pool.Get() }
func (n *network) put(p *pkt) { n.pool.Put(p) }

func (c *RunConfig) check() error {
	if c.Segment == 0 {
		c.Segment = 1448
	}
	if c.Policy == "" {
		c.Policy = "rtx-same"
	}
	switch {
	case len(c.Paths) < 1:
		return fmt.Errorf("mptcp: run: no paths")
	case c.Duration <= 0 || c.Warmup < 0 || c.Warmup >= c.Duration:
		return fmt.Errorf("mptcp: run: duration %v, warmup %v: want 0 ≤ warmup < duration", c.Duration, c.Warmup)
	case c.RcvBuf < c.Segment:
		return fmt.Errorf("mptcp: run: receive buffer %d bytes: want at least a segment (%d)", c.RcvBuf, c.Segment)
	}
	for i, p := range c.Paths {
		if p.Rate <= 0 || p.Delay < 0 || p.Queue < 1 || !(p.Loss >= 0 && p.Loss < 1) {
			return fmt.Errorf("mptcp: run: path %d: rate %d, delay %v, queue %d, loss %v: want rate > 0, delay ≥ 0, queue ≥ 1, 0 ≤ loss < 1",
				i, p.Rate, p.Delay, p.Queue, p.Loss)
		}
	}
	return nil
}

// Run runs one bulk transfer from client to server over cfg.Paths.
func Run(cfg RunConfig) (*Result, error) { return run(cfg, nil) }

// run is Run with probe (tests) called after every segment either side
// takes in.
func run(cfg RunConfig, probe func(client, server *Conn)) (*Result, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	pol, err := NewPolicy(cfg.Policy)
	if err != nil {
		return nil, err
	}
	sim := clock.NewSim(epoch)
	lim := clock.DefaultLimits()
	lim.MaxEvents = 0 // a bulk run never comes to rest
	sim.SetLimits(lim)
	n := &network{pool: netsim.Pool[pkt]{Init: initPkt}}
	tc := tcp.DefaultConfig()
	tc.MSS = cfg.Segment + 12 // timestamps ride on every segment
	tc.SndBuf, tc.RcvBuf = 16<<20, 16<<20
	if cfg.CC != "" {
		tc.CC = cfg.CC
	}
	if cfg.Profile != "" {
		if tc.Profile, err = tcp.ProfileByName(cfg.Profile); err != nil {
			return nil, fmt.Errorf("mptcp: %w", err)
		}
	}
	tc.SACK = !cfg.NoSACK
	var client, server *Conn
	fwd := make([]*netsim.Link, len(cfg.Paths))
	rev := make([]*netsim.Link, len(cfg.Paths))
	mtu := cfg.Segment + 20 + 20 + 12 + 80
	for i, p := range cfg.Paths {
		mk := func(loss float64, seed uint64, deliver func(*netsim.Packet)) (*netsim.Link, error) {
			q, err := netsim.NewDropTail(p.Queue, 0)
			if err != nil {
				return nil, err
			}
			lc := netsim.LinkConfig{Rate: p.Rate, Delay: p.Delay, MTU: mtu, Qdisc: q, Deliver: deliver,
				Drop: func(np *netsim.Packet, _ netsim.DropReason) { n.put(np.Meta.(*pkt)) }}
			if loss > 0 {
				b, err := netsim.NewBernoulli(loss, seed)
				if err != nil {
					return nil, err
				}
				lc.Loss = b
			}
			return netsim.NewLink(sim, lc)
		}
		if fwd[i], err = mk(p.Loss, cfg.Seed*1009+uint64(i)+1, func(np *netsim.Packet) {
			pk := np.Meta.(*pkt)
			server.Input(pk.path, &pk.seg)
			n.put(pk)
			if probe != nil {
				probe(client, server)
			}
		}); err != nil {
			return nil, fmt.Errorf("mptcp: path %d: %w", i, err)
		}
		if rev[i], err = mk(0, 0, func(np *netsim.Packet) {
			pk := np.Meta.(*pkt)
			client.Input(pk.path, &pk.seg)
			n.put(pk)
			if probe != nil {
				probe(client, server)
			}
		}); err != nil {
			return nil, fmt.Errorf("mptcp: path %d: %w", i, err)
		}
	}
	send := func(links []*netsim.Link) func(int, *tcp.Segment) {
		return func(path int, s *tcp.Segment) {
			pk := n.get()
			pk.seg, pk.path = *s, path
			pk.p.Len = s.WireLen()
			links[path].Send(&pk.p)
		}
	}
	base := Config{Clock: sim, Subflow: tc, RcvBuf: cfg.RcvBuf, Uncoupled: cfg.Uncoupled, Policy: pol, Seed: cfg.Seed}
	cc, sc := base, base
	cc.Output, cc.Key = send(fwd), 0x1111_0000_0000_0000^cfg.Seed
	sc.Output, sc.Key = send(rev), 0x2222_0000_0000_0000^cfg.Seed
	if client, err = NewClient(cc, len(cfg.Paths)); err != nil {
		return nil, err
	}
	if server, err = NewServer(sc); err != nil {
		return nil, err
	}
	client.Bulk()
	if err := client.Connect(); err != nil {
		return nil, err
	}
	var atWarmup uint64
	sim.AfterFunc(cfg.Warmup, func() {
		atWarmup = server.Received()
		client.MeasureFrom()
	})
	if err := sim.TryRunUntil(epoch.Add(cfg.Duration)); err != nil {
		return nil, fmt.Errorf("mptcp: %w", err)
	}
	span := (cfg.Duration - cfg.Warmup).Seconds()
	return &Result{
		GoodputMbps:  float64(server.Received()-atWarmup) * 8 / span / 1e6,
		BlockedShare: client.BlockedTime().Seconds() / span,
		DupBytes:     server.DupBytes(),
		Subflows:     client.Subflows(),
		Events:       sim.Fired(),
	}, nil
}
