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

// VegasParams.NS3: ns-3 3.37's TcpVegas. A loss lowers the threshold to
// one segment below the window (TcpVegas::GetSsThresh), not Reno's half;
// and diff is the queue over the round's RTT: 40 segments at a 50 ms RTT
// over a 40 ms base queue 8 (ns-3) or 10 (Linux), both above beta, while
// 24 segments at 44 ms queue 2 (ns-3: hold) or 2.4 → 2 (Linux: hold).
func TestVegasNS3(t *testing.T) {
	c := &Conn{Cwnd: 40, Ssthresh: InfiniteSsthresh, MSS: 1000}
	if got := (&Vegas{Params: VegasParams{NS3: true}}).SSThresh(c); got != 39 {
		t.Fatalf("ns-3 Vegas loss threshold %d at cwnd 40, want 39", got)
	}
	if got := (&Vegas{}).SSThresh(c); got != 20 {
		t.Fatalf("Linux Vegas loss threshold %d at cwnd 40, want 20", got)
	}
	c.Ssthresh = 30
	if got := (&Vegas{Params: VegasParams{NS3: true}}).SSThresh(c); got != 30 {
		t.Fatalf("ns-3 Vegas loss threshold %d at cwnd 40, ssthresh 30: want 30", got)
	}

	// Above ssthresh, once per round, the window shrinks by one when diff
	// > beta (4). 30 segments at 46.5 ms over a 40 ms base: ns-3's diff is
	// 30 − ⌊30·40/46.5⌋ = 5 (shrink), Linux's ⌊30·6.5/40⌋ = 4 (hold).
	round := func(params VegasParams, cwnd uint32, base, rtt time.Duration) uint32 {
		p := newPipeWith(&Vegas{Params: params}, cwnd)
		p.c.Ssthresh = 2
		p.roundSparse(base) // base RTT; also the first round's decision
		p.c.Cwnd = cwnd
		p.sync()
		v := p.a.(*Vegas)
		v.begSndNxt = p.c.SndNxt
		v.cntRTT, v.minRTT = 0, vegasNoRTT
		// One ACK past the round's right edge ends it.
		for range cwnd + 1 {
			p.c.Now = p.c.Now.Add(3 * time.Millisecond)
			p.ack(1, rtt)
		}
		return p.c.Cwnd
	}
	base := 40 * time.Millisecond
	if got := round(VegasParams{NS3: true}, 30, base, 46500*time.Microsecond); got != 29 {
		t.Fatalf("ns-3 Vegas: 30 segments at 46.5 ms over 40 ms: cwnd %d, want 29 (diff 5 > beta)", got)
	}
	if got := round(VegasParams{}, 30, base, 46500*time.Microsecond); got != 30 {
		t.Fatalf("Linux Vegas: 30 segments at 46.5 ms over 40 ms: cwnd %d, want 30 (diff 4 holds)", got)
	}
}
