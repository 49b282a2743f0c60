package tcp

import "time"

// rttEstimator is RFC 6298's SRTT/RTTVAR/RTO with exponential backoff.
// Karn's rule is the caller's: it samples only segments never
// retransmitted.
type rttEstimator struct {
	cfg     RTOConfig
	srtt    time.Duration
	rttvar  time.Duration
	base    time.Duration // RTO before backoff
	backoff int
	sampled bool
}

func newRTTEstimator(c RTOConfig) rttEstimator {
	e := rttEstimator{cfg: c}
	e.base = e.clamp(c.Initial)
	return e
}

func (e *rttEstimator) clamp(d time.Duration) time.Duration {
	if e.cfg.Max > 0 {
		d = min(d, e.cfg.Max)
	}
	if !e.cfg.MinOnVariance {
		d = max(d, e.cfg.Min)
	}
	return d
}

// sample folds in one RTT measurement (RFC 6298 §2.2–2.3) and clears the
// backoff (§5.7's "the RTO is recomputed from the new estimate").
func (e *rttEstimator) sample(r time.Duration) {
	if r <= 0 {
		r = time.Nanosecond
	}
	if !e.sampled {
		e.srtt, e.rttvar, e.sampled = r, r/2, true
	} else {
		d := e.srtt - r
		if d < 0 {
			d = -d
		}
		e.rttvar = (3*e.rttvar + d) / 4
		e.srtt = (7*e.srtt + r) / 8
	}
	v := max(e.cfg.Granularity, 4*e.rttvar)
	if e.cfg.MinOnVariance {
		v = max(v, e.cfg.Min)
	}
	e.base = e.clamp(e.srtt + v)
	e.backoff = 0
}

// rto is the current timeout, backed off.
func (e *rttEstimator) rto() time.Duration {
	d := e.base
	for i := 0; i < e.backoff && (e.cfg.Max <= 0 || d < e.cfg.Max); i++ {
		d *= 2
	}
	return e.clamp(d)
}

// backOff doubles the timer (RFC 6298 §5.5).
func (e *rttEstimator) backOff() { e.backoff++ }
