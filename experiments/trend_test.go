package experiments

import (
	"testing"
)

// Paper §3.1–3.2: RTTs grow with the base load and with the rate. Across
// the whole handshake and data grids, more base load or a higher rate
// never makes the mean RTT shorter, nor the share of RTTs beyond the first
// retransmission timer smaller.
func TestTrendsAcrossTheGrid(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the handshake and data grids (20 simulations)")
	}
	spec := paperSubset(t, map[string]func(*ExperimentSpec){"handshake": nil, "data": nil})
	res := execute(t, spec, Options{})
	if v := res.TrendViolations(); len(v) > 0 {
		t.Errorf("trend violations:\n%v", v)
	}
	// Beyond the mean: the share under D1 (handshake) never grows and the
	// share beyond E1 (data) never shrinks with load or rate.
	for _, e := range spec.Runs {
		for _, l := range e.BaseLoads {
			prev := -1.0
			for _, r := range e.Rates {
				s := share(t, res, e, l, r)
				if prev >= 0 && s < prev-1e-12 {
					t.Errorf("%s L%d: share %v at %v pps below %v at the lower rate", e.ID, l, s, r, prev)
				}
				prev = s
			}
		}
		for _, r := range e.Rates {
			prev := -1.0
			for _, l := range e.BaseLoads {
				s := share(t, res, e, l, r)
				if prev >= 0 && s < prev-1e-12 {
					t.Errorf("%s %v pps: share %v at L%d below %v at the lower load", e.ID, r, s, l, prev)
				}
				prev = s
			}
		}
	}
}

// share is the "slow" share of a cell: 1 − share under D1 (handshake) or
// the share beyond E1 (data).
func share(t *testing.T, res *Result, e ExperimentSpec, l int, r float64) float64 {
	for _, c := range res.Cells {
		if c.Exp.ID != e.ID || c.BaseLoad != l || c.Rate != r {
			continue
		}
		if e.Kind == KindHandshake {
			return 1 - value(t, res, cellKey(c, "bins"))[0]
		}
		name, _ := dataShareMetric(res.Timers)
		return value(t, res, cellKey(c, name))[0]
	}
	t.Fatalf("no cell %s L%d %v pps", e.ID, l, r)
	return 0
}
