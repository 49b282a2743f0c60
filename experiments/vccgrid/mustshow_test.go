package vccgrid

import (
	"context"
	"fmt"
	"testing"

	"github.com/pseudocong/pseudocong/experiments/grid/gridtest"
)

// The tests run the spec's reduced grid (specs/vcc.yaml, built in as
// "vcc"; "reduced": (a) at 2, 10 and 18 non-ECN senders, one seed, 15 s
// runs; about 15 s of CPU) once and check paper 001's claims on the
// summary's values. Where ours misses a claim the test logs the miss and
// asserts what holds instead; docs/vcc.md gives the numbers and causes.
// The full grid is `go run ./cmd/pseudocong vcc grid` (docs/vcc.md).

var reduced = gridtest.Once("runs the reduced vcc grid (about 15 s of CPU; minutes under -race)", func() (*Result, error) {
	s, err := Load("vcc")
	if err != nil {
		return nil, err
	}
	return Run(context.Background(), s.Reduce(), 2)
})

func reducedGrid(t *testing.T) (*Result, map[string]float64) {
	t.Helper()
	res := reduced(t)
	return res, res.Values()
}

func val(t *testing.T, vals map[string]float64, cell, metric, side string) float64 {
	t.Helper()
	k := fmt.Sprintf("vcc.%s.%s.%s", cell, metric, side)
	v, ok := vals[k]
	if !ok {
		t.Fatalf("summary has no %s", k)
	}
	return v
}

func ratio(t *testing.T, vals map[string]float64, cell, side string) float64 {
	t.Helper()
	return val(t, vals, cell, "throughput_ratio_nonecn_over_ecn", side)
}

// Every cell has both keys on both sides; every frame the translator
// rewrote in the grid had valid IPv4 and TCP checksums; only the runs
// with vCC rewrote any.
func TestSummaryKeysAndChecksums(t *testing.T) {
	res, vals := reducedGrid(t)
	for _, c := range res.Cells {
		for _, side := range []string{"without", "with"} {
			r, j := ratio(t, vals, c.Key(), side), val(t, vals, c.Key(), "jain", side)
			if !(r > 0 && r < 10) || !(j > 0 && j <= 1) {
				t.Errorf("%s %s: ratio %v, jain %v", c.Key(), side, r, j)
			}
		}
		if c.Without.Rewritten != 0 || c.With.Rewritten == 0 {
			t.Errorf("%s: %d frames rewritten without vCC, %d with", c.Key(), c.Without.Rewritten, c.With.Rewritten)
		}
		if c.With.Bad != 0 {
			t.Errorf("%s: %d of %d rewritten frames with bad checksums", c.Key(), c.With.Bad, c.With.Rewritten)
		}
	}
}

// (a) and (b) without vCC: the ECN class takes clearly more than its
// share (ratio below 0.9) — where the non-ECN flows lose enough to
// matter. Ours: at 2 and 10 non-ECN senders of 20 and in (b); at 18 of 20
// the two ECN senders gain little (logged).
func TestWithoutVCCECNTakesMore(t *testing.T) {
	_, vals := reducedGrid(t)
	for _, c := range []string{"a.n2", "a.n10", "b.access20-100"} {
		if r := ratio(t, vals, c, "without"); r >= 0.9 {
			t.Errorf("%s without vCC: ratio %.3f, want < 0.9 (the ECN class takes more)", c, r)
		}
	}
	t.Logf("a.n18 without vCC: ratio %.3f (paper: well below 1; ours: 2 ECN against 18 non-ECN senders gain little)", ratio(t, vals, "a.n18", "without"))
}

// (a) with vCC: the paper's ECN and vECN classes get nearly equal
// throughput (ratio 0.9–1.1) at every mix. Ours misses that range at the
// spec's 10 ms RTT (ratio ≈ 0.74–0.81: the vECN class gets less) and
// comes nearer at 40 ms; logged. What holds and is asserted: Jain's index
// with vCC is at least 0.98 at every mix and not below the one without;
// where the non-ECN class was short without vCC, vCC raises its ratio;
// and the ratio is nearer 1 with the larger windows of the 40 ms cells
// (the gap is a per-window effect, docs/vcc.md).
func TestWithVCCFairInA(t *testing.T) {
	res, vals := reducedGrid(t)
	for _, n := range res.Spec.A.NonECN {
		for _, suffix := range []string{"", ".rtt40"} {
			c := fmt.Sprintf("a.n%d%s", n, suffix)
			rw, ro := ratio(t, vals, c, "with"), ratio(t, vals, c, "without")
			jw, jo := val(t, vals, c, "jain", "with"), val(t, vals, c, "jain", "without")
			if rw < 0.9 || rw > 1.1 {
				t.Logf("MISS %s with vCC: ratio %.3f outside the paper's 0.9–1.1 (without %.3f)", c, rw, ro)
			}
			if jw < 0.98 || jw < jo {
				t.Errorf("%s: Jain %.3f with vCC, %.3f without: want ≥ 0.98 and ≥ without", c, jw, jo)
			}
			if ro < 0.9 && rw <= ro {
				t.Errorf("%s: ratio %.3f without vCC, %.3f with: want vCC to raise it", c, ro, rw)
			}
		}
		c := fmt.Sprintf("a.n%d", n)
		if near, far := ratio(t, vals, c+".rtt40", "with"), ratio(t, vals, c, "with"); abs(1-near) >= abs(1-far) {
			t.Errorf("%s with vCC: ratio %.3f at 40 ms, %.3f at 10 ms: want nearer 1 with the larger windows", c, near, far)
		}
	}
}

// (b): the paper's vECN throughput gains 100 % or more with vCC. Ours:
// the non-ECN class is not starved without vCC here (ratio ≈ 0.82), so it
// cannot double (logged); asserted: vCC raises its ratio into 0.9–1.1.
func TestTwoAccessSpeeds(t *testing.T) {
	_, vals := reducedGrid(t)
	c := "b.access20-100"
	mo, mw := val(t, vals, c, "mbps_nonecn", "without"), val(t, vals, c, "mbps_nonecn", "with")
	if mw < 2*mo {
		t.Logf("MISS %s: vECN %.2f Mbit/s per flow with vCC, %.2f without: less than double", c, mw, mo)
	}
	ro, rw := ratio(t, vals, c, "without"), ratio(t, vals, c, "with")
	if rw <= ro || rw < 0.9 || rw > 1.1 {
		t.Errorf("%s: ratio %.3f without vCC, %.3f with: want it raised into 0.9–1.1", c, ro, rw)
	}
}

// (c): the paper's vECN within about 10 % of ECN under extreme
// congestion. Ours misses at every RED minimum (ratio ≈ 0.70–0.76 with
// vCC: windows of 2–8 segments, the same per-window gap as (a) at 10 ms;
// logged). Asserted: at the smallest minimum, where the non-ECN class
// is short without vCC, vCC raises its ratio.
func TestExtremeCongestion(t *testing.T) {
	res, vals := reducedGrid(t)
	for _, m := range res.Spec.C.MinKB {
		c := fmt.Sprintf("c.min%dkb", m)
		if rw := ratio(t, vals, c, "with"); rw < 0.9 || rw > 1.1 {
			t.Logf("MISS %s with vCC: ratio %.3f, not within 10 %% (without %.3f)", c, rw, ratio(t, vals, c, "without"))
		}
	}
	c := fmt.Sprintf("c.min%dkb", res.Spec.C.MinKB[0])
	if ro, rw := ratio(t, vals, c, "without"), ratio(t, vals, c, "with"); rw <= ro {
		t.Errorf("%s: ratio %.3f without vCC, %.3f with: want vCC to raise it", c, ro, rw)
	}
}

// (d): the paper's fair (0.8–1.25) with vCC for BIC, HighSpeed and Reno
// tenants; poor for Vegas and YeAH (reported, not asserted). Ours: fair at
// the high rate; at the low rate ≈ 0.79 (the small-window gap; logged).
func TestTenantCC(t *testing.T) {
	res, vals := reducedGrid(t)
	hi, lo := res.Spec.D.RatesMbps[len(res.Spec.D.RatesMbps)-1], res.Spec.D.RatesMbps[0]
	for _, a := range []string{"reno", "bic", "highspeed"} {
		c := fmt.Sprintf("d.%s.r%g", a, hi)
		if rw := ratio(t, vals, c, "with"); rw < 0.8 || rw > 1.25 {
			t.Errorf("%s with vCC: ratio %.3f, want 0.8–1.25", c, rw)
		}
		c = fmt.Sprintf("d.%s.r%g", a, lo)
		if rw := ratio(t, vals, c, "with"); rw < 0.8 || rw > 1.25 {
			t.Logf("MISS %s with vCC: ratio %.3f outside 0.8–1.25", c, rw)
		}
	}
	for _, a := range []string{"vegas", "yeah"} {
		for _, r := range res.Spec.D.RatesMbps {
			c := fmt.Sprintf("d.%s.r%g", a, r)
			t.Logf("%s: ratio %.3f without vCC, %.3f with (paper: poor)", c, ratio(t, vals, c, "without"), ratio(t, vals, c, "with"))
		}
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
