package netsim

import (
	"time"
)

// The per-packet path of a Link costs what the simulator costs: every
// packet crossing a link is one event, so the time arithmetic and the
// scheduling around it are paid billions of times in an hour-long run at
// 10 Gbit/s. This file holds the pieces that make it cheap without
// changing a single result: on the virtual clock the time is the Sim's
// int64 nanoseconds, events the link never cancels are posted without a
// handle (no allocation), and serialisation is division-free for the
// packet length the link last carried.

// untimedQdisc marks a qdisc whose verdicts do not depend on the time it
// is given (DropTail): the link then does not build a time.Time for it.
type untimedQdisc interface{ untimed() }

func (*DropTail) untimed() {}

// now is the clock's time, and the same in ns since base. On the virtual
// clock both come from the Sim's int64 nanoseconds: base.Add(ns) is
// exactly the Sim's Now() (a time.Time without a monotonic reading is
// (seconds, nanoseconds), so the sum is the same value either way).
func (l *Link) now() (time.Time, int64) {
	if l.untimed && l.sim != nil { // kept small enough to inline
		return time.Time{}, l.mono.Now()
	}
	return l.timedNow()
}

func (l *Link) timedNow() (time.Time, int64) {
	if l.sim != nil {
		ns := l.mono.Now()
		return l.base.Add(time.Duration(ns)), ns
	}
	t := l.clk.Now()
	return t, int64(t.Sub(l.base))
}

// nowNs is now without the time.Time.
func (l *Link) nowNs() int64 {
	return l.mono.Now()
}

// post schedules f d ns from now. On the Sim it takes the same sequence
// number AfterFunc would, so the order of events is unchanged.
func (l *Link) post(d int64, f func()) {
	if l.sim != nil {
		l.sim.Post(time.Duration(d), f)
		return
	}
	l.clk.AfterFunc(time.Duration(d), f)
}

// serCache is Len·8·10⁹/Rate split once for one packet length:
// Len·tokensPerByte = q·Rate + r. With the remainder rem < Rate carried
// from the packet before, (Len·tokensPerByte + rem)/Rate is q plus 0 or 1,
// so a packet of the cached length costs an add and a compare instead of
// two 64-bit divisions. A link carries mostly one length (data one way,
// ACKs the other), so one entry is enough.
type serCache struct {
	n    int // the cached length; 0: none
	q, r int64
}

// serialise returns the packet's transmitter time in ns and the remainder
// (nanobits) to carry to the next packet: exactly
// ((n·tokensPerByte + rem) / rate, (n·tokensPerByte + rem) % rate).
func (c *serCache) serialise(n int, rem, rate int64) (int64, int64) {
	if n <= 0 || rem < 0 { // not a real packet (or one came before): the plain formula
		bits := int64(n)*tokensPerByte + rem
		return bits / rate, bits % rate
	}
	if n != c.n {
		bits := int64(n) * tokensPerByte
		c.n, c.q, c.r = n, bits/rate, bits%rate
	}
	q, r := c.q, c.r+rem
	if r >= rate {
		q++
		r -= rate
	}
	return q, r
}
