package mptcp

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

func sub(id int, cwnd, ssthresh uint32, space int, srtt, rto time.Duration, loss float64) Subflow {
	return Subflow{ID: id, Cwnd: cwnd, Ssthresh: ssthresh, Space: space, SRTT: srtt, RTO: rto, LossRate: loss, Usable: true}
}

func TestPolicySameStays(t *testing.T) {
	subs := []Subflow{sub(0, 1, 5, 0, 80*ms, 2*time.Second, 0.01), sub(1, 40, 20, 30, 80*ms, time.Second, 0.0)}
	if got := (Same{}).Pick(0, subs, nil); got != 0 {
		t.Fatalf("rtx-same picked %d, want the timed-out 0", got)
	}
}

const ms = time.Millisecond

func TestPolicyCwndSsthreshLossRate(t *testing.T) {
	subs := []Subflow{
		sub(0, 1, 30, 1, 80*ms, 2*time.Second, 0.05),
		sub(1, 12, 10, 0, 320*ms, time.Second, 0.01),
		sub(2, 20, 8, 4, 80*ms, time.Second, 0.02),
	}
	for _, c := range []struct {
		p    Policy
		want int
	}{{CwndPolicy{}, 2}, {SsthreshPolicy{}, 0}, {LossRatePolicy{}, 1}} {
		if got := c.p.Pick(0, subs, nil); got != c.want {
			t.Errorf("%s picked %d, want %d", c.p.Name(), got, c.want)
		}
	}
	// Unusable subflows are never picked, even when they would win.
	subs[2].Usable = false
	if got := (CwndPolicy{}).Pick(0, subs, nil); got != 1 {
		t.Errorf("rtx-cwnd with subflow 2 unusable picked %d, want 1", got)
	}
	// Ties go to the first.
	tie := []Subflow{sub(0, 1, 2, 0, ms, ms, 0), sub(1, 9, 7, 1, ms, ms, 0.1), sub(2, 9, 7, 1, ms, ms, 0.1)}
	if got := (CwndPolicy{}).Pick(0, tie, nil); got != 1 {
		t.Errorf("rtx-cwnd tie picked %d, want the first (1)", got)
	}
}

func TestPolicyASAPOnlyWindowSpace(t *testing.T) {
	subs := []Subflow{
		sub(0, 1, 30, 0, 80*ms, 2*time.Second, 0.05),
		sub(1, 12, 10, 3, 320*ms, time.Second, 0.01),
		sub(2, 20, 8, 0, 80*ms, time.Second, 0.02),
		sub(3, 20, 8, 5, 80*ms, time.Second, 0.02),
	}
	rng := rand.New(rand.NewPCG(1, 2))
	seen := map[int]int{}
	for range 400 {
		seen[(ASAP{}).Pick(0, subs, rng)]++
	}
	if len(seen) != 2 || seen[1] < 150 || seen[3] < 150 {
		t.Fatalf("rtx-asap picks %v: want only the subflows with space (1 and 3), about evenly", seen)
	}
	// No subflow has space: any usable one, at random.
	for i := range subs {
		subs[i].Space = 0
	}
	seen = map[int]int{}
	for range 400 {
		seen[(ASAP{}).Pick(0, subs, rng)]++
	}
	if len(seen) != 4 {
		t.Fatalf("rtx-asap without space picks %v: want all four", seen)
	}
}

// T_i as the reconstruction states it, term by term.
func TestDLCSExpectedDelivery(t *testing.T) {
	s := sub(0, 10, 10, 0, 200*ms, time.Second, 0.1)
	d, l, rto := 0.1, 0.1, 1.0
	want := (1-l)*d + l*(1-l)*(d+rto) + l*l*(1-l)*(d+2*rto) + l*l*l*(1-l)*(d+3*rto)
	if got := (DLCS{M: 3}).ExpectedDelivery(&s); math.Abs(got-want) > 1e-12 {
		t.Fatalf("T = %v, want %v", got, want)
	}
	s.LossRate = 0
	if got := (DLCS{M: 3}).ExpectedDelivery(&s); math.Abs(got-d) > 1e-12 {
		t.Fatalf("T without loss = %v, want the delay %v", got, d)
	}
}

func TestDLCSPicksLeastExpectedDelivery(t *testing.T) {
	p := DLCS{M: 3}
	// A short lossy path against a long clean one: 40 ms one-way at 10 %
	// with a 1 s RTO is T ≈ 0.036+0.09·1.04+... ≈ 0.14 s; 160 ms at 1 %
	// is ≈ 0.17 s: the short one wins although it loses more (RTX-LOSSRATE
	// would take the long one).
	subs := []Subflow{sub(0, 1, 5, 0, 320*ms, 2*time.Second, 0.01), sub(1, 5, 5, 2, 80*ms, time.Second, 0.10), sub(2, 30, 30, 9, 320*ms, time.Second, 0.01)}
	t0, t1, t2 := p.ExpectedDelivery(&subs[0]), p.ExpectedDelivery(&subs[1]), p.ExpectedDelivery(&subs[2])
	if !(t1 < t2 && t1 < t0) {
		t.Fatalf("T = %v %v %v: the test's premise (subflow 1 least) does not hold", t0, t1, t2)
	}
	if got := p.Pick(0, subs, nil); got != 1 {
		t.Fatalf("rtx-dlcs picked %d, want 1 (least T)", got)
	}
	if got := (LossRatePolicy{}).Pick(0, subs, nil); got == 1 {
		t.Fatalf("rtx-lossrate picked 1 too: the case does not tell DLCS from LOSSRATE")
	}
	// With more loss the short path's timeouts cost more than the long
	// path's delay: 40 % loss, T ≈ 0.6 s.
	subs[1].LossRate = 0.4
	if got := p.Pick(0, subs, nil); got != 2 {
		t.Fatalf("rtx-dlcs at 40 %% loss picked %d, want 2", got)
	}
}

func TestDLCSTies(t *testing.T) {
	p := DLCS{M: 3}
	subs := []Subflow{sub(0, 1, 5, 0, 80*ms, time.Second, 0.01), sub(1, 8, 5, 2, 80*ms, time.Second, 0.01), sub(2, 12, 4, 2, 80*ms, time.Second, 0.01)}
	if got := p.Pick(0, subs, nil); got != 2 {
		t.Fatalf("equal T: picked %d, want the larger cwnd (2)", got)
	}
	subs[1].Cwnd, subs[1].Ssthresh = 12, 9
	if got := p.Pick(0, subs, nil); got != 1 {
		t.Fatalf("equal T and cwnd: picked %d, want the larger ssthresh (1)", got)
	}
}

func TestLowestRTTScheduler(t *testing.T) {
	subs := []Subflow{sub(0, 10, 10, 3, 320*ms, time.Second, 0), sub(1, 10, 10, 0, 80*ms, time.Second, 0), sub(2, 10, 10, 1, 100*ms, time.Second, 0)}
	if got := (LowestRTT{}).Pick(subs); got != 2 {
		t.Fatalf("picked %d, want 2 (lowest RTT with space)", got)
	}
	subs[2].Space = 0
	if got := (LowestRTT{}).Pick(subs); got != 0 {
		t.Fatalf("picked %d, want 0 (the only one with space)", got)
	}
	subs[0].Space = 0
	if got := (LowestRTT{}).Pick(subs); got != -1 {
		t.Fatalf("picked %d, want -1 (no space anywhere)", got)
	}
}

func TestNewPolicyNames(t *testing.T) {
	for _, n := range PolicyNames() {
		p, err := NewPolicy(n)
		if err != nil || p.Name() != n {
			t.Fatalf("NewPolicy(%q) = %v, %v", n, p, err)
		}
	}
	if _, err := NewPolicy("rtx-bogus"); err == nil {
		t.Fatal("unknown policy accepted")
	}
}
