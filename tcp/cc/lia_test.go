package cc

import (
	"math"
	"testing"
	"time"
)

func TestLIAAlphaOfOneIsReno(t *testing.T) {
	g := NewLIAGroup()
	a := g.New()
	c := &Conn{Cwnd: 10, Ssthresh: 5, CwndClamp: 1 << 20, SRTT: 50 * time.Millisecond}
	a.Init(c)
	if got := g.Alpha(); math.Abs(got-1) > 1e-9 {
		t.Fatalf("alpha of one subflow = %v, want 1", got)
	}
	r := &Conn{Cwnd: 10, Ssthresh: 5, CwndClamp: 1 << 20}
	for range 100 {
		a.CongAvoid(c, 1)
		r.CongAvoidAI(r.Cwnd, 1)
	}
	if c.Cwnd != r.Cwnd {
		t.Fatalf("lone LIA cwnd %d, Reno %d", c.Cwnd, r.Cwnd)
	}
}

// Two equal subflows: α = 2·(w/r²)/(2w/r)² = 1/(2w)·w... = 1/2 for equal
// windows, so each grows by α/total = 1/(4w) per ack: the pair together
// grows at most as one Reno flow on the best path (RFC 6356 goal 1).
func TestLIATwoEqualSubflowsGrowAsOne(t *testing.T) {
	g := NewLIAGroup()
	a, b := g.New(), g.New()
	ca := &Conn{Cwnd: 20, Ssthresh: 5, CwndClamp: 1 << 20, SRTT: 100 * time.Millisecond}
	cb := &Conn{Cwnd: 20, Ssthresh: 5, CwndClamp: 1 << 20, SRTT: 100 * time.Millisecond}
	a.Init(ca)
	b.Init(cb)
	if got := g.Alpha(); math.Abs(got-0.5) > 1e-9 {
		t.Fatalf("alpha = %v, want 0.5", got)
	}
	// One Reno window of acks on each: Reno would add one segment to each.
	for range 80 {
		a.CongAvoid(ca, 1)
		b.CongAvoid(cb, 1)
	}
	grown := int(ca.Cwnd+cb.Cwnd) - 40
	if grown < 1 || grown > 3 {
		t.Fatalf("two coupled subflows grew by %d segments over 80 acks each, want about 2 (one Reno flow of 40: 2)", grown)
	}
}

func TestLIAPrefersLowRTTSubflow(t *testing.T) {
	g := NewLIAGroup()
	a, b := g.New(), g.New()
	ca := &Conn{Cwnd: 20, Ssthresh: 5, CwndClamp: 1 << 20, SRTT: 40 * time.Millisecond}
	cb := &Conn{Cwnd: 20, Ssthresh: 5, CwndClamp: 1 << 20, SRTT: 160 * time.Millisecond}
	a.Init(ca)
	b.Init(cb)
	// α = 40 · (20/0.04²) / (20/0.04 + 20/0.16)² = 40·12500/625² = 1.28
	if got := g.Alpha(); math.Abs(got-1.28) > 1e-9 {
		t.Fatalf("alpha = %v, want 1.28", got)
	}
	if s := a.SSThresh(ca); s != 10 || g.TotalCwnd() != 30 {
		t.Fatalf("ssthresh %d total %d, want 10 and 30", s, g.TotalCwnd())
	}
}
