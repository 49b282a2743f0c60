package pipeline

import (
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/profile"
)

// Must-show (issue 3): 4 000 rules of ascending priority inserted at 10 per
// second. With pica8-p3297 every insert shifts the whole table
// (highest-first layout), so the insert-latency histogram grows with
// occupancy; with ideal it stays at zero. Runs the paper's 400 s on the
// virtual clock.
func TestAscendingInsertLatencyGrowsWithOccupancy(t *testing.T) {
	if testing.Short() {
		t.Skip("long single-goroutine simulation: the race phase (-short) leaves it to the integration phase")
	}
	const (
		rules  = 4000
		window = 500
		rate   = 10 // per second
	)
	for _, tc := range []struct {
		profile string
		zero    bool
	}{
		{"pica8-p3297", false},
		{"ideal", true},
	} {
		t.Run(tc.profile, func(t *testing.T) {
			// The expected latencies below are c_write + k·c_move; the
			// profile's slow path for the last inserts near a full table
			// (tcam.Timing.SlowMoveFreeSlots) is switched off here.
			prof := loadProfile(t, tc.profile, func(p *profile.Profile) { p.TCAM.Timing.SlowMoveFreeSlots = 0 })
			r := newRig(t, prof, Options{})
			type snap struct{ sum, count float64 }
			snaps := map[int]snap{}
			take := func(n int) {
				h := insertHistogram(t, r.reg)
				snaps[n] = snap{h.GetSampleSum(), float64(h.GetSampleCount())}
			}
			for i := range rules {
				at := time.Duration(i) * time.Second / rate
				r.at(at, func() { r.send(ruleFor(i, uint16(1+i))) })
				if n := i + 1; n == window || n == rules-window {
					// Half an interval later the insert has run (at most
					// ~65 ms of CPU) and the next has not arrived.
					r.at(at+time.Second/rate/2, func() { take(n) })
				}
			}
			r.run()
			take(rules)

			h := insertHistogram(t, r.reg)
			if got := h.GetSampleCount(); got != rules {
				t.Fatalf("%d inserts observed, want %d", got, rules)
			}
			if n, b := r.p.Occupancy(); n != rules || b != 0 {
				t.Fatalf("occupancy %d tcam / %d backing", n, b)
			}
			first := snaps[window].sum / snaps[window].count
			last := (snaps[rules].sum - snaps[rules-window].sum) / (snaps[rules].count - snaps[rules-window].count)
			t.Logf("%s: mean insert latency first %d: %.3f ms, last %d: %.3f ms; total %.1f s",
				tc.profile, window, first*1e3, window, last*1e3, h.GetSampleSum())
			if tc.zero {
				if h.GetSampleSum() != 0 {
					t.Errorf("ideal: insert latency sum %g, want 0", h.GetSampleSum())
				}
				return
			}
			// Insert k (0-based) moves k entries: c_write + k·c_move.
			tm := prof.TCAM.Timing
			mean := func(from, to int) float64 {
				k := float64(from+to-1) / 2
				return (tm.DriverPerWrite + time.Duration(k*float64(tm.DriverPerMove))).Seconds()
			}
			for _, c := range []struct {
				name      string
				got, want float64
			}{
				{"first window", first, mean(0, window)},
				{"last window", last, mean(rules-window, rules)},
			} {
				if d := c.got - c.want; d > 1e-6 || d < -1e-6 {
					t.Errorf("%s mean %.6f s, want %.6f s", c.name, c.got, c.want)
				}
			}
			if last < 10*first {
				t.Errorf("latency does not grow with occupancy: first %g, last %g", first, last)
			}
			// The high buckets fill: the last inserts take > 50 ms each.
			var le50 uint64
			for _, b := range h.GetBucket() {
				if b.GetUpperBound() == 0.05 {
					le50 = b.GetCumulativeCount()
				}
			}
			// Insert k takes more than 50 ms from k > (50 ms − c_write)/c_move.
			from := int((50*time.Millisecond-tm.DriverPerWrite)/tm.DriverPerMove) + 1
			if over, want := int(rules-le50), (rules-from)*9/10; over < want {
				t.Errorf("%d inserts above 50 ms, want ≥ %d (90 %% of those at occupancy ≥ %d)", over, want, from)
			}
			moved := counterValue(t, r.reg, "pseudocong_tcam_entries_moved_total", nil)
			if want := float64(rules * (rules - 1) / 2); moved != want {
				t.Errorf("entries moved %g, want %g", moved, want)
			}
		})
	}
}
