package cc

import (
	"testing"
	"time"
)

// ackLoop returns a function that delivers one ACK to a (warmed-up)
// connection the way the sender does: PktsAcked, then Control for a
// Controller or CongAvoid otherwise, with a loss every 1000 ACKs.
func ackLoop(tb testing.TB, name string) func() {
	a, err := New(name)
	if err != nil {
		tb.Fatal(err)
	}
	c := &Conn{Cwnd: 10, Ssthresh: InfiniteSsthresh, CwndClamp: 1 << 16, MSS: 1448, Now: t0, ECN: true, Delivered: 1000}
	a.Init(c)
	ctl, isCtl := a.(Controller)
	rs := RateSample{Delivered: 100, Interval: 40 * time.Millisecond, RTT: 40 * time.Millisecond, AckedSacked: 1}
	n := 0
	return func() {
		n++
		c.Now = c.Now.Add(50 * time.Microsecond)
		c.Delivered++
		c.SndUna += 1448
		c.SndNxt = c.SndUna + c.Cwnd*1448
		c.InFlight = c.Cwnd
		a.PktsAcked(c, AckSample{Acked: 1, RTT: 40*time.Millisecond + time.Duration(n%7)*time.Millisecond, ECE: n%13 == 0, InFlight: c.Cwnd})
		if isCtl {
			rs.PriorDelivered = c.Delivered - 100
			rs.PriorInFlight = c.Cwnd
			ctl.Control(c, &rs)
		} else {
			a.CongAvoid(c, 1)
		}
		if n%1000 == 0 {
			c.Ssthresh = a.SSThresh(c)
			c.Cwnd = max(c.Ssthresh, 1)
		}
	}
}

// The per-ACK path is a hot path: no algorithm may allocate on it.
func TestPerACKPathDoesNotAllocate(t *testing.T) {
	for _, name := range Names() {
		step := ackLoop(t, name)
		for range 5000 {
			step()
		}
		if n := testing.AllocsPerRun(2000, step); n != 0 {
			t.Errorf("%s: %.1f allocations per ACK", name, n)
		}
	}
}

// BenchmarkAck is the cost of one ACK in each algorithm; Reno, the
// simplest, is the baseline to read the others against in the same run.
func BenchmarkAck(b *testing.B) {
	for _, name := range Names() {
		b.Run(name, func(b *testing.B) {
			step := ackLoop(b, name)
			b.ReportAllocs()
			for b.Loop() {
				step()
			}
		})
	}
}
