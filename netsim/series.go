package netsim

import (
	"fmt"
	"net/netip"
	"time"

	"github.com/pseudocong/pseudocong/internal/clock"
	"github.com/pseudocong/pseudocong/packet"
)

// Recorder samples time series of a built network every Interval: per
// link direction and per queue the backlog (packets, bytes) at the sample
// instant and what happened since the previous sample (enqueued, dropped,
// marked, delivered packets and bytes, throughput), and per flow (5-tuple,
// at the receiving host) the packets, bytes and throughput of the
// interval.
//
// It only reads: a run records the same results with it as without. On
// the virtual clock it stops re-arming once nothing else is scheduled, so
// a run still ends when its model is done. A network built without a
// Recorder pays nothing for it (one nil check per delivered packet).
type Recorder struct {
	interval time.Duration
	maxRows  int
	clk      clock.Clock
	start    time.Time
	last     time.Duration
	links    []linkTrack
	flows    map[FlowKey]*flowTrack
	order    []FlowKey // first-seen order, for deterministic output
	timer    clock.Timer
	stopped  bool

	Links []LinkSample
	Flows []FlowSample
	// Truncated counts samples not kept because MaxRows was reached.
	Truncated uint64
}

// LinkSample is one link direction's (Queue -1) or one queue's (Queue i of
// a MultiQueue) state at T (since the recording began). Counters are per
// interval.
type LinkSample struct {
	T        time.Duration
	Link     string // "a:eth0>s1:1": sender > receiver
	Queue    int
	QLen     int
	QBytes   int
	Enqueued uint64
	Dropped  uint64
	Marked   uint64
	// Delivered packets and bytes reached the far end (Queue -1 only;
	// per queue: dequeued).
	Delivered, DeliveredBytes uint64
	// ThroughputBps is DeliveredBytes·8 over the interval.
	ThroughputBps float64
}

// FlowKey is a flow's 5-tuple.
type FlowKey struct {
	Src, Dst         netip.Addr
	SrcPort, DstPort uint16
	Proto            packet.IPProtocol
}

func (k FlowKey) String() string {
	proto := fmt.Sprint(uint8(k.Proto))
	switch k.Proto {
	case packet.IPProtocolTCP:
		proto = "tcp"
	case packet.IPProtocolUDP:
		proto = "udp"
	case packet.IPProtocolICMP:
		proto = "icmp"
	}
	return fmt.Sprintf("%v:%d>%v:%d/%s", k.Src, k.SrcPort, k.Dst, k.DstPort, proto)
}

// FlowSample is one flow's packets and bytes received in the interval
// ending at T (only intervals in which the flow received something).
type FlowSample struct {
	T             time.Duration
	Flow          FlowKey
	Packets       uint64
	Bytes         uint64
	ThroughputBps float64
}

type linkTrack struct {
	name string
	l    *Link
	prev LinkStats
	qs   []queueTrack // [0]: the qdisc; then MultiQueue children
}

type queueTrack struct {
	q    Qdisc
	prev Stats
}

type flowTrack struct{ packets, bytes uint64 }

// DefaultMaxRows bounds a recorder's samples (each some 100 bytes).
const DefaultMaxRows = 2_000_000

// MinInterval is the shortest sampling interval a recorder accepts: each
// sample is a clock event, and a shorter one would swamp the run.
const MinInterval = 10 * time.Microsecond

// NewRecorder returns a recorder sampling every interval, keeping at most
// maxRows samples (0: DefaultMaxRows). Give it to Build.
func NewRecorder(interval time.Duration, maxRows int) (*Recorder, error) {
	if interval < MinInterval {
		return nil, fmt.Errorf("netsim: series interval %v: want at least %v", interval, MinInterval)
	}
	if maxRows <= 0 {
		maxRows = DefaultMaxRows
	}
	return &Recorder{interval: interval, maxRows: maxRows, flows: map[FlowKey]*flowTrack{}}, nil
}

// Interval is the sampling interval.
func (r *Recorder) Interval() time.Duration { return r.interval }

func (r *Recorder) attach(clk clock.Clock, n *Network) {
	r.clk, r.start = clk, clk.Now()
	for _, lp := range n.Links {
		a, b := lp.Plan.A.Name, lp.Plan.B.Name
		r.track(a+">"+b, lp.AB)
		r.track(b+">"+a, lp.BA)
	}
	for _, h := range n.Hosts {
		h.SetObserver(r.observe)
	}
	r.timer = clk.AfterFunc(r.interval, r.tick)
}

func (r *Recorder) track(name string, l *Link) {
	t := linkTrack{name: name, l: l, qs: []queueTrack{{q: l.Qdisc()}}}
	if m, ok := l.Qdisc().(*MultiQueue); ok {
		for i := range m.NumQueues() {
			t.qs = append(t.qs, queueTrack{q: m.Child(i)})
		}
	}
	r.links = append(r.links, t)
}

func (r *Recorder) observe(p *packet.Packet, frameLen int) {
	k := FlowKey{Src: p.IPv4.SrcAddr(), Dst: p.IPv4.DstAddr(), Proto: p.IPv4.Protocol}
	switch {
	case p.Layers.Has(packet.LayerTCP):
		k.SrcPort, k.DstPort = p.TCP.SrcPort, p.TCP.DstPort
	case p.Layers.Has(packet.LayerUDP):
		k.SrcPort, k.DstPort = p.UDP.SrcPort, p.UDP.DstPort
	}
	f := r.flows[k]
	if f == nil {
		f = &flowTrack{}
		r.flows[k] = f
		r.order = append(r.order, k)
	}
	f.packets++
	f.bytes += uint64(frameLen)
}

// pender is what the virtual clock offers to tell whether anything else
// is scheduled.
type pender interface{ Pending() int }

func (r *Recorder) tick() {
	r.sample()
	if r.stopped {
		return
	}
	if p, ok := r.clk.(pender); ok && p.Pending() == 0 {
		return // the model is done: let the run end
	}
	r.timer = r.clk.AfterFunc(r.interval, r.tick)
}

// Stop takes a last sample (of the partial interval, if any) and stops
// the recording.
func (r *Recorder) Stop() {
	if r.stopped || r.clk == nil {
		return
	}
	if r.clk.Now().Sub(r.start) > r.last {
		r.sample()
	}
	r.stopped = true
	if r.timer != nil {
		r.timer.Stop()
	}
}

func (r *Recorder) keep() bool {
	if len(r.Links)+len(r.Flows) >= r.maxRows {
		r.Truncated++
		return false
	}
	return true
}

func (r *Recorder) sample() {
	t := r.clk.Now().Sub(r.start)
	span := (t - r.last).Seconds()
	r.last = t
	bps := func(bytes uint64) float64 {
		if span <= 0 {
			return 0
		}
		return float64(bytes) * 8 / span
	}
	for i := range r.links {
		lt := &r.links[i]
		st := lt.l.Stats()
		for j := range lt.qs {
			qt := &lt.qs[j]
			qs := qt.q.Stats()
			s := LinkSample{T: t, Link: lt.name, Queue: j - 1, QLen: qt.q.Len(), QBytes: qt.q.Bytes(),
				Enqueued: qs.Enqueued - qt.prev.Enqueued, Dropped: qs.Dropped - qt.prev.Dropped,
				Marked: qs.Marked - qt.prev.Marked}
			if j == 0 {
				s.Dropped += (st.Oversized - lt.prev.Oversized) + (st.Lost - lt.prev.Lost)
				s.Delivered = st.Delivered - lt.prev.Delivered
				s.DeliveredBytes = st.DeliveredBytes - lt.prev.DeliveredBytes
			} else {
				s.Delivered = qs.Dequeued - qt.prev.Dequeued
				s.DeliveredBytes = qs.DequeuedBytes - qt.prev.DequeuedBytes
			}
			s.ThroughputBps = bps(s.DeliveredBytes)
			qt.prev = qs
			if r.keep() {
				r.Links = append(r.Links, s)
			}
		}
		lt.prev = st
	}
	for _, k := range r.order {
		f := r.flows[k]
		if f.packets == 0 {
			continue
		}
		if r.keep() {
			r.Flows = append(r.Flows, FlowSample{T: t, Flow: k, Packets: f.packets, Bytes: f.bytes, ThroughputBps: bps(f.bytes)})
		}
		*f = flowTrack{}
	}
}
