package calibrate

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/profile"
)

// syntheticUpcall sends n misses at each spacing (with timer lateness) to
// a switch whose upcall is u, on a path whose other parts cost base, with
// ±30 µs of jitter and 10 % of ms outliers (a loaded host).
func syntheticUpcall(u profile.Upcall, base time.Duration, n int, seed uint64) []PacedMiss {
	rng := rand.New(rand.NewPCG(seed, 9))
	var out []PacedMiss
	for _, lv := range append(append([]time.Duration(nil), DefaultPacedGaps...), 250*time.Millisecond) {
		for range n {
			gap := lv + time.Duration(rng.Float64()*float64(100*time.Microsecond))
			d := base + u.Delay(gap) + time.Duration((rng.Float64()*2-1)*30e3)
			if rng.Float64() < 0.1 {
				d += time.Duration(1+rng.IntN(4)) * time.Millisecond
			}
			out = append(out, PacedMiss{Level: lv, Gap: gap, Delay: d})
		}
	}
	return out
}

// A switch slower after idling (Open vSwitch's polling thread): the busy
// and idle latencies come back within 15 %, the time constant within
// 40 % (it is resolved only by the spacings around it).
func TestFitUpcallRateDependent(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		u := profile.Upcall{Latency: 120 * time.Microsecond, IdleLatency: 450 * time.Microsecond, IdleTimeConstant: 15 * time.Millisecond}
		base := 35 * time.Microsecond
		f, err := FitUpcall(syntheticUpcall(u, base, 15, seed), base)
		if err != nil {
			t.Fatal(err)
		}
		if !f.RateDependent {
			t.Fatalf("seed %d: idle term not resolved: %+v", seed, f)
		}
		within(t, "latency", f.Latency, u.Latency, 0.15)
		within(t, "idle latency", f.IdleLatency, u.IdleLatency, 0.15)
		within(t, "time constant", f.TimeConstant, u.IdleTimeConstant, 0.4)
	}
}

// A switch whose upcall does not depend on the rate: one latency, the
// idle keys 0.
func TestFitUpcallFlat(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		u := profile.Upcall{Latency: 200 * time.Microsecond}
		f, err := FitUpcall(syntheticUpcall(u, 50*time.Microsecond, 15, seed), 50*time.Microsecond)
		if err != nil {
			t.Fatal(err)
		}
		if f.RateDependent || f.IdleLatency != 0 || f.TimeConstant != 0 {
			t.Errorf("seed %d: flat switch fitted rate dependent: %+v", seed, f)
		}
		within(t, "latency", f.Latency, u.Latency, 0.1)
	}
}

// Too few spacings is an error, not a guess.
func TestFitUpcallNeedsSpacings(t *testing.T) {
	ms := []PacedMiss{{Level: 1, Gap: 1, Delay: 1}, {Level: 1, Gap: 1, Delay: 1}, {Level: 1, Gap: 1, Delay: 1}}
	if _, err := FitUpcall(ms, 0); err == nil {
		t.Error("one spacing fitted")
	}
}
