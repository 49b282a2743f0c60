package cc

import (
	"testing"
	"time"
)

// yeahOnPath runs YeAH on a fluid bottleneck (see bottleneckRTT): the
// first round at a window below the BDP teaches it the base RTT.
func yeahOnPath(t *testing.T, cwnd uint32, base time.Duration, rate float64) *pipe {
	p := newPipe(t, "yeah", 10)
	p.c.Ssthresh = 2
	p.round(base)
	p.round(base)
	p.c.Cwnd = cwnd
	p.sync()
	return p
}

// With no queue YeAH is Scalable: 1 % per RTT at large windows.
func TestYeAHFastModeIsScalable(t *testing.T) {
	base := 50 * time.Millisecond
	p := yeahOnPath(t, 1000, base, 1e6)
	for range 3 {
		w := p.round(base)
		if grew := p.c.Cwnd - w; grew < 9 || grew > 11 {
			t.Fatalf("fast mode at %d grew %d in an RTT, want 1 %% (10)", w, grew)
		}
	}
	if !p.a.(*YeAH).Fast() {
		t.Fatal("not in fast mode without a queue")
	}
	// A loss in fast mode with no queue removes only cwnd/8.
	w := p.c.Cwnd
	if got, want := p.a.SSThresh(p.c), w-w/8; got != want {
		t.Fatalf("ssthresh %d at %d, want %d (cwnd − cwnd/8)", got, w, want)
	}
}

// An RTT more than base/8 above the base, with a small queue: slow mode,
// Reno's one segment per RTT instead of Scalable's 1 %.
func TestYeAHSlowModeIsReno(t *testing.T) {
	base := 50 * time.Millisecond
	const rate = 10000.0 // 500-segment BDP
	p := yeahOnPath(t, 570, base, rate)
	var grew []uint32
	for range 4 {
		rtt, _ := bottleneckRTT(p.c.Cwnd, base, rate)
		w := p.round(rtt)
		grew = append(grew, p.c.Cwnd-w)
	}
	if p.a.(*YeAH).Fast() {
		t.Fatal("fast mode with RTT 14 % above base")
	}
	// The first round still ran in fast mode (the mode is decided at its end).
	for _, g := range grew[1:] {
		if g > 1 {
			t.Fatalf("slow-mode growth per RTT %v, want Reno's 1", grew)
		}
	}
}

// A queue above 80 segments: decongest at once by the queue estimate.
func TestYeAHDecongestsAQueue(t *testing.T) {
	base := 50 * time.Millisecond
	const rate = 10000.0
	p := yeahOnPath(t, 700, base, rate) // 200 queued, RTT 70 ms
	rtt, q := bottleneckRTT(p.c.Cwnd, base, rate)
	// The round's samples are judged when the ACK passes its right edge:
	// the first ACK after it.
	p.round(rtt)
	p.c.Now = p.c.Now.Add(rtt / 700)
	p.ack(1, rtt)
	if q != 200 || p.c.Cwnd < 495 || p.c.Cwnd > 510 {
		t.Fatalf("cwnd %d after a round with %.0f queued, want the 500-segment BDP", p.c.Cwnd, q)
	}
	if p.c.Ssthresh != p.c.Cwnd && p.c.Ssthresh+1 != p.c.Cwnd {
		t.Fatalf("ssthresh %d, want the decongested cwnd %d", p.c.Ssthresh, p.c.Cwnd)
	}
	if p.a.(*YeAH).Fast() {
		t.Fatal("fast mode right after decongestion")
	}
}
