package mptcpgrid

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/pseudocong/pseudocong/experiments/grid/gridtest"
)

// The tests run the spec's reduced grid (experiments/mptcpgrid/specs/mptcp.yaml, built in as "mptcp";
// "reduced": 4 loss rates, 3 seeds, 60 s runs; about 10 s of CPU) once and
// check the summary's values; the full grid is
// `go run ./cmd/pseudocong mptcp grid` (docs/mptcp.md).

// reduced skips under -short: minutes under the race detector, and no
// shared state worth racing on; the integration phase runs it.
var reduced = gridtest.Once("runs the reduced mptcp grid (about 10 s of CPU)", func() (*Result, error) {
	s, err := Load("mptcp")
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

func key(metric, policy string, d [2]int, loss, buf int) string {
	return fmt.Sprintf("mptcp.%s.%s.d%d-%d.l%d.b%d", metric, policy, d[0], d[1], loss, buf)
}

func val(t *testing.T, vals map[string]float64, k string) float64 {
	t.Helper()
	v, ok := vals[k]
	if !ok {
		t.Fatalf("summary has no %s", k)
	}
	return v
}

// Every cell of the grid is in the summary, with a goodput that two
// 5 Mbit/s paths allow and a share in [0, 1].
func TestSummaryKeys(t *testing.T) {
	res, vals := reducedGrid(t)
	s := res.Spec
	want := 2 * len(s.Policies) * len(s.Delays) * len(s.Loss2) * len(s.BuffersKB)
	if len(vals) != want {
		t.Fatalf("%d summary values, want %d", len(vals), want)
	}
	for _, c := range s.Cells() {
		g := val(t, vals, "mptcp.goodput_mbps."+c.Suffix())
		b := val(t, vals, "mptcp.blocked_share."+c.Suffix())
		if !(g > 0 && g < 2*s.RateMbps) || !(b >= 0 && b <= 1) {
			t.Errorf("%s: goodput %v Mbit/s, blocked %v", c.Suffix(), g, b)
		}
	}
}

// Paper 004: with unequal delays RTX-DLCS beats RTX-SAME. Ours: over the
// loss rates of each delay pair and buffer, DLCS's mean goodput is at
// least SAME's, and at the highest loss (where timeouts dominate) it is
// not below SAME's by more than 1 % in any cell. (It was "higher in
// every cell" until package tcp stopped carrying NewReno's duplicate-ACK
// count from one recovery into the next, issue 10: that bug started
// back-to-back spurious recoveries; with it fixed one cell of the
// reduced grid, d160-40 b64 at 10 %, has DLCS 0.7 % below SAME.) The paper's stronger claims are logged with the
// cells where they fail (docs/mptcp.md discusses them).
func TestDLCSAtLeastSameWithUnequalDelays(t *testing.T) {
	res, vals := reducedGrid(t)
	s := res.Spec
	top := s.Loss2[len(s.Loss2)-1]
	for _, d := range s.Delays {
		if d[0] == d[1] {
			continue
		}
		for _, b := range s.BuffersKB {
			var dl, sa float64
			for _, l := range s.Loss2 {
				dl += val(t, vals, key("goodput_mbps", "rtx-dlcs", d, l, b))
				sa += val(t, vals, key("goodput_mbps", "rtx-same", d, l, b))
			}
			if dl < sa {
				t.Errorf("d%d-%d b%d: RTX-DLCS mean goodput %.3f < RTX-SAME %.3f", d[0], d[1], b, dl/float64(len(s.Loss2)), sa/float64(len(s.Loss2)))
			}
			g, h := val(t, vals, key("goodput_mbps", "rtx-dlcs", d, top, b)), val(t, vals, key("goodput_mbps", "rtx-same", d, top, b))
			if g < 0.99*h {
				t.Errorf("d%d-%d b%d l%d: RTX-DLCS %.3f more than 1 %% below RTX-SAME %.3f at the highest loss", d[0], d[1], b, top, g, h)
			} else if !(g > h) {
				t.Logf("d%d-%d b%d l%d: RTX-DLCS %.3f ≤ RTX-SAME %.3f at the highest loss (within 1 %%)", d[0], d[1], b, top, g, h)
			}
		}
	}
	// The paper's ordering. Asserted where it holds in ours: with unequal
	// delays DLCS is the best (within 0.5 %) in at least half the cells —
	// mostly as a tie, since with two subflows CWND, SSTHRESH and LOSSRATE
	// usually pick the same subflow after a timeout; with equal delays it
	// is within 3 % of the best other policy in at least two thirds of
	// them. Reported only, because it does not hold in ours: ASAP the
	// worst (SAME is, docs/mptcp.md).
	var best, asapLow, cells, eqNear, eqCells int
	for _, d := range s.Delays {
		for _, b := range s.BuffersKB {
			for _, l := range s.Loss2 {
				g := map[string]float64{}
				lo, hiOther := math.Inf(1), 0.0
				for _, p := range s.Policies {
					g[p] = val(t, vals, key("goodput_mbps", p, d, l, b))
					lo = min(lo, g[p])
					if p != "rtx-dlcs" {
						hiOther = max(hiOther, g[p])
					}
				}
				if d[0] == d[1] {
					eqCells++
					if g["rtx-dlcs"] >= 0.97*hiOther {
						eqNear++
					} else {
						t.Logf("equal delays miss: d%d-%d b%d l%d: DLCS %.3f, best other %.3f", d[0], d[1], b, l, g["rtx-dlcs"], hiOther)
					}
					continue
				}
				cells++
				if g["rtx-dlcs"] >= hiOther*0.995 {
					best++
				} else {
					t.Logf("unequal delays miss: d%d-%d b%d l%d: DLCS %.3f, best other %.3f", d[0], d[1], b, l, g["rtx-dlcs"], hiOther)
				}
				if g["rtx-asap"] <= lo*1.01 {
					asapLow++
				}
			}
		}
	}
	t.Logf("unequal delays: DLCS best (within 0.5 %%) in %d of %d cells, ASAP lowest (within 1 %%) in %d; equal delays: DLCS within 3 %% of the best other in %d of %d",
		best, cells, asapLow, eqNear, eqCells)
	if 2*best < cells {
		t.Errorf("unequal delays: DLCS best (within 0.5 %%) in only %d of %d cells", best, cells)
	}
	if 3*eqNear < 2*eqCells {
		t.Errorf("equal delays: DLCS within 3 %% of the best other in only %d of %d cells", eqNear, eqCells)
	}
}

// Receive-buffer blocking grows with the delay asymmetry and shrinks with
// the buffer: at equal losses (1 % on both paths), so that only the
// delays differ, the blocked share averaged over the policies.
func TestBlockingGrowsWithAsymmetryShrinksWithBuffer(t *testing.T) {
	res, vals := reducedGrid(t)
	s := res.Spec
	l := s.Loss2[0]
	if float64(l) != s.Loss1 {
		t.Fatalf("the spec's first loss2 (%d %%) is not path 1's loss (%v %%): the test needs the equal-loss column", l, s.Loss1)
	}
	share := func(d [2]int, b int) float64 {
		v := 0.0
		for _, p := range s.Policies {
			v += val(t, vals, key("blocked_share", p, d, l, b))
		}
		return v / float64(len(s.Policies))
	}
	for _, b := range s.BuffersKB {
		prev := -1.0
		for _, d := range s.Delays { // in the spec's order of growing asymmetry
			v := share(d, b)
			t.Logf("b%d d%d-%d: blocked %.3f", b, d[0], d[1], v)
			if !(v > prev) {
				t.Errorf("b%d: blocked share %.3f at d%d-%d does not exceed %.3f at the less asymmetric pair before it", b, v, d[0], d[1], prev)
			}
			prev = v
		}
	}
	for _, d := range s.Delays {
		prev := 2.0
		for _, b := range s.BuffersKB { // growing buffers
			v := share(d, b)
			if !(v < prev) {
				t.Errorf("d%d-%d: blocked share %.3f at %d KB is not below %.3f at the smaller buffer before it", d[0], d[1], v, b, prev)
			}
			prev = v
		}
	}
}

// The paper: the policies differ more the smaller the buffer. The mean
// relative spread (max−min)/max of the policies' goodput over the cells
// falls as the buffer grows (32 KB widest).
func TestPolicySpreadByBuffer(t *testing.T) {
	res, vals := reducedGrid(t)
	s := res.Spec
	prev := math.Inf(1)
	for _, b := range s.BuffersKB { // growing buffers
		sum, n := 0.0, 0
		for _, d := range s.Delays {
			for _, l := range s.Loss2 {
				lo, hi := math.Inf(1), 0.0
				for _, p := range s.Policies {
					g := val(t, vals, key("goodput_mbps", p, d, l, b))
					lo, hi = min(lo, g), max(hi, g)
				}
				sum += (hi - lo) / hi
				n++
			}
		}
		v := sum / float64(n)
		t.Logf("buffer %d KB: mean relative spread of the policies' goodput %.3f", b, v)
		if !(v < prev) {
			t.Errorf("buffer %d KB: spread %.3f not below %.3f of the smaller buffer", b, v, prev)
		}
		prev = v
	}
}
