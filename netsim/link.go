package netsim

import (
	"fmt"
	"time"

	"github.com/pseudocong/pseudocong/internal/clock"
	"github.com/pseudocong/pseudocong/internal/ring"
)

// DropReason says where a link lost a packet.
type DropReason uint8

const (
	DropOversized DropReason = iota // longer than the MTU
	DropQdisc                       // refused by the qdisc (full, RED, policer)
	DropLost                        // lost on the wire (loss model)
)

func (r DropReason) String() string {
	switch r {
	case DropOversized:
		return "oversized"
	case DropQdisc:
		return "qdisc"
	default:
		return "lost"
	}
}

// LinkConfig describes one direction of a link.
type LinkConfig struct {
	// Rate is the line rate in bits/s: a packet of Len bytes occupies the
	// transmitter for Len·8/Rate.
	Rate int64
	// Delay is the propagation delay, added after serialisation.
	Delay time.Duration
	// MTU is the largest Len the link carries; longer packets are dropped
	// and counted. 0 means no limit.
	MTU int
	// Qdisc is the queue at the sending end. Required: a link without a
	// bounded queue would hide its drops.
	Qdisc Qdisc
	// Loss, if set, decides which serialised packets the wire loses.
	Loss LossModel
	// Deliver receives every packet at the far end, Delay after its last
	// bit left. Required, unless Handoff is set.
	Deliver func(p *Packet)
	// Handoff, if set, replaces the wire: it takes each packet as it
	// starts, with the time its last bit reaches the far end (start +
	// serialisation + Delay), and the link neither delivers it nor counts
	// it as delivered. It is for a far end on another clock: a simulation
	// cut in two at a link of long delay, each half on its own event loop
	// (experiments/highbdp's split cells), where the other half delivers
	// the packet when its clock gets there.
	Handoff func(p *Packet, at time.Time)
	// Drop, if set, receives every packet the link drops, so the model can
	// recycle it; the packet is the callee's afterwards.
	Drop func(p *Packet, why DropReason)
}

// LinkStats are a link's counters. Sent counts packets put on the wire
// (serialisation begun), lost ones included: the loss model decides as a
// packet starts, the wire then simply never delivers it. Delivered counts
// those handed to Deliver.
type LinkStats struct {
	Sent, SentBytes           uint64
	Delivered, DeliveredBytes uint64
	Lost, LostBytes           uint64
	Oversized, OversizedBytes uint64
	QdiscDropped              uint64
}

// inFlight is a packet between the transmitter and the far end.
type inFlight struct {
	p  *Packet
	at int64 // ns since the link's base
}

// Link is one direction of a point-to-point link: a qdisc feeding a
// transmitter of fixed rate, then a wire of fixed delay. It is sans-I/O on
// a clock.Clock.
//
// Events are kept few, because they are the simulator's cost: a packet
// starts the instant the transmitter is free (no event for that unless it
// had to wait), and its arrival time, start + Len·8/Rate + Delay, is known
// then, so each packet costs one delivery event, plus one "transmitter
// free" event only if it queued behind another. The link has at most one
// timer of each kind pending (transmitter free, next delivery, shaper
// wake-up), every callback is a method value made once, and the rings
// grow to the high-water mark once: the steady state allocates only what
// the clock's own AfterFunc does.
//
// A Link is not safe for concurrent use: Send and the timer callbacks must
// be serialised. The virtual clock does that by construction (one event
// loop); on the wall clock, whose AfterFunc runs f on its own goroutine,
// the shell must post the callbacks onto the port's goroutine.
type Link struct {
	_     linePad
	clk   clock.Clock
	cfg   LinkConfig
	stats LinkStats

	// Times are nanoseconds since base (the clock's time when the link was
	// made): integer compares on the hot path instead of time.Time's.
	base      time.Time
	freeAt    int64 // the transmitter is busy until then
	pullArmed bool  // a timer will pull the qdisc at freeAt
	rem       int64 // serialisation remainder (nanobits) carried to the next packet

	// The wire: packets in send order, which is arrival order because the
	// delay is the same for all.
	pipe  ring.Buffer[inFlight]
	armed bool // a delivery timer is pending for the wire's head

	wake   clock.Timer // shaper wake-up, if armed
	wakeAt int64

	onFree, deliver, wakeUp func()

	// The per-packet path on the virtual clock (see fast.go): the Sim
	// itself, so reading the time and posting a delivery are int64 work
	// with no allocation, not time.Time arithmetic and a timer handle.
	mono    clock.Mono
	sim     *clock.Sim // mono's Sim, nil on the wall clock
	untimed bool       // the qdisc ignores the time it is given (DropTail)
	ser     serCache
	// dt is the qdisc when it is a plain DropTail (nil otherwise): the
	// per-packet calls then go to it directly, not through the Qdisc
	// interface, and inline.
	dt *DropTail
	_  linePad
}

func NewLink(clk clock.Clock, c LinkConfig) (*Link, error) {
	switch {
	case clk == nil:
		return nil, fmt.Errorf("netsim: link: nil clock")
	case c.Rate <= 0:
		return nil, fmt.Errorf("netsim: link: rate %d bit/s: want a positive rate", c.Rate)
	case c.Delay < 0:
		return nil, fmt.Errorf("netsim: link: delay %v: want ≥ 0", c.Delay)
	case c.MTU < 0:
		return nil, fmt.Errorf("netsim: link: mtu %d: want ≥ 0 (0 for none)", c.MTU)
	case c.Qdisc == nil:
		return nil, fmt.Errorf("netsim: link: no qdisc")
	case c.Deliver == nil && c.Handoff == nil:
		return nil, fmt.Errorf("netsim: link: no Deliver func")
	}
	l := &Link{clk: clk, cfg: c, base: clk.Now()}
	l.onFree, l.deliver, l.wakeUp = l.free, l.onDeliver, l.onWake
	l.mono = clock.NewMono(clk, l.base)
	l.sim = l.mono.Sim()
	_, l.untimed = c.Qdisc.(untimedQdisc)
	l.dt, _ = c.Qdisc.(*DropTail)
	return l, nil
}

func (l *Link) Stats() LinkStats { return l.stats }
func (l *Link) Qdisc() Qdisc     { return l.cfg.Qdisc }

// InFlight is the packets on their way: being serialised or propagating.
func (l *Link) InFlight() int { return l.pipe.Len() }

// Busy reports whether the transmitter is sending a packet.
func (l *Link) Busy() bool { _, now := l.now(); return now < l.freeAt }

// SerialisationTime is Len·8/Rate, rounded down to the nanosecond (the
// link carries the remainder to the next packet, so its long-run rate is
// exact).
func (l *Link) SerialisationTime(n int) time.Duration {
	return time.Duration(int64(n) * tokensPerByte / l.cfg.Rate)
}

// Send offers p to the link's qdisc and starts the transmitter if it is
// idle. A packet the link drops goes to Drop; the verdict says what
// happened.
func (l *Link) Send(p *Packet) Verdict {
	if l.cfg.MTU > 0 && p.Len > l.cfg.MTU {
		l.stats.Oversized++
		l.stats.OversizedBytes += uint64(p.Len)
		l.drop(p, DropOversized)
		return Dropped
	}
	t, now := l.now()
	var v Verdict
	if d := l.dt; d != nil {
		if d.q.n == 0 && now >= l.freeAt && (d.limitBts == 0 || p.Len <= d.limitBts) {
			// An idle line and an empty FIFO that takes the packet:
			// what Enqueue, kick, pull and Dequeue would do, without
			// the round trip through the queue (the same counters, the
			// same order, the queue empty after as before).
			d.stats.enqueued(p)
			d.stats.dequeued(p)
			l.start(p, p.Len, now)
			return Queued
		}
		v = d.Enqueue(p, t)
	} else {
		v = l.cfg.Qdisc.Enqueue(p, t)
	}
	if v == Dropped {
		l.stats.QdiscDropped++
		l.drop(p, DropQdisc)
		return v
	}
	l.kick(t, now)
	return v
}

func (l *Link) drop(p *Packet, why DropReason) {
	if l.cfg.Drop != nil {
		l.cfg.Drop(p, why)
	}
}

// kick starts the next packet if the transmitter is free, or makes sure a
// timer pulls the qdisc when it frees.
func (l *Link) kick(t time.Time, now int64) {
	if now < l.freeAt {
		if !l.pullArmed {
			l.pullArmed = true
			l.post(l.freeAt-now, l.onFree)
		}
		return
	}
	l.pull(t, now)
}

func (l *Link) free() {
	l.pullArmed = false
	l.kick(l.now())
}

// pull puts the qdisc's next packet on the wire, or arms the wake-up for
// when a shaper will let one go.
func (l *Link) pull(t time.Time, now int64) {
	var p *Packet
	var n int
	var ok bool
	if l.dt != nil {
		p, n, ok = l.dt.dequeueLen()
	} else if p, ok = l.cfg.Qdisc.Dequeue(t); ok {
		n = p.Len
	}
	if !ok {
		l.armWake(t, now)
		return
	}
	l.start(p, n, now)
}

// start puts p, just taken from the qdisc, on the wire now. n is p.Len,
// passed in so that a packet from a DropTail queue is not read here (see
// fifo).
func (l *Link) start(p *Packet, n int, now int64) {
	if l.wake != nil {
		l.wake.Stop()
		l.wake = nil
	}
	var busy int64
	busy, l.rem = l.ser.serialise(n, l.rem, l.cfg.Rate)
	l.freeAt = now + busy
	l.stats.Sent++
	l.stats.SentBytes += uint64(n)
	if l.cfg.Loss != nil && l.cfg.Loss.Lose(p) {
		l.stats.Lost++
		l.stats.LostBytes += uint64(n)
		l.drop(p, DropLost)
	} else if l.cfg.Handoff != nil {
		l.cfg.Handoff(p, l.base.Add(time.Duration(l.freeAt+int64(l.cfg.Delay))))
	} else {
		l.pipe.Push(inFlight{p: p, at: l.freeAt + int64(l.cfg.Delay)})
		if !l.armed { // for the head: packets from before may still be on the wire
			l.armed = true
			l.post(l.pipe.Head().at-now, l.deliver)
		}
	}
	if l.queued() && !l.pullArmed {
		l.pullArmed = true
		l.post(l.freeAt-now, l.onFree)
	}
}

// queued reports whether the qdisc holds a packet.
func (l *Link) queued() bool {
	if l.dt != nil {
		return l.dt.q.n > 0
	}
	return l.cfg.Qdisc.Len() > 0
}

func (l *Link) armWake(t time.Time, now int64) {
	ready, ok := l.cfg.Qdisc.NextReady(t)
	if !ok {
		return
	}
	// A qdisc that says "ready now" yet refused Dequeue would make a
	// zero-delay loop; wait a nanosecond instead.
	d := max(ready.Sub(t), time.Nanosecond)
	if l.wake != nil {
		if l.wakeAt <= now+int64(d) {
			return // already due no later
		}
		l.wake.Stop()
	}
	l.wake, l.wakeAt = l.clk.AfterFunc(d, l.wakeUp), now+int64(d)
}

func (l *Link) onWake() {
	l.wake = nil
	l.kick(l.now())
}

func (l *Link) onDeliver() {
	l.armed = false
	now := l.nowNs()
	// Only the packets on the wire now: one that Deliver sends back onto
	// this link at this instant (a zero-time loop) gets an event of its
	// own, so the clock's same-instant limit can catch a runaway loop.
	for n := l.pipe.Len(); n > 0 && l.pipe.Head().at <= now; n-- {
		p := l.pipe.Pop().p
		if l.pipe.Len() > 0 {
			// On a long pipe (53 ms at 10 Gbit/s: 80 000 packets)
			// every descriptor has left the cache by the time it
			// arrives. Asking for the next one now overlaps that
			// memory access with this delivery's work instead of
			// stalling the next delivery on it.
			prefetchPacket(l.pipe.Head().p)
		}
		l.stats.Delivered++
		l.stats.DeliveredBytes += uint64(p.Len)
		l.cfg.Deliver(p)
	}
	if l.pipe.Len() > 0 && !l.armed { // Deliver may have sent on this link again
		l.armed = true
		l.post(l.pipe.Head().at-now, l.deliver)
	}
}
