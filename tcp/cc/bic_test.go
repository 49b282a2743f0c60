package cc

import (
	"testing"
	"time"
)

// After a loss at Wmax = 1000 (cut to 799), BIC's growth per RTT is the
// binary search step: min(16, (Wmax − cwnd)/4) while far, shrinking as
// the window closes on Wmax, then slow probing past it, then faster.
//
// The kernel scales each step by 16/delayed_ack, its packets-per-ACK
// estimate; with one ACK per segment that EWMA, started at 32, sticks at
// 31 in integer arithmetic (31 += 1 − 31>>4), so a Linux BIC sender grows
// 32/31·… ≈ 1.94× the nominal step. We keep the kernel's arithmetic and
// expect its numbers.
func bicKernelStep(w uint32, nominal uint32) float64 {
	cnt := max(((w/nominal)<<4)/31, 1)
	return float64(w) / float64(cnt)
}
func TestBICBinarySearchIncrease(t *testing.T) {
	rtt := 50 * time.Millisecond
	p := newPipe(t, "bic", 1000)
	p.c.Ssthresh = 500
	p.round(rtt) // settle the packets-per-ACK estimate at 1 (one ACK per segment)
	for range 5 {
		p.round(rtt)
	}
	p.c.Cwnd = 1000
	p.loss()
	if p.c.Cwnd != 1000*819/1024 {
		t.Fatalf("cwnd %d after loss, want %d", p.c.Cwnd, 1000*819/1024)
	}
	const wmax = 1000
	sawBinary := false
	for r := 0; p.c.Cwnd < wmax-4; r++ {
		w := p.round(rtt)
		grew := int(p.c.Cwnd) - int(w)
		dist := (wmax - int(w)) / 4
		if dist <= 1 {
			break
		}
		// The step shrinks as the window grows within the round: the
		// growth lies between the steps at the round's end and start.
		hi := bicKernelStep(w, uint32(min(dist, 16)))
		lo := hi
		if endDist := (wmax - int(p.c.Cwnd)) / 4; endDist > 1 {
			lo = bicKernelStep(p.c.Cwnd, uint32(min(endDist, 16)))
		} else {
			lo = 0
		}
		if float64(grew) < lo-2 || float64(grew) > hi+2 {
			t.Fatalf("round %d at cwnd %d (dist %d): grew %d, want %.1f..%.1f", r, w, dist, grew, lo, hi)
		}
		if dist < 16 {
			sawBinary = true
		}
		if r > 100 {
			t.Fatal("no convergence to Wmax in 100 RTTs")
		}
	}
	if !sawBinary {
		t.Fatal("never in the binary-search region")
	}
	// Near Wmax: at most a fifth of a segment per RTT... (cnt = 5 cwnd)
	start := p.c.Cwnd
	for range 5 {
		p.round(rtt)
	}
	if grew := p.c.Cwnd - start; grew > 3 {
		t.Fatalf("grew %d in 5 RTTs at Wmax, want about 2 (plateau)", grew)
	}
	// Past Wmax + 4 it probes faster: (cwnd − Wmax)/3 per RTT, up to 16.
	p.c.Cwnd = wmax + 24
	w := p.round(rtt)
	// The step grows with the distance past Wmax within the round.
	probe := func(w uint32) float64 { return float64(w) / float64(max(((w*3/(w-wmax))<<4)/31, 1)) }
	if grew, lo, hi := float64(p.c.Cwnd-w), probe(w), probe(p.c.Cwnd); grew < lo-2 || grew > hi+2 {
		t.Fatalf("max probing at Wmax+24 grew %.0f, want %.1f..%.1f", grew, lo, hi)
	}
}

func TestBICRenoBelowLowWindowAndFastConvergence(t *testing.T) {
	p := newPipe(t, "bic", 12)
	p.c.Ssthresh = 2
	if got := p.a.SSThresh(p.c); got != 6 {
		t.Fatalf("ssthresh %d at 12, want Reno's 6", got)
	}
	q := newPipe(t, "bic", 1000)
	q.c.Ssthresh = 2
	q.loss()
	q.c.Cwnd = 900
	q.loss()
	if got := q.a.(*BIC).lastMaxCwnd; got != 900*(1024+819)/2048 {
		t.Fatalf("Wmax %d after a loss below it, want %d", got, 900*(1024+819)/2048)
	}
}
