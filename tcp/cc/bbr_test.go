package cc

import (
	"math"
	"testing"
	"time"
)

// bbrDriver feeds BBR synthetic rate samples the way tcp_rate.c would
// produce them on a path of a given delivery rate: each ACK delivers one
// segment, one round trip is perRound ACKs spread over rtt, and each
// sample covers the last round (PriorDelivered one round back, so a new
// round starts every perRound ACKs). Delivered starts at 1000 so that
// the first round's PriorDelivered does not go below zero.
type bbrDriver struct {
	t *testing.T
	b *BBR
	c *Conn
}

func newBBRDriver(t *testing.T, seed uint64) *bbrDriver {
	a, err := New("bbr")
	if err != nil {
		t.Fatal(err)
	}
	c := &Conn{Cwnd: 10, Ssthresh: InfiniteSsthresh, CwndClamp: 1 << 20, MSS: 1000, Now: t0, Seed: seed, Delivered: 1000}
	a.Init(c)
	return &bbrDriver{t: t, b: a.(*BBR), c: c}
}

type bbrRound struct {
	perRound int           // ACKs (= segments delivered) per round trip
	rate     float64       // delivery rate the samples measure, segments/s
	rtt      time.Duration // RTT of every sample
	inflight uint32        // in flight after each ACK (and before)
	losses   uint32        // segments marked lost on the round's last ACK
}

// round runs one round trip; stop, if set, ends it early when true.
func (d *bbrDriver) round(r bbrRound, stop func() bool) {
	c := d.c
	step := r.rtt / time.Duration(r.perRound)
	for i := range r.perRound {
		c.Now = c.Now.Add(step)
		c.Delivered++
		c.InFlight = r.inflight
		c.SRTT = r.rtt
		rs := RateSample{
			Delivered:      int64(r.perRound),
			Interval:       time.Duration(float64(r.perRound) / r.rate * float64(time.Second)),
			PriorDelivered: c.Delivered - uint64(r.perRound),
			RTT:            r.rtt,
			AckedSacked:    1,
			PriorInFlight:  r.inflight,
		}
		if i == r.perRound-1 && r.losses > 0 {
			rs.Losses = r.losses
			c.Lost += uint64(r.losses)
		}
		c.AppLimitedMark = 0
		d.b.Control(c, &rs)
		if c.Cwnd == 0 || c.Cwnd > c.CwndClamp {
			d.t.Fatalf("cwnd %d out of range", c.Cwnd)
		}
		if stop != nil && stop() {
			return
		}
	}
}

// toProbeBW runs STARTUP at a doubling rate, then a plateau at rate,
// then drains; it returns the plateau round at which DRAIN began.
func (d *bbrDriver) toProbeBW(rate float64, rtt time.Duration) int {
	d.t.Helper()
	bdp := uint32(rate * rtt.Seconds())
	for i := range 5 {
		d.round(bbrRound{perRound: 20, rate: rate / float64(int(1)<<(5-i)), rtt: rtt, inflight: 3 * bdp}, nil)
		if d.b.Mode() != BBRStartup {
			d.t.Fatalf("left STARTUP at growth round %d while the rate doubled", i)
		}
	}
	drainAt := 0
	for p := 1; p <= 10 && drainAt == 0; p++ {
		d.round(bbrRound{perRound: 20, rate: rate, rtt: rtt, inflight: 3 * bdp}, func() bool {
			return d.b.Mode() != BBRStartup
		})
		if d.b.Mode() == BBRDrain {
			drainAt = p
		}
	}
	if drainAt == 0 {
		d.t.Fatalf("still in %v after 10 plateau rounds", d.b.Mode())
	}
	return drainAt
}

const bbrTestRate = 1000.0 // segments/s (8 Mbit/s at 1000 B)

func TestBBRStartupDrainProbeBW(t *testing.T) {
	rtt := 40 * time.Millisecond
	d := newBBRDriver(t, 1)
	if d.b.PacingGain() != bbrHighGain || math.Abs(float64(bbrHighGain)/256-2/math.Ln2) > 0.01 {
		t.Fatalf("STARTUP gain %d/256, want 2/ln2", d.b.PacingGain())
	}
	drainAt := d.toProbeBW(bbrTestRate, rtt)
	// Full pipe: the plateau's first round still doubled the rate; the
	// three after it grew less than 25 %, so DRAIN begins in the fourth.
	if drainAt != 4 {
		t.Fatalf("DRAIN at plateau round %d, want 4 (1 growth round + 3 flat)", drainAt)
	}
	if g := float64(d.b.PacingGain()) / 256; math.Abs(g-1/2.885) > 0.01 {
		t.Fatalf("DRAIN pacing gain %.3f, want 1/2.885", g)
	}
	bdp := uint32(bbrTestRate * rtt.Seconds()) // 40
	if d.c.Ssthresh < bdp || d.c.Ssthresh > bdp+10 {
		t.Fatalf("ssthresh at DRAIN %d, want about one BDP (%d)", d.c.Ssthresh, bdp)
	}
	// Queue still there (inflight above BDP + budget): stay in DRAIN.
	d.round(bbrRound{perRound: 20, rate: bbrTestRate, rtt: rtt, inflight: bdp + 12}, nil)
	if d.b.Mode() != BBRDrain {
		t.Fatalf("left DRAIN with inflight %d > BDP %d", bdp+12, bdp)
	}
	d.round(bbrRound{perRound: 20, rate: bbrTestRate, rtt: rtt, inflight: bdp}, nil)
	if d.b.Mode() != BBRProbeBW {
		t.Fatalf("mode %v with inflight at the BDP, want probe_bw", d.b.Mode())
	}
	bw, lt := d.b.Bandwidth(d.c.MSS)
	if lt || math.Abs(bw-bbrTestRate*1000) > 1e-4*bbrTestRate*1000 { // fixed point
		t.Fatalf("bw %.0f B/s (lt %v), want %.0f", bw, lt, bbrTestRate*1000)
	}
	if d.b.MinRTT() != rtt {
		t.Fatalf("min RTT %v, want %v", d.b.MinRTT(), rtt)
	}
	// Pacing = gain × bw, 1 % below (pacing margin); cwnd = 2 × BDP + budget.
	want := float64(d.b.PacingGain()) / 256 * bw * 0.99
	if math.Abs(d.c.PacingRate-want) > 0.001*want {
		t.Fatalf("pacing %.0f B/s, want gain × bw = %.0f", d.c.PacingRate, want)
	}
	if d.b.CwndGain() != 2*256 {
		t.Fatalf("PROBE_BW cwnd gain %d/256, want 2", d.b.CwndGain())
	}
}

// The full-pipe test compares with the bandwidth at the last 25 % jump,
// not the previous round: 1.3× per round keeps STARTUP going, 1.05× per
// round is 1.16× after 3 rounds and ends it.
func TestBBRStartupThreshold(t *testing.T) {
	rtt := 20 * time.Millisecond
	for _, tc := range []struct {
		growth float64
		leaves bool
	}{{1.3, false}, {1.05, true}} {
		d := newBBRDriver(t, 1)
		rate := 100.0
		for range 8 {
			d.round(bbrRound{perRound: 10, rate: rate, rtt: rtt, inflight: 50}, nil)
			rate *= tc.growth
		}
		if left := d.b.Mode() != BBRStartup; left != tc.leaves {
			t.Errorf("growth %.1f× per round: left STARTUP %v, want %v", tc.growth, left, tc.leaves)
		}
	}
}

func TestBBRGainCycle(t *testing.T) {
	rtt := 40 * time.Millisecond
	d := newBBRDriver(t, 7)
	d.toProbeBW(bbrTestRate, rtt)
	bdp := uint32(bbrTestRate * rtt.Seconds())
	d.round(bbrRound{perRound: 20, rate: bbrTestRate, rtt: rtt, inflight: bdp}, nil)
	if d.b.Mode() != BBRProbeBW {
		t.Fatalf("mode %v", d.b.Mode())
	}
	// Walk 3 cycles, one ACK per ms, inflight high enough that the 1.25
	// phase reaches its target; each phase must last at least min RTT.
	idx, since := d.b.cycleIdx, d.c.Now
	var seen []uint32
	for len(seen) < 3*bbrCycleLen {
		d.c.Now = d.c.Now.Add(time.Millisecond)
		d.c.Delivered++
		d.c.InFlight = 2 * bdp
		rs := RateSample{Delivered: 40, Interval: rtt, PriorDelivered: d.c.Delivered - 40, RTT: rtt, AckedSacked: 1, PriorInFlight: 2 * bdp}
		d.b.Control(d.c, &rs)
		if d.b.cycleIdx != idx {
			if d.b.cycleIdx != (idx+1)%bbrCycleLen {
				t.Fatalf("phase %d followed by %d", idx, d.b.cycleIdx)
			}
			if el := d.c.Now.Sub(since); len(seen) > 0 && el <= rtt {
				t.Fatalf("phase %d lasted %v, want more than min RTT %v", idx, el, rtt)
			}
			idx, since = d.b.cycleIdx, d.c.Now
			seen = append(seen, d.b.PacingGain())
		}
	}
	// The gains, from wherever the cycle started, are a rotation of
	// 1.25, 0.75, 1 ×6.
	start := -1
	for i, g := range seen[:bbrCycleLen] {
		if g == 320 {
			start = i
		}
	}
	if start < 0 {
		t.Fatalf("no 1.25 phase in %v", seen)
	}
	for i := range 2 * bbrCycleLen {
		want := []uint32{320, 192, 256, 256, 256, 256, 256, 256}[i%bbrCycleLen]
		if seen[start+i] != want {
			t.Fatalf("gain sequence %v, want a rotation of 320,192,256×6", seen)
		}
	}
}

func TestBBRFirstPhaseIsRandomButNeverDrain(t *testing.T) {
	phases := map[int]bool{}
	for seed := range uint64(40) {
		b := &BBR{}
		c := &Conn{Cwnd: 10, CwndClamp: 1000, MSS: 1000, Now: t0, Seed: seed}
		b.Init(c)
		b.resetProbeBWMode()
		if b.cycleIdx == 1 {
			t.Fatalf("seed %d: PROBE_BW started in the 0.75 phase", seed)
		}
		phases[b.cycleIdx] = true
		// Deterministic: the same seed gives the same phase.
		b2 := &BBR{}
		b2.Init(c)
		b2.resetProbeBWMode()
		if b2.cycleIdx != b.cycleIdx {
			t.Fatalf("seed %d gave phases %d and %d", seed, b.cycleIdx, b2.cycleIdx)
		}
	}
	if len(phases) < 4 {
		t.Fatalf("only phases %v over 40 seeds", phases)
	}
}

func TestBBRProbeRTT(t *testing.T) {
	rtt := 40 * time.Millisecond
	d := newBBRDriver(t, 3)
	d.toProbeBW(bbrTestRate, rtt)
	bdp := uint32(bbrTestRate * rtt.Seconds())
	d.round(bbrRound{perRound: 20, rate: bbrTestRate, rtt: rtt, inflight: bdp}, nil)
	minStamp := d.b.minRTTStamp
	// RTT samples above the minimum (a standing queue) for 10 s.
	higher := 50 * time.Millisecond
	entered := time.Time{}
	for d.c.Now.Sub(minStamp) < 11*time.Second && entered.IsZero() {
		d.round(bbrRound{perRound: 20, rate: bbrTestRate, rtt: higher, inflight: 2 * bdp}, func() bool {
			return d.b.Mode() == BBRProbeRTT
		})
		if d.b.Mode() == BBRProbeRTT {
			entered = d.c.Now
		}
	}
	if entered.IsZero() {
		t.Fatal("no PROBE_RTT after 11 s without a new min RTT")
	}
	if el := entered.Sub(minStamp); el < 10*time.Second || el > 10*time.Second+higher {
		t.Fatalf("PROBE_RTT after %v, want 10 s", el)
	}
	if d.c.Cwnd > 4 {
		t.Fatalf("cwnd %d in PROBE_RTT, want at most 4", d.c.Cwnd)
	}
	if d.c.AppLimitedMark == 0 {
		t.Fatal("PROBE_RTT did not mark its samples app-limited")
	}
	prior := d.b.priorCwnd
	// At the floor: at least 200 ms and one round, then back to PROBE_BW.
	floor := time.Time{}
	for d.b.Mode() == BBRProbeRTT && d.c.Now.Sub(entered) < time.Second {
		d.round(bbrRound{perRound: 4, rate: 100, rtt: rtt, inflight: 4}, func() bool {
			if floor.IsZero() && !d.b.probeRTTDoneStamp.IsZero() {
				floor = d.c.Now
			}
			return d.b.Mode() != BBRProbeRTT
		})
	}
	if d.b.Mode() != BBRProbeBW {
		t.Fatalf("mode %v after PROBE_RTT, want probe_bw", d.b.Mode())
	}
	if el := d.c.Now.Sub(floor); el < 200*time.Millisecond || el > 200*time.Millisecond+rtt {
		t.Fatalf("PROBE_RTT at the floor for %v, want 200 ms", el)
	}
	if d.c.Cwnd < prior {
		t.Fatalf("cwnd %d after PROBE_RTT, want the saved %d restored", d.c.Cwnd, prior)
	}
	if d.b.MinRTT() != rtt {
		t.Fatalf("min RTT %v after the probe, want the fresh %v", d.b.MinRTT(), rtt)
	}
}

// Under a token-bucket policer, rate samples still show the burst rate
// (the max filter holds 1000 segments/s) while deliveries over many
// rounds run at the policed 250 segments/s with 30 % loss: after two
// consistent lossy intervals BBR switches to lt_bw at gain 1, and drops
// it again after 48 rounds.
func TestBBRLongTermBandwidthUnderPolicer(t *testing.T) {
	rtt := 40 * time.Millisecond
	for _, tc := range []struct {
		losses  uint32
		engages bool
	}{{3, true}, {1, false}} {
		d := newBBRDriver(t, 5)
		d.toProbeBW(bbrTestRate, rtt)
		d.round(bbrRound{perRound: 20, rate: bbrTestRate, rtt: rtt, inflight: 40}, nil)
		rounds := 0
		for ; rounds < 30 && !d.b.ltUseBW; rounds++ {
			// 10 delivered per 40 ms round = 250 segments/s, losses at the end.
			d.round(bbrRound{perRound: 10, rate: bbrTestRate, rtt: rtt, inflight: 40, losses: tc.losses}, nil)
		}
		if d.b.ltUseBW != tc.engages {
			t.Fatalf("%d lost per 10 delivered: lt_bw in use %v after %d rounds, want %v", tc.losses, d.b.ltUseBW, rounds, tc.engages)
		}
		if !tc.engages {
			continue
		}
		if rounds > 12 {
			t.Fatalf("lt_bw took %d rounds, want two 4-round intervals", rounds)
		}
		bw, lt := d.b.Bandwidth(d.c.MSS)
		if !lt || math.Abs(bw-250e3) > 0.05*250e3 {
			t.Fatalf("bw %.0f B/s (lt %v), want the policed 250000", bw, lt)
		}
		d.round(bbrRound{perRound: 10, rate: bbrTestRate, rtt: rtt, inflight: 40, losses: tc.losses}, nil)
		if d.b.PacingGain() != bbrUnit || math.Abs(d.c.PacingRate-0.99*bw) > 0.01*bw {
			t.Fatalf("policed: gain %d pacing %.0f, want gain 1 at lt_bw %.0f", d.b.PacingGain(), d.c.PacingRate, bw)
		}
		// 48 rounds later the long-term estimate expires.
		for range 48 {
			d.round(bbrRound{perRound: 10, rate: bbrTestRate, rtt: rtt, inflight: 40}, nil)
		}
		if d.b.ltUseBW {
			t.Fatal("lt_bw still in use after 48 rounds")
		}
	}
}

func TestBBRRecoveryConservesPackets(t *testing.T) {
	rtt := 40 * time.Millisecond
	d := newBBRDriver(t, 2)
	d.toProbeBW(bbrTestRate, rtt)
	d.round(bbrRound{perRound: 20, rate: bbrTestRate, rtt: rtt, inflight: 40}, nil)
	before := d.c.Cwnd
	d.c.Ssthresh = d.b.SSThresh(d.c)
	d.b.SetPhase(d.c, Recovery)
	d.c.Phase = Recovery
	d.c.Now = d.c.Now.Add(time.Millisecond)
	d.c.Delivered++
	d.c.InFlight = 30
	rs := RateSample{Delivered: 20, Interval: rtt / 2, PriorDelivered: d.c.Delivered - 1, RTT: rtt, AckedSacked: 1, PriorInFlight: 32, Losses: 1}
	d.b.Control(d.c, &rs)
	if d.c.Cwnd != 31 { // in flight + acked
		t.Fatalf("cwnd %d on entering recovery, want inflight+acked 31", d.c.Cwnd)
	}
	d.c.Phase = Open
	d.b.SetPhase(d.c, Open)
	d.c.Delivered++
	rs.PriorDelivered = d.c.Delivered - 1
	rs.Losses = 0
	d.b.Control(d.c, &rs)
	if d.c.Cwnd < before {
		t.Fatalf("cwnd %d after recovery, want the saved %d back", d.c.Cwnd, before)
	}
}

func TestMinmaxWindowedMax(t *testing.T) {
	var m minmax
	m.reset(0, 0)
	m.runningMax(10, 1, 100)
	for r := uint32(2); r <= 11; r++ {
		if got := m.runningMax(10, r, 50); got != 100 {
			t.Fatalf("round %d: max %d, want 100 held for 10 rounds", r, got)
		}
	}
	// 100 was set at round 1; by round 12 it is out of the window.
	if got := m.runningMax(10, 12, 50); got != 50 {
		t.Fatalf("round 12: max %d, want the old peak expired", got)
	}
}

// NoLongTermBW (ns-3's TcpBbr has no policer sampler) keeps BBR on its
// max filter under the policer pattern that engages lt_bw by default.
func TestBBRNoLongTermBW(t *testing.T) {
	rtt := 40 * time.Millisecond
	b := &BBR{Params: BBRParams{NoLongTermBW: true}}
	c := &Conn{Cwnd: 10, Ssthresh: InfiniteSsthresh, CwndClamp: 1 << 20, MSS: 1000, Now: t0, Seed: 5, Delivered: 1000}
	b.Init(c)
	d := &bbrDriver{t: t, b: b, c: c}
	d.toProbeBW(bbrTestRate, rtt)
	for range 30 {
		d.round(bbrRound{perRound: 10, rate: bbrTestRate, rtt: rtt, inflight: 40, losses: 3}, nil)
	}
	if bw, lt := b.Bandwidth(c.MSS); lt || math.Abs(bw-bbrTestRate*1000) > 1e-4*bbrTestRate*1000 {
		t.Fatalf("bw %.0f (lt %v), want the max filter's %.0f", bw, lt, bbrTestRate*1000)
	}
}
