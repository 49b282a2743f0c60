package tcp

import (
	"testing"
	"time"
)

// TestRTOEstimatorRFC6298 follows RFC 6298 §2 by hand.
func TestRTOEstimatorRFC6298(t *testing.T) {
	cfg := RTOConfig{Initial: time.Second, Min: time.Second, Max: 60 * time.Second, Granularity: time.Millisecond}
	e := newRTTEstimator(cfg)
	if e.rto() != time.Second {
		t.Fatalf("initial RTO %v, want 1s (§2.1)", e.rto())
	}
	// §2.2: first sample R: SRTT = R, RTTVAR = R/2, RTO = SRTT + max(G, 4·RTTVAR).
	e.sample(2 * time.Second)
	if e.srtt != 2*time.Second || e.rttvar != time.Second || e.rto() != 6*time.Second {
		t.Errorf("after R=2s: srtt %v rttvar %v rto %v, want 2s 1s 6s", e.srtt, e.rttvar, e.rto())
	}
	// §2.3: RTTVAR = 3/4·1s + 1/4·|2s−1s| = 1s; SRTT = 7/8·2s + 1/8·1s = 1.875s.
	e.sample(time.Second)
	if e.srtt != 1875*time.Millisecond || e.rttvar != time.Second || e.rto() != 5875*time.Millisecond {
		t.Errorf("after R=1s: srtt %v rttvar %v rto %v, want 1.875s 1s 5.875s", e.srtt, e.rttvar, e.rto())
	}
	// §2.4: a small RTT is floored at the minimum.
	f := newRTTEstimator(cfg)
	f.sample(10 * time.Millisecond)
	if f.rto() != time.Second {
		t.Errorf("R=10ms: rto %v, want the 1s minimum", f.rto())
	}
	// §5.5: backoff doubles, §2.5 the maximum caps it.
	for i, want := range []time.Duration{2, 4, 8, 16, 32, 60, 60} {
		f.backOff()
		if f.rto() != want*time.Second {
			t.Errorf("after %d backoffs: %v, want %v", i+1, f.rto(), want*time.Second)
		}
	}
	// A new sample (after Karn allows one) clears the backoff.
	f.sample(10 * time.Millisecond)
	if f.rto() != time.Second {
		t.Errorf("after a new sample: %v, want 1s", f.rto())
	}
}

// TestRTOEstimatorLinux: Linux floors the variance term, not the RTO.
func TestRTOEstimatorLinux(t *testing.T) {
	e := newRTTEstimator(Linux().RTO)
	e.sample(40 * time.Millisecond)
	if e.rto() != 240*time.Millisecond {
		t.Errorf("R=40ms: %v, want 240ms (SRTT + 200ms)", e.rto())
	}
	e.sample(400 * time.Millisecond) // rttvar = 3/4·20 + 1/4·360 = 105ms, srtt = 85ms
	if e.srtt != 85*time.Millisecond || e.rto() != 505*time.Millisecond {
		t.Errorf("srtt %v rto %v, want 85ms and 505ms", e.srtt, e.rto())
	}
	b := newRTTEstimator(Berkeley().RTO)
	if b.rto() != 1500*time.Millisecond {
		t.Errorf("Berkeley initial %v, want 1.5s", b.rto())
	}
	for range 10 {
		b.backOff()
	}
	if b.rto() != 64*time.Second {
		t.Errorf("Berkeley backed off %v, want the 64s cap", b.rto())
	}
}
