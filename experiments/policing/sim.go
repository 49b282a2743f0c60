package policing

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/pseudocong/pseudocong/internal/clock"
	"github.com/pseudocong/pseudocong/netsim"
	"github.com/pseudocong/pseudocong/tcp"
)

// The simulator backend is netsim links only: each hop of the path is a
// netsim.Link per direction with the hop's rate, delay, queue and loss,
// and a switch is the point where one hop's Deliver calls the next hop's
// Send. The switch model (experiments/sim) is not needed: paper 003's
// flows are forwarded by rules installed beforehand, so no packet meets
// a flow-table miss, a PACKET_IN or a TCAM update, and what the model
// adds to a forwarded frame (microseconds) is nothing beside 28 ms of
// path and 20 Mbit/s of rate limit. The live backend runs real switch
// processes; the agreement between the two is one of the must-shows.

// Flow is one bulk TCP transfer over a path.
type Flow struct {
	Path *Path
	// Upload: the client sends; otherwise the server does (iperf3 -R).
	Upload bool
	// SenderCC is the sender's congestion control (the receiver's does not
	// act on a one-way bulk flow).
	SenderCC string
	// MSS as iperf3 -M sets it (TCP_MAXSEG): payload = MSS − 12 with
	// timestamps, as in Linux.
	MSS      int
	Duration time.Duration
	// Omit is the start of the goodput window, as iperf3 -O.
	Omit time.Duration
	// Bytes, if > 0, makes it a finite transfer (FTP-like) that ends the
	// run when acknowledged; Duration is then the limit.
	Bytes int
	// Bin is the throughput series' interval; 0: 100 ms.
	Bin  time.Duration
	Seed uint64
	// HostJitter is the hosts' timing noise (Spec.HostJitter); 0: none.
	HostJitter time.Duration
}

// FlowResult is a flow's outcome.
type FlowResult struct {
	GoodputMbps float64 `json:"goodput_mbps"`
	// Retransmits counts the sender's retransmitted segments after Omit
	// (the steady state, as iperf3 -O counts); a finite transfer's count
	// all of them.
	Retransmits uint64 `json:"retransmits"`
	// RetransmitsAll counts them over the whole run, slow start included.
	RetransmitsAll uint64 `json:"retransmits_all"`
	// Series is the receiver's goodput per Bin, in Mbit/s, from the start.
	Series []float64 `json:"series_mbps"`
	// CompletionS is a finite transfer's time from connect to the last
	// byte acknowledged (0 if it did not finish).
	CompletionS float64 `json:"completion_s,omitempty"`
	Drops       uint64  `json:"drops"`
}

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

type simPkt struct {
	p   netsim.Packet
	seg tcp.Segment
}

// ethHeader is added to a segment's IP length so the links and qdiscs
// count frame bytes, as the live switch's ports do.
const ethHeader = 14

// RunSim runs one flow on the virtual clock.
func RunSim(f Flow) (*FlowResult, error) {
	if f.Bin == 0 {
		f.Bin = 100 * time.Millisecond
	}
	if f.MSS == 0 {
		f.MSS = 1400
	}
	if f.Duration <= f.Omit {
		return nil, fmt.Errorf("policing: duration %v must exceed omit %v", f.Duration, f.Omit)
	}
	sim := clock.NewSim(epoch)
	lim := clock.DefaultLimits()
	lim.MaxEvents = 0
	sim.SetLimits(lim)
	n := len(f.Path.Hops)
	// fwd[i] carries data from the sender's side over hop i (in the data
	// direction), rev[i] the ACKs back.
	var data, acks []*netsim.Link
	var free []*simPkt
	get := func() *simPkt {
		if k := len(free); k > 0 {
			p := free[k-1]
			free = free[:k-1]
			return p
		}
		p := &simPkt{}
		p.p.Meta = p
		return p
	}
	put := func(p *netsim.Packet, _ netsim.DropReason) { free = append(free, p.Meta.(*simPkt)) }
	var snd, rcv *tcp.Conn
	// Hops in data order: uploads walk the path forward, downloads back.
	order := make([]Hop, n)
	for i, h := range f.Path.Hops {
		if f.Upload {
			order[i] = h
		} else {
			order[n-1-i] = h
		}
	}
	mk := func(h Hop, spec string, seedOff uint64, next func(*netsim.Packet)) (*netsim.Link, error) {
		q, err := netsim.ParseQdisc(spec)
		if err != nil {
			return nil, fmt.Errorf("policing: hop %s: %w", h.Name, err)
		}
		var loss netsim.LossModel
		if h.Loss != "" {
			ls := h.Loss
			if ls[0] >= '0' && ls[0] <= '9' || ls[0] == '.' {
				ls = "bernoulli,p=" + ls
			}
			if loss, err = netsim.ParseLoss(fmt.Sprintf("%s,seed=%d", ls, f.Seed*16+seedOff+1)); err != nil {
				return nil, fmt.Errorf("policing: hop %s: %w", h.Name, err)
			}
		}
		return netsim.NewLink(sim, netsim.LinkConfig{Rate: h.Rate, Delay: h.Delay, Qdisc: q, Loss: loss, Deliver: next, Drop: put})
	}
	data, acks = make([]*netsim.Link, n), make([]*netsim.Link, n)
	for i := n - 1; i >= 0; i-- {
		h := order[i]
		dq, aq := h.UpQdisc, h.DownQdisc
		if !f.Upload {
			dq, aq = aq, dq
		}
		var dnext, anext func(*netsim.Packet)
		if i == n-1 {
			dnext = func(p *netsim.Packet) { sp := p.Meta.(*simPkt); rcv.Input(&sp.seg); free = append(free, sp) }
		} else {
			nl := &data[i+1]
			dnext = func(p *netsim.Packet) { (*nl).Send(p) }
		}
		if i == 0 {
			anext = func(p *netsim.Packet) { sp := p.Meta.(*simPkt); snd.Input(&sp.seg); free = append(free, sp) }
		} else {
			pl := &acks[i-1]
			anext = func(p *netsim.Packet) { (*pl).Send(p) }
		}
		var err error
		if data[i], err = mk(h, dq, uint64(2*i), dnext); err != nil {
			return nil, err
		}
		if acks[i], err = mk(h, aq, uint64(2*i+1), anext); err != nil {
			return nil, err
		}
	}
	// hostOut is a host's transmit onto link l. With HostJitter each
	// segment leaves after a uniform random delay in [0, HostJitter),
	// never before the segment the host sent before it.
	hostOut := func(l *netsim.Link, stream uint64) func(*tcp.Segment) {
		pkt := func(s *tcp.Segment) *netsim.Packet {
			p := get()
			p.seg = *s
			p.p.Len = s.WireLen() + ethHeader
			return &p.p
		}
		if f.HostJitter <= 0 {
			return func(s *tcp.Segment) { l.Send(pkt(s)) }
		}
		rng := rand.New(rand.NewPCG(f.Seed, stream))
		var last time.Time
		return func(s *tcp.Segment) {
			p := pkt(s)
			at := sim.Now().Add(time.Duration(rng.Int64N(int64(f.HostJitter))))
			if at.Before(last) {
				at = last
			}
			last = at
			sim.AfterFunc(at.Sub(sim.Now()), func() { l.Send(p) })
		}
	}
	tc := tcp.DefaultConfig()
	tc.Clock = sim
	tc.Profile = tcp.Linux()
	tc.MSS = f.MSS
	tc.SndBuf, tc.RcvBuf = 4<<20, 4<<20
	tc.CC = f.SenderCC
	tc.Seed = f.Seed*1000 + 1
	tc.LocalPort, tc.RemotePort = 40000, 5201
	rc := tc
	rc.CC = "cubic"
	rc.LocalPort, rc.RemotePort = tc.RemotePort, tc.LocalPort
	rc.ISS = uint32(f.Seed*7919 + 104729)
	tc.ISS = rc.ISS ^ 0x5a5a5a5a
	tc.Output = hostOut(data[0], 1)
	rc.Output = hostOut(acks[n-1], 2)
	var err error
	if snd, err = tcp.New(tc); err != nil {
		return nil, fmt.Errorf("policing: sender: %w", err)
	}
	if rcv, err = tcp.New(rc); err != nil {
		return nil, fmt.Errorf("policing: receiver: %w", err)
	}
	if err := rcv.Listen(); err != nil {
		return nil, err
	}
	res := &FlowResult{}
	var doneAt time.Time
	if f.Bytes > 0 {
		tcp.Transfer(snd, f.Bytes, func(at time.Time) { doneAt = at })
	} else {
		tcp.Bulk(snd)
	}
	var last, atOmit, retxAtOmit uint64
	var tick func()
	tick = func() {
		b := rcv.Stats().BytesReceived
		res.Series = append(res.Series, float64(b-last)*8/f.Bin.Seconds()/1e6)
		last = b
		if !doneAt.IsZero() {
			return
		}
		sim.AfterFunc(f.Bin, tick)
	}
	sim.AfterFunc(f.Bin, tick)
	sim.AfterFunc(f.Omit, func() { atOmit, retxAtOmit = rcv.Stats().BytesReceived, snd.Stats().RetransSegs })
	if err := snd.Connect(); err != nil {
		return nil, err
	}
	end := epoch.Add(f.Duration)
	if f.Bytes > 0 {
		for sim.Now().Before(end) && doneAt.IsZero() {
			if err := sim.TryRunUntil(sim.Now().Add(f.Bin)); err != nil {
				return nil, fmt.Errorf("policing: %w", err)
			}
		}
	} else if err := sim.TryRunUntil(end); err != nil {
		return nil, fmt.Errorf("policing: %w", err)
	}
	total := rcv.Stats().BytesReceived
	if f.Bytes > 0 {
		if !doneAt.IsZero() {
			res.CompletionS = doneAt.Sub(epoch).Seconds()
			res.GoodputMbps = float64(f.Bytes) * 8 / res.CompletionS / 1e6
		}
	} else {
		res.GoodputMbps = float64(total-atOmit) * 8 / (f.Duration - f.Omit).Seconds() / 1e6
	}
	res.RetransmitsAll = snd.Stats().RetransSegs
	res.Retransmits = res.RetransmitsAll - retxAtOmit
	if f.Bytes > 0 {
		res.Retransmits = res.RetransmitsAll
	}
	for _, l := range data {
		s := l.Stats()
		res.Drops += s.QdiscDropped + s.Lost
	}
	return res, nil
}
