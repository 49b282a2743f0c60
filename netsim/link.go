package netsim

import (
	"fmt"
	"time"

	"github.com/pseudocong/pseudocong/internal/clock"
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
	// bit left. Required.
	Deliver func(p *Packet)
	// Drop, if set, receives every packet the link drops, so the model can
	// recycle it; the packet is the callee's afterwards.
	Drop func(p *Packet, why DropReason)
}

// LinkStats are a link's counters. Sent counts packets that finished
// serialisation (lost ones included); Delivered those handed to Deliver.
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
	at time.Time
}

// Link is one direction of a point-to-point link: a qdisc feeding a
// transmitter of fixed rate, then a wire of fixed delay. It is sans-I/O on
// a clock.Clock and arms at most three timers (transmitter done, next
// delivery, shaper wake-up) whatever the load; every callback is a method
// value made once, so the steady state allocates only what the clock's
// own AfterFunc does.
//
// A Link is not safe for concurrent use: Send and the timer callbacks must
// be serialised. The virtual clock does that by construction (one event
// loop); on the wall clock, whose AfterFunc runs f on its own goroutine,
// the shell must post the callbacks onto the port's goroutine.
type Link struct {
	clk   clock.Clock
	cfg   LinkConfig
	stats LinkStats

	busy bool
	cur  *Packet
	rem  int64 // serialisation remainder (bit·ns units) carried to the next packet

	// The wire: packets in send order, which is arrival order because the
	// delay is the same for all.
	pipe  wire
	armed bool // a delivery timer is pending for the wire's head

	wake   clock.Timer // shaper wake-up, if armed
	wakeAt time.Time

	txDone, deliver, wakeUp func()
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
	case c.Deliver == nil:
		return nil, fmt.Errorf("netsim: link: no Deliver func")
	}
	l := &Link{clk: clk, cfg: c}
	l.txDone, l.deliver, l.wakeUp = l.onTxDone, l.onDeliver, l.onWake
	return l, nil
}

func (l *Link) Stats() LinkStats { return l.stats }
func (l *Link) Qdisc() Qdisc     { return l.cfg.Qdisc }

// InFlight is the packets on the wire (serialised, not yet delivered).
func (l *Link) InFlight() int { return l.pipe.n }

// Busy reports whether the transmitter is sending a packet.
func (l *Link) Busy() bool { return l.busy }

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
	v := l.cfg.Qdisc.Enqueue(p, l.clk.Now())
	if v == Dropped {
		l.stats.QdiscDropped++
		l.drop(p, DropQdisc)
		return v
	}
	if !l.busy {
		l.pull()
	}
	return v
}

func (l *Link) drop(p *Packet, why DropReason) {
	if l.cfg.Drop != nil {
		l.cfg.Drop(p, why)
	}
}

// pull starts sending the qdisc's next packet, or arms the wake-up for
// when a shaper will let one go.
func (l *Link) pull() {
	now := l.clk.Now()
	p, ok := l.cfg.Qdisc.Dequeue(now)
	if !ok {
		l.armWake(now)
		return
	}
	if l.wake != nil {
		l.wake.Stop()
		l.wake = nil
	}
	l.busy, l.cur = true, p
	bits := int64(p.Len)*tokensPerByte + l.rem
	l.rem = bits % l.cfg.Rate
	l.clk.AfterFunc(time.Duration(bits/l.cfg.Rate), l.txDone)
}

func (l *Link) armWake(now time.Time) {
	t, ok := l.cfg.Qdisc.NextReady(now)
	if !ok {
		return
	}
	if l.wake != nil {
		if !l.wakeAt.After(t) {
			return // already due no later
		}
		l.wake.Stop()
	}
	// A qdisc that says "ready now" yet refused Dequeue would make a
	// zero-delay loop; wait a nanosecond instead.
	d := max(t.Sub(now), time.Nanosecond)
	l.wake, l.wakeAt = l.clk.AfterFunc(d, l.wakeUp), now.Add(d)
}

func (l *Link) onWake() {
	l.wake = nil
	if !l.busy {
		l.pull()
	}
}

func (l *Link) onTxDone() {
	p := l.cur
	l.busy, l.cur = false, nil
	l.stats.Sent++
	l.stats.SentBytes += uint64(p.Len)
	// Start the next packet before handing this one on: its first bit
	// leaves the instant this one's last bit did.
	l.pull()
	if l.cfg.Loss != nil && l.cfg.Loss.Lose(p) {
		l.stats.Lost++
		l.stats.LostBytes += uint64(p.Len)
		l.drop(p, DropLost)
		return
	}
	if l.cfg.Delay == 0 {
		l.hand(p)
		return
	}
	l.pipe.push(inFlight{p: p, at: l.clk.Now().Add(l.cfg.Delay)})
	if !l.armed {
		l.armed = true
		l.clk.AfterFunc(l.cfg.Delay, l.deliver)
	}
}

func (l *Link) onDeliver() {
	l.armed = false
	now := l.clk.Now()
	for l.pipe.n > 0 && !l.pipe.head().at.After(now) {
		l.hand(l.pipe.pop())
	}
	if l.pipe.n > 0 {
		l.armed = true
		l.clk.AfterFunc(l.pipe.head().at.Sub(now), l.deliver)
	}
}

func (l *Link) hand(p *Packet) {
	l.stats.Delivered++
	l.stats.DeliveredBytes += uint64(p.Len)
	l.cfg.Deliver(p)
}

// wire is a growable ring of packets in flight: it grows to the
// bandwidth-delay product once and is reused after.
type wire struct {
	buf  []inFlight // len is a power of two
	h, n int
}

func (w *wire) push(f inFlight) {
	if w.n == len(w.buf) {
		buf := make([]inFlight, max(16, 2*len(w.buf)))
		for i := range w.n {
			buf[i] = w.buf[(w.h+i)&(len(w.buf)-1)]
		}
		w.buf, w.h = buf, 0
	}
	w.buf[(w.h+w.n)&(len(w.buf)-1)] = f
	w.n++
}

func (w *wire) head() *inFlight { return &w.buf[w.h] }

func (w *wire) pop() *Packet {
	p := w.buf[w.h].p
	w.buf[w.h] = inFlight{}
	w.h = (w.h + 1) & (len(w.buf) - 1)
	w.n--
	return p
}
