package cc

import (
	"math"
	"testing"
	"time"
)

func TestCubicRootMatchesMath(t *testing.T) {
	for _, x := range []uint64{1, 7, 64, 1000, 75 << 30, 1 << 40, 123456789012} {
		got := float64(cubicRoot(x))
		want := math.Cbrt(float64(x))
		if math.Abs(got-want) > 1+0.01*want {
			t.Errorf("cubicRoot(%d) = %v, want %.1f", x, got, want)
		}
	}
}

// After a loss at Wmax the window follows W(t) = C(t−K)³ + Wmax with
// K = cbrt(Wmax(1−β)/C), t from the start of the epoch. The kernel aims
// one RTT ahead (t + delay_min) and reaches its target within an RTT, so
// the window at the start of each round tracks W(t) closely.
func TestCubicFollowsTheCubicCurve(t *testing.T) {
	const (
		wmax = 200.0
		c    = 0.4
		beta = 717.0 / 1024
	)
	rtt := 100 * time.Millisecond
	p := newPipe(t, "cubic", 200)
	p.c.Ssthresh = 100 // not in slow start
	// Delay samples in the first second of an epoch are discarded, so
	// seed delay_min before the loss.
	p.round(rtt)
	p.c.Cwnd = 200
	p.loss()
	if p.c.Cwnd != 140 { // 200·717/1024
		t.Fatalf("cwnd after loss %d, want 140", p.c.Cwnd)
	}
	k := math.Cbrt(wmax * (1 - beta) / c)
	start := p.c.Now
	worst := 0.0
	for p.c.Now.Sub(start) < time.Duration(1.6*k*float64(time.Second)) {
		el := p.c.Now.Sub(start).Seconds()
		want := c*math.Pow(el-k, 3) + wmax
		got := float64(p.c.Cwnd)
		if el > 0.2 { // the first round only starts the epoch
			worst = max(worst, math.Abs(got-want))
			if math.Abs(got-want) > 2+0.01*want {
				t.Fatalf("t=%.2fs: cwnd %.0f, W(t) %.1f (K %.2fs)", el, got, want, k)
			}
		}
		p.round(rtt)
	}
	t.Logf("K %.3fs, worst |cwnd − W(t)| %.2f segments", k, worst)
	// Past K the curve is convex: the window must exceed Wmax.
	if p.c.Cwnd <= 200 {
		t.Fatalf("cwnd %d after 1.6 K, want above Wmax 200", p.c.Cwnd)
	}
}

// With a short RTT the cubic curve is flatter than Reno's line, so CUBIC
// grows as the Reno-friendly estimate: 3(1−β)/(1+β) ≈ 0.53 segments per
// RTT from β·Wmax (RFC 9438 §4.3).
func TestCubicRenoFriendlyRegion(t *testing.T) {
	rtt := time.Millisecond
	p := newPipe(t, "cubic", 40)
	p.c.Ssthresh = 20
	p.round(rtt)
	p.c.Now = p.c.Now.Add(2 * time.Second) // leave the discard window
	p.round(rtt)
	p.c.Cwnd = 40
	p.loss()
	w0 := float64(p.c.Cwnd) // 28
	const rounds = 200
	for range rounds {
		p.round(rtt)
	}
	alpha := 3 * (1 - 717.0/1024) / (1 + 717.0/1024)
	want := w0 + alpha*rounds
	got := float64(p.c.Cwnd)
	// The cubic curve alone would still be below Wmax = 40 here.
	if math.Abs(got-want) > 0.08*want {
		t.Fatalf("cwnd %.0f after %d RTTs of 1 ms, want Reno-friendly %.1f", got, rounds, want)
	}
}

func TestCubicFastConvergence(t *testing.T) {
	p := newPipe(t, "cubic", 100)
	p.c.Ssthresh = 50
	a := p.a.(*Cubic)
	p.loss() // Wmax 100
	if a.lastMaxCwnd != 100 {
		t.Fatalf("Wmax %d, want 100", a.lastMaxCwnd)
	}
	p.c.Cwnd = 80 // lost again below the previous maximum
	p.loss()
	if want := uint32(80 * (1024 + 717) / 2048); a.lastMaxCwnd != want {
		t.Fatalf("Wmax %d after a loss below it, want %d (fast convergence)", a.lastMaxCwnd, want)
	}
	if p.c.Cwnd != 80*717/1024 {
		t.Fatalf("cwnd %d, want %d", p.c.Cwnd, 80*717/1024)
	}
}

// HyStart's delay detector: once the round's minimum RTT exceeds the
// base delay by max(4 ms, delay/8), slow start ends with ssthresh = cwnd.
func TestCubicHyStartDelayIncrease(t *testing.T) {
	p := newPipe(t, "cubic", 10)
	base := 40 * time.Millisecond
	// Slow start at the base RTT: no exit.
	for p.c.Cwnd < 32 {
		p.roundSparse(base)
	}
	if p.c.Ssthresh != InfiniteSsthresh {
		t.Fatalf("ssthresh %d set without a delay increase", p.c.Ssthresh)
	}
	// The queue builds: +6 ms > max(4 ms, 5 ms).
	p.roundSparse(base + 6*time.Millisecond)
	p.roundSparse(base + 6*time.Millisecond)
	if p.c.Ssthresh == InfiniteSsthresh || p.c.InSlowStart() {
		t.Fatalf("still in slow start at cwnd %d after a 6 ms delay increase", p.c.Cwnd)
	}
	// A rise below the threshold does not trigger.
	q := newPipe(t, "cubic", 10)
	for q.c.Cwnd < 64 {
		q.roundSparse(base + 3*time.Millisecond)
	}
	if q.c.Ssthresh != InfiniteSsthresh {
		t.Fatalf("HyStart fired on a 3 ms rise (threshold 5 ms) at cwnd %d", q.c.Ssthresh)
	}
}

// roundSparse is round with its ACKs spread over the whole RTT and more
// than 2 ms apart, so HyStart's ACK-train detector cannot fire.
func (p *pipe) roundSparse(rtt time.Duration) {
	w := p.c.Cwnd
	for range w {
		p.c.Now = p.c.Now.Add(max(rtt/time.Duration(w), 3*time.Millisecond))
		p.ack(1, rtt)
	}
}

// HyStart's ACK-train detector: closely spaced ACKs (≤ 2 ms) that span
// more than half the minimum delay mean the window fills the pipe.
func TestCubicHyStartAckTrain(t *testing.T) {
	p := newPipe(t, "cubic", 16)
	rtt := 20 * time.Millisecond
	p.round(rtt) // delay_min 20 ms; a round of 16 ACKs 1.25 ms apart
	// Next round: 32 ACKs 1 ms apart span 32 ms > 10 ms.
	w := p.c.Cwnd
	for range w {
		p.c.Now = p.c.Now.Add(time.Millisecond)
		p.ack(1, rtt)
		if !p.c.InSlowStart() {
			break
		}
	}
	if p.c.InSlowStart() {
		t.Fatalf("ACK train did not end slow start (cwnd %d)", p.c.Cwnd)
	}
	if p.c.Ssthresh < 16 || p.c.Ssthresh > 64 {
		t.Fatalf("ssthresh %d, want the cwnd at detection", p.c.Ssthresh)
	}
}

func TestCubicLossResetsAndUndo(t *testing.T) {
	p := newPipe(t, "cubic", 100)
	p.c.Ssthresh = 50
	p.loss()
	p.a.SetPhase(p.c, Loss)
	if a := p.a.(*Cubic); a.lastMaxCwnd != 0 || a.epochStarted {
		t.Fatal("RTO did not reset CUBIC's state")
	}
	p.c.Cwnd = 1
	if got := p.a.Undo(p.c); got != 100 {
		t.Fatalf("undo %d, want 100", got)
	}
}

// After an idle period the epoch moves forward by the idle time, so the
// window resumes on the curve where it left off (cubictcp_cwnd_event).
func TestCubicIdleShiftsEpoch(t *testing.T) {
	p := newPipe(t, "cubic", 100)
	p.c.Ssthresh = 50
	p.round(100 * time.Millisecond)
	p.c.Now = p.c.Now.Add(2 * time.Second)
	p.loss()
	p.round(100 * time.Millisecond)
	a := p.a.(*Cubic)
	before := a.epochStart
	p.c.LastSend = p.c.Now
	p.c.Now = p.c.Now.Add(3 * time.Second)
	p.a.Event(p.c, EventTxStart)
	if got := a.epochStart.Sub(before); got != 3*time.Second {
		t.Fatalf("epoch moved %v over 3 s idle, want 3 s", got)
	}
}

func TestHyStartAckDelayCushion(t *testing.T) {
	c := &Conn{Cwnd: 10, MSS: 1448, SRTT: 40 * time.Millisecond}
	// 2·10·1448 B / 40 ms = 724 kB/s: four 64 KB packets take 362 ms, capped.
	if got := hystartAckDelay(c); got != time.Millisecond {
		t.Fatalf("cushion %v at 724 kB/s, want the 1 ms cap", got)
	}
	c.Cwnd, c.SRTT = 100000, time.Millisecond // 290 GB/s
	if got := hystartAckDelay(c); got >= 10*time.Microsecond {
		t.Fatalf("cushion %v at 290 GB/s, want ≈ 1 µs", got)
	}
}

// Linux's module parameters, as CubicParams: each switches its part off.
func TestCubicParams(t *testing.T) {
	// tcp_friendliness=0: at a 1 ms RTT the window stays on the (flat)
	// cubic curve instead of the Reno line (≈ 134 after 200 RTTs).
	p := newPipeWith(&Cubic{Params: CubicParams{NoRenoFriendly: true}}, 40)
	p.c.Ssthresh = 20
	p.round(time.Millisecond)
	p.c.Now = p.c.Now.Add(2 * time.Second)
	p.round(time.Millisecond)
	p.c.Cwnd = 40
	p.loss()
	for range 200 {
		p.round(time.Millisecond)
	}
	k := math.Cbrt(40 * (1 - 717.0/1024) / 0.4)
	want := 0.4*math.Pow(0.2-k, 3) + 40 // W(0.2 s)
	if got := float64(p.c.Cwnd); math.Abs(got-want) > 3 {
		t.Fatalf("no Reno-friendliness: cwnd %.0f after 200 RTTs of 1 ms, want the cubic curve's %.1f", got, want)
	}

	// fast_convergence=0: Wmax is the window at the loss.
	q := newPipeWith(&Cubic{Params: CubicParams{NoFastConvergence: true}}, 100)
	q.c.Ssthresh = 50
	q.loss()
	q.c.Cwnd = 80
	q.loss()
	if got := q.a.(*Cubic).lastMaxCwnd; got != 80 {
		t.Fatalf("no fast convergence: Wmax %d, want 80", got)
	}

	// hystart=0 and hystart_detect=2 (delay only): the ACK train that ends
	// slow start by default does not.
	for _, params := range []CubicParams{{NoHyStart: true}, {HyStartDetect: hystartDelay}} {
		r := newPipeWith(&Cubic{Params: params}, 16)
		r.round(20 * time.Millisecond)
		for range r.c.Cwnd {
			r.c.Now = r.c.Now.Add(time.Millisecond)
			r.ack(1, 20*time.Millisecond)
		}
		if !r.c.InSlowStart() {
			t.Fatalf("%+v: ACK train ended slow start", params)
		}
	}
}

// NS3HyStart: ns-3 3.37's thresholds. An ACK train spanning 15 ms of a
// 20 ms minimum delay ends Linux's slow start (half the delay) but not
// ns-3's (the whole delay); a 6 ms rise of a 40 ms RTT ends Linux's
// (threshold 5 ms) but not ns-3's (40 ms), which a doubling does.
func TestCubicNS3HyStart(t *testing.T) {
	train := func(params CubicParams) bool {
		p := newPipeWith(&Cubic{Params: params}, 16)
		rtt := 20 * time.Millisecond
		p.round(rtt) // delay_min 20 ms
		for range 15 {
			p.c.Now = p.c.Now.Add(time.Millisecond)
			p.ack(1, rtt)
		}
		return p.c.InSlowStart()
	}
	if train(CubicParams{}) {
		t.Fatal("Linux HyStart: a 15 ms ACK train at delay_min 20 ms did not end slow start")
	}
	if !train(CubicParams{NS3HyStart: true}) {
		t.Fatal("ns-3 HyStart: a 15 ms ACK train at delay_min 20 ms ended slow start")
	}
	rise := func(params CubicParams, extra time.Duration) bool {
		p := newPipeWith(&Cubic{Params: params}, 10)
		base := 40 * time.Millisecond
		for p.c.Cwnd < 32 {
			p.roundSparse(base)
		}
		p.roundSparse(base + extra)
		p.roundSparse(base + extra)
		return p.c.InSlowStart()
	}
	if rise(CubicParams{}, 6*time.Millisecond) {
		t.Fatal("Linux HyStart: a 6 ms rise did not end slow start")
	}
	if !rise(CubicParams{NS3HyStart: true}, 6*time.Millisecond) {
		t.Fatal("ns-3 HyStart: a 6 ms rise of 40 ms ended slow start")
	}
	if rise(CubicParams{NS3HyStart: true}, 41*time.Millisecond) {
		t.Fatal("ns-3 HyStart: a 41 ms rise of 40 ms did not end slow start")
	}
}
