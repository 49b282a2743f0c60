package agent

import (
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/internal/clock"
)

// With FlushPeriod above B·p every batch at 5 000 pps leaves full; below it,
// the timer fires before 25 are built and splits batches. This is the bound
// of CALIBRATION-NOTES.md ("the flush timer must exceed ≈105 ms").
func TestFlushPeriodBound(t *testing.T) {
	for _, tc := range []struct {
		period      time.Duration
		wantAllFull bool
	}{
		{100 * time.Millisecond, false},
		{110 * time.Millisecond, true},
		{time.Second, true},
	} {
		cfg := pica8()
		cfg.FlushPeriod = tc.period
		sim := clock.NewSim(t0)
		a, rec := newTestAgent(t, sim, cfg, nil)
		sendMisses(sim, a, 400, time.Second/5000)
		sim.Run()
		allFull := true
		for _, n := range rec.sizes() {
			allFull = allFull && n == 25
		}
		if allFull != tc.wantAllFull {
			t.Errorf("period %v: batch sizes %v, want all full = %v", tc.period, rec.sizes(), tc.wantAllFull)
		}
		if a.Stats().Sent != 400 {
			t.Errorf("period %v: sent %d of 400", tc.period, a.Stats().Sent)
		}
	}
}

// The closed loop of Table 1 with the calibrated constants (p = 4.2 ms,
// B = 25, t_c = 1.95 ms, c_write = 0.3 ms, hit 50 µs). Paper: mean delay
// rises with rate, ≤ 1.4 s at 1 000 pps, max 1.624 s at 5 000 pps; mean
// controller time per Packet-In 25.38 ms at 5 000 pps and 1–2 ms per flow.
// The test checks the trend from 100 pps up and the controller time; the
// delays are logged for docs/calibration.md. 10 pps is left out of the
// trend: with misses exactly 100 ms apart its mean wait aliases with the
// flush period (at 200 ms every miss sits at phase 0 or 100 ms of the grid),
// so its order against 100 pps depends on the calibrated period.
func TestTable1Loop(t *testing.T) {
	const n = 400
	tc := ms(1.95)
	prevMean := time.Duration(0)
	for _, rate := range []int{10, 100, 1000, 5000} {
		l, rec := newLoop(t, pica8(), tc, ms(0.3))
		interval := time.Second / time.Duration(rate)
		sendMisses(l.sim, l.a, n, interval)
		l.sim.Run()
		if len(l.delivered) != n {
			t.Fatalf("%d pps: %d of %d delivered", rate, len(l.delivered), n)
		}
		var sum, worst time.Duration
		for i, at := range l.delivered {
			d := at.Sub(t0.Add(time.Duration(i) * interval))
			sum += d
			worst = max(worst, d)
		}
		mean := sum / n
		// Controller time of the j-th Packet-In of a batch, served one at a
		// time: (j+1)·t_c after the batch arrives (the controller is idle
		// by then at every rate here).
		var ctrl time.Duration
		for _, b := range rec.batches {
			for j := range b.pins {
				ctrl += time.Duration(j+1) * tc
			}
		}
		t.Logf("%5d pps: batches %3d, mean delay %v, max %v, mean controller time %v",
			rate, len(rec.batches), mean, worst, ctrl/n)
		if rate > 100 && mean <= prevMean {
			t.Errorf("%d pps: mean delay %v not above the slower rate's %v", rate, mean, prevMean)
		}
		prevMean = mean
		if rate == 5000 {
			if c := ctrl / n; c < 25*time.Millisecond || c > 26*time.Millisecond {
				t.Errorf("5000 pps: mean controller time %v, paper 25.38 ms", c)
			}
		}
	}
}
