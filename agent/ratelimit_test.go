package agent

import (
	"slices"
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/internal/clock"
)

// OVS pinsched semantics: burst tokens at once, then one per 1/rate; up to
// burst Packet-Ins wait for tokens, the rest are dropped as rate_limited.
func TestRateLimiter(t *testing.T) {
	for _, tc := range []struct {
		name      string
		rate      float64
		burst     int
		misses    int
		wantSent  []time.Duration
		wantDrops int
	}{
		{"burst then paced", 100, 5, 20,
			[]time.Duration{0, 0, 0, 0, 0, 10 * time.Millisecond, 20 * time.Millisecond,
				30 * time.Millisecond, 40 * time.Millisecond, 50 * time.Millisecond}, 10},
		{"within burst", 100, 5, 5, []time.Duration{0, 0, 0, 0, 0}, 0},
		{"burst 1", 1000, 1, 4, []time.Duration{0, time.Millisecond}, 2},
		{"default burst is rate/4", 20, 0, 12,
			[]time.Duration{0, 0, 0, 0, 0, 50 * time.Millisecond, 100 * time.Millisecond,
				150 * time.Millisecond, 200 * time.Millisecond, 250 * time.Millisecond}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig() // p = 0, B = 1: every build lands at t0
			cfg.RateLimit, cfg.BurstLimit = tc.rate, tc.burst
			sim := clock.NewSim(t0)
			a, rec := newTestAgent(t, sim, cfg, nil)
			for i := range tc.misses {
				a.Miss(PacketIn{Cookie: i})
			}
			sim.Run()
			var sent []time.Duration
			for k, b := range rec.batches {
				sent = append(sent, b.at)
				if got := b.pins[0].Cookie.(int); got != k {
					t.Errorf("batch %d carries miss %d: order lost", k, got)
				}
			}
			if !slices.Equal(sent, tc.wantSent) {
				t.Errorf("sent at %v, want %v", sent, tc.wantSent)
			}
			s := a.Stats()
			if int(s.PacketInDrops[DropRateLimited]) != tc.wantDrops || len(rec.drops[DropRateLimited]) != tc.wantDrops {
				t.Errorf("rate_limited drops %d (reported %d), want %d", s.PacketInDrops[DropRateLimited],
					len(rec.drops[DropRateLimited]), tc.wantDrops)
			}
			if s.MaxRateLimitQueue > a.Config().BurstLimit {
				t.Errorf("rate-limit queue reached %d > burst %d", s.MaxRateLimitQueue, a.Config().BurstLimit)
			}
		})
	}
}

// A long run at a steady rate above the limit sends at the limit.
func TestRateLimiterLongRunRate(t *testing.T) {
	cfg := DefaultConfig()
	cfg.RateLimit, cfg.BurstLimit = 250, 10
	sim := clock.NewSim(t0)
	a, rec := newTestAgent(t, sim, cfg, nil)
	sendMisses(sim, a, 10000, time.Second/1000) // 10 s at 1 000 pps
	sim.Run()
	// 10 s × 250/s, plus the initial burst of 10, plus the ≤ 10 held
	// Packet-Ins that drain (one per 4 ms) after the input stops.
	if got := a.Stats().Sent; got < 2515 || got > 2521 {
		t.Errorf("sent %d Packet-Ins in 10 s at a 250/s limit, want ≈2 520", got)
	}
	last := rec.batches[len(rec.batches)-1].at
	if last > 10*time.Second+50*time.Millisecond {
		t.Errorf("last send at %v: the held queue drained long after the input stopped", last)
	}
}

// The same with the rate_limited policy's pinsched (burst 25, its
// minimum): every miss is either sent or dropped as rate_limited.
func TestRateLimitedLongRunRate(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Scheduling = RateLimited
	cfg.RateLimit, cfg.BurstLimit = 250, 25
	sim := clock.NewSim(t0)
	a, rec := newTestAgent(t, sim, cfg, nil)
	sendMisses(sim, a, 10000, time.Second/1000) // 10 s at 1 000 pps
	sim.Run()
	// 10 s × 250/s, plus the initial burst of 25, plus the ≤ 25 held
	// Packet-Ins that drain (one per 4 ms) after the input stops.
	s := a.Stats()
	if s.Sent < 2545 || s.Sent > 2551 {
		t.Errorf("sent %d Packet-Ins in 10 s at a 250/s limit, want ≈2 550", s.Sent)
	}
	if last := rec.batches[len(rec.batches)-1].at; last > 10*time.Second+110*time.Millisecond {
		t.Errorf("last send at %v: the held queue drained long after the input stopped", last)
	}
	if s.Sent+s.PacketInDrops[DropRateLimited] != s.Misses {
		t.Errorf("sent %d + dropped %d != misses %d", s.Sent, s.PacketInDrops[DropRateLimited], s.Misses)
	}
}
