package cc

import (
	"testing"
	"time"
)

// bottleneckRTT is a fluid bottleneck of rate segments/s behind a base
// RTT: the window beyond the BDP queues and adds delay.
func bottleneckRTT(cwnd uint32, base time.Duration, rate float64) (time.Duration, float64) {
	bdp := rate * base.Seconds()
	q := max(float64(cwnd)-bdp, 0)
	return base + time.Duration(q/rate*float64(time.Second)), q
}

// On a bottleneck Vegas settles with alpha ≤ diff ≤ beta segments
// queued, from any window below the BDP. (Starting above it, Vegas never
// sees the base RTT and takes the queue for propagation delay: the known
// base-RTT flaw, which Linux shares.)
func TestVegasHoldsDiffBetweenAlphaAndBeta(t *testing.T) {
	base := 50 * time.Millisecond
	const rate = 1000.0 // 50-segment BDP
	for _, start := range []uint32{10, 30, 48} {
		p := newPipe(t, "vegas", start)
		p.c.Ssthresh = 2 // congestion avoidance from the start
		if start == 10 {
			p.c.Ssthresh = InfiniteSsthresh // and through slow start
		}
		var queued float64
		for range 150 {
			rtt, _ := bottleneckRTT(p.c.Cwnd, base, rate)
			p.round(rtt)
			_, queued = bottleneckRTT(p.c.Cwnd, base, rate)
		}
		// Vegas's diff is cwnd·(rtt−base)/rtt·… ≈ the queue in segments.
		if queued < vegasAlpha-0.01 || queued > vegasBeta+0.01 {
			t.Errorf("start %d: %0.1f segments queued at cwnd %d, want between alpha %d and beta %d", start, queued, p.c.Cwnd, vegasAlpha, vegasBeta)
		}
		if p.c.InSlowStart() {
			t.Errorf("start %d: still in slow start at cwnd %d", start, p.c.Cwnd)
		}
	}
}

// Without a queue (RTT = base) Vegas grows by one segment per RTT.
func TestVegasGrowsLinearlyWithoutQueue(t *testing.T) {
	p := newPipe(t, "vegas", 20)
	p.c.Ssthresh = 2
	for range 10 {
		p.round(40 * time.Millisecond)
	}
	if p.c.Cwnd < 29 || p.c.Cwnd > 31 {
		t.Fatalf("cwnd %d after 10 RTTs from 20 at base RTT, want 30", p.c.Cwnd)
	}
	if got := p.a.(*Vegas).BaseRTT(); got != 40*time.Millisecond+time.Microsecond {
		t.Fatalf("base RTT %v", got)
	}
}
