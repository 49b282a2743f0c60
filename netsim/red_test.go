package netsim

import (
	"math"
	"testing"
	"time"
)

func mustRED(t *testing.T, c REDConfig) *RED {
	t.Helper()
	r, err := NewRED(c)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// redAtBacklog holds RED's average at exactly backlog bytes (weight 1
// makes the average the backlog seen by each arrival; every admitted
// arrival is matched by a departure) and offers n packets. It returns, per
// packet, whether it was marked or dropped, and RED's counters from before
// the first of them (filling the queue marks too).
func redAtBacklog(t *testing.T, r *RED, backlog, pktLen, n int, ecn ECN) ([]bool, REDStats) {
	t.Helper()
	for r.Bytes() < backlog {
		if v := r.Enqueue(&Packet{Len: pktLen, ECN: ECT0}, epoch); v == Dropped {
			t.Fatalf("filling to %d B: dropped at %d B", backlog, r.Bytes())
		}
	}
	before := r.REDStats()
	hit := make([]bool, n)
	for i := range n {
		v := r.Enqueue(&Packet{Len: pktLen, ECN: ecn}, epoch)
		if v != Dropped {
			r.Dequeue(epoch)
		}
		if r.Average() != float64(backlog) {
			t.Fatalf("average %v, want it held at %d", r.Average(), backlog)
		}
		switch {
		case ecn == NotECT && v == Marked:
			t.Fatal("a Not-ECT packet was marked")
		case ecn != NotECT && v == Dropped:
			t.Fatal("an ECT packet was dropped below the hard limit in ECN mode")
		}
		hit[i] = v != Queued
	}
	return hit, before
}

// RED's marking law at fixed averages, against the closed forms:
//   - p_b = MaxP·(avg − Min)/(Max − Min);
//   - the count-spread probability: a packet arriving count packets after
//     the last mark is marked with p_a = p_b/(1 − count·p_b) (count = 0
//     right after a mark, so that first packet sees p_b itself);
//   - hence the gap X between marks is uniform on 1..⌈1/p_b⌉ and the
//     long-run rate is 1/E[X], E[X] = Σ_{j≥0} max(0, 1 − j·p_b) —
//     about 2·p_b/(1+p_b), twice what marking every packet with p_b would
//     give.
//
// Both ECN marking (ECT packets) and dropping (Not-ECT) are checked.
func TestREDProbabilityAtFixedAverage(t *testing.T) {
	if testing.Short() {
		t.Skip("long single-goroutine simulation: the race phase (-short) leaves it to the integration phase")
	}
	const n = 300_000
	for _, ecn := range []ECN{ECT0, NotECT} {
		for _, backlog := range []int{40_000, 60_000, 80_000} {
			r := mustRED(t, REDConfig{Limit: 400_000, Min: 30_000, Max: 90_000, MaxP: 0.1, Avpkt: 1000, Weight: 1, ECN: true, Seed: uint64(backlog)})
			pb := r.ProbB(float64(backlog))
			if want := 0.1 * float64(backlog-30_000) / 60_000; math.Abs(pb-want) > 1e-12 {
				t.Fatalf("p_b(%d) = %v, want %v", backlog, pb, want)
			}
			hit, before := redAtBacklog(t, r, backlog, 1000, n, ecn)

			// Overall rate against 1/E[X]. Skip the first packet: it
			// enters (Min, Max) and, as in Linux, never marks.
			ex := 0.0
			for j := 0; 1-float64(j)*pb > 0; j++ {
				ex += 1 - float64(j)*pb
			}
			marks := 0
			for _, h := range hit[1:] {
				if h {
					marks++
				}
			}
			rate := float64(marks) / float64(n-1)
			if math.Abs(rate-1/ex)*ex > 0.03 {
				t.Errorf("%v avg %d: rate %.5f, want 1/E[X] = %.5f ± 3 %% (p_b %.5f)", ecn, backlog, rate, 1/ex, pb)
			}

			// Hazard by count against p_a.
			trials := make([]int, int(1/pb)+2)
			events := make([]int, len(trials))
			count := -1 // unknown until the first mark
			for _, h := range hit {
				if count >= 0 && count < len(trials) { // a longer gap would break the law: the rate check reports it
					trials[count]++
					if h {
						events[count]++
					}
				}
				if h {
					count = 0
				} else if count >= 0 {
					count++
				}
			}
			checked := 0
			for c := range trials {
				pa := pb / (1 - float64(c)*pb)
				if trials[c] < 1000 || pa >= 1 {
					continue
				}
				got := float64(events[c]) / float64(trials[c])
				sd := math.Sqrt(pa * (1 - pa) / float64(trials[c]))
				if math.Abs(got-pa) > 5*sd {
					t.Errorf("%v avg %d count %d: marked %.4f of %d, want p_a = %.4f ± %.4f", ecn, backlog, c, got, trials[c], pa, 5*sd)
				}
				checked++
			}
			if checked < 5 {
				t.Errorf("avg %d: only %d counts had enough trials", backlog, checked)
			}
			rs := r.REDStats()
			got := rs.ProbMark - before.ProbMark
			if ecn == NotECT {
				got = rs.ProbDrop - before.ProbDrop
			}
			if got != uint64(marks+boolInt(hit[0])) {
				t.Errorf("%v: RED stats %+v (before %+v), %d marks counted", ecn, rs, before, marks)
			}
			t.Logf("%v avg %d: p_b %.4f, rate %.5f, 1/E[X] %.5f, %d counts checked", ecn, backlog, pb, rate, 1/ex, checked)
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Below Min nothing is marked; from Max up everything is: ECT packets
// marked (or dropped with HardDrop), Not-ECT packets dropped.
func TestREDThresholds(t *testing.T) {
	base := REDConfig{Limit: 400_000, Min: 30_000, Max: 90_000, MaxP: 0.1, Avpkt: 1000, Weight: 1, ECN: true}
	r := mustRED(t, base)
	hits, _ := redAtBacklog(t, r, 20_000, 1000, 1000, ECT0)
	for _, h := range hits {
		if h {
			t.Fatal("marked below min")
		}
	}
	r = mustRED(t, base)
	hits, _ = redAtBacklog(t, r, 100_000, 1000, 1000, ECT1)
	for _, h := range hits {
		if !h {
			t.Fatal("not marked above max")
		}
	}
	if rs := r.REDStats(); rs.ForcedMark < 1000 {
		t.Errorf("forced marks %d", rs.ForcedMark)
	}
	r = mustRED(t, base)
	hits, _ = redAtBacklog(t, r, 100_000, 1000, 1000, NotECT)
	for _, h := range hits {
		if !h {
			t.Fatal("Not-ECT not dropped above max")
		}
	}
	hd := base
	hd.HardDrop = true
	r = mustRED(t, hd)
	r.avg = 100_000
	for range 90 { // fill past max without letting the average in first
		r.q.push(&Packet{Len: 1000})
	}
	r.idle = false
	if v := r.Enqueue(&Packet{Len: 1000, ECN: ECT0}, epoch); v != Dropped {
		t.Errorf("harddrop above max: %v", v)
	}
	// Without ECN every mark is a drop.
	noECN := base
	noECN.ECN = false
	r = mustRED(t, noECN)
	r.avg = 100_000
	r.q.push(&Packet{Len: 100_000})
	r.idle = false
	if v := r.Enqueue(&Packet{Len: 1000, ECN: ECT0}, epoch); v != Dropped {
		t.Errorf("no ecn, above max: %v", v)
	}
	// The hard limit drops whatever the average says.
	r = mustRED(t, base)
	r.q.push(&Packet{Len: 399_500})
	r.idle = false
	if v := r.Enqueue(&Packet{Len: 1000, ECN: ECT0}, epoch); v != Dropped || r.REDStats().PDrop != 1 {
		t.Errorf("over the limit: %v, %+v", v, r.REDStats())
	}
}

// The EWMA weight tc derives from burst, min and avpkt (tc_red_eval_ewma),
// worked by hand: burst 55, min 30 avpkt → a = 26; (1 − (1−W)^55)/W is
// 15.5 at W = 2^-4 and 26.4 at 2^-5, so Wlog 5.
func TestREDWeightFromBurst(t *testing.T) {
	for _, c := range []struct{ min, burst, avpkt, wlog int }{
		{30_000, 55, 1000, 5},
		{3000, 5, 1000, 2},    // a = 3: (1-.5^5)/.5 = 1.94, (1-.75^5)/.25 = 3.05
		{30_000, 30, 1000, 1}, // a = 1 ≤ 1.9999
	} {
		got, err := REDWlog(c.min, c.burst, c.avpkt)
		if err != nil || got != c.wlog {
			t.Errorf("REDWlog(%d, %d, %d) = %d, %v; want %d", c.min, c.burst, c.avpkt, got, err, c.wlog)
		}
	}
	if _, err := REDWlog(30_000, 10, 1000); err == nil {
		t.Error("burst too small for min accepted")
	}
	// tc's default burst (2·min + max)/(3·avpkt) = 50 here.
	r := mustRED(t, REDConfig{Limit: 400_000, Min: 30_000, Max: 90_000, Avpkt: 1000})
	if want, _ := REDWlog(30_000, 50, 1000); r.Weight() != math.Ldexp(1, -want) {
		t.Errorf("default weight %v, want 2^-%d", r.Weight(), want)
	}
}

// The average follows the EWMA while busy and decays by (1−w)^m over an
// idle period, m = idle / (avpkt·8/bandwidth).
func TestREDAverage(t *testing.T) {
	r := mustRED(t, REDConfig{Limit: 400_000, Min: 30_000, Max: 90_000, Avpkt: 1000, Weight: 0.25, Bandwidth: 8_000_000})
	want := 0.0
	for i := range 20 {
		backlog := float64(i * 1000)
		if i > 0 {
			want += 0.25 * (backlog - want)
		}
		r.Enqueue(&Packet{Len: 1000}, epoch)
		if math.Abs(r.Average()-want) > 1e-9 {
			t.Fatalf("arrival %d: average %v, want %v", i, r.Average(), want)
		}
	}
	for r.Len() > 0 {
		r.Dequeue(epoch)
	}
	// 1000 B at 8 Mbit/s is 1 ms: 10 ms idle is m = 10.
	r.Enqueue(&Packet{Len: 1000}, epoch.Add(10*time.Millisecond))
	if w := want * math.Pow(0.75, 10); math.Abs(r.Average()-w) > 1e-9 {
		t.Errorf("after 10 ms idle: average %v, want %v", r.Average(), w)
	}
}

func TestREDConfigErrors(t *testing.T) {
	ok := REDConfig{Limit: 400_000, Min: 30_000, Max: 90_000, Avpkt: 1000}
	for _, f := range []func(*REDConfig){
		func(c *REDConfig) { c.Min = 0 },
		func(c *REDConfig) { c.Max = c.Min },
		func(c *REDConfig) { c.Limit = 1000 },
		func(c *REDConfig) { c.MaxP = 2 },
		func(c *REDConfig) { c.Avpkt = 0 },
		func(c *REDConfig) { c.Weight = 1.5 },
	} {
		c := ok
		f(&c)
		if _, err := NewRED(c); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}

// Same seed, same decisions.
func TestREDDeterministic(t *testing.T) {
	c := REDConfig{Limit: 400_000, Min: 30_000, Max: 90_000, MaxP: 0.1, Avpkt: 1000, Weight: 1, ECN: true, Seed: 42}
	a, _ := redAtBacklog(t, mustRED(t, c), 60_000, 1000, 10_000, ECT0)
	b, _ := redAtBacklog(t, mustRED(t, c), 60_000, 1000, 10_000, ECT0)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("packet %d differs between two runs with one seed", i)
		}
	}
}
