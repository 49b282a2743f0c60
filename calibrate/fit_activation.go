package calibrate

import (
	"math"
	"time"
)

// ActivationFit is the delay between "the switch says the rule is
// installed" (its BARRIER_REPLY) and "the rule forwards" (the first probe
// through it), profile key install.activation_delay.
//
// Per batch, gap = confirmation − BARRIER_REPLY, both from the first send.
// The BARRIER_REPLY is one channel latency (half the echo RTT, L) after the
// switch finished; the confirming probe is one hit delay (median of the hit
// probes, H) plus on average half a probe interval (I/2) after the rule
// became active. So activation ≈ mean(gap) + L − H − I/2. The mean, not
// the median: Open vSwitch's gaps are bimodal (a rule whose packets upcall
// forwards at once, one whose packets a cached datapath flow covers waits
// for the revalidators, ms), and which mode the median lands in changes
// from run to run; the mean is the expected delay. A value not
// above 3 standard errors and 500 µs is not resolved (a switch whose
// BARRIER waits for the data plane, as ours does) and is written 0.
type ActivationFit struct {
	// Delay is the fitted activation delay (0 when not resolved).
	Delay time.Duration
	// Raw is the estimate before the resolution test; SE its standard
	// error (of the mean).
	Raw, SE time.Duration
	// Resolved reports Delay = Raw.
	Resolved bool
	// Immediate counts the batches whose gap was below minActivation;
	// Waited summarises the gaps of the others (Open vSwitch: mostly one
	// revalidation, ~4.5 ms, and some 0.5-2 ms; docs/calibrate.md).
	Immediate int
	Waited    DelayStats
	// Gap summarises confirmation − BARRIER_REPLY over the batches used;
	// ByPattern the same per pattern (for the report: OVS's descending
	// inserts are slower).
	Gap       DelayStats
	ByPattern map[string]DelayStats
	// Pattern names the batches the fit used ("ascending" when there are
	// any: the Fig. 5 curve; else every batch).
	Pattern string
}

// minActivation is the smallest activation delay calibrate claims: below
// it the terms subtracted (hit delay, probe interval, channel latency,
// each noisy by ~100 µs on a loaded host) dominate.
const minActivation = 500 * time.Microsecond

// FitActivation fits ActivationFit from the insert batches, the hit and
// echo statistics and the probe interval. It is pure.
func FitActivation(batches []Batch, hit, echo DelayStats, probeInterval time.Duration) (ActivationFit, bool) {
	by := map[string][]time.Duration{}
	for _, b := range batches {
		if b.Barrier <= 0 || b.Duration <= 0 {
			continue
		}
		by[b.Pattern] = append(by[b.Pattern], b.Duration-b.Barrier)
	}
	f := ActivationFit{ByPattern: map[string]DelayStats{}, Pattern: "ascending"}
	var gaps []time.Duration
	for pat, g := range by {
		f.ByPattern[pat] = Summarise(g)
	}
	if g, ok := by["ascending"]; ok {
		gaps = g
	} else {
		f.Pattern = "all"
		for _, g := range by {
			gaps = append(gaps, g...)
		}
	}
	if len(gaps) < 5 {
		return f, false
	}
	f.Gap = Summarise(gaps)
	f.Raw = f.Gap.Mean + echo.Median/2 - hit.Median - probeInterval/2
	f.SE = meanSE(gaps)
	var waited []time.Duration
	for _, g := range gaps {
		if g < minActivation {
			f.Immediate++
		} else {
			waited = append(waited, g)
		}
	}
	f.Waited = Summarise(waited)
	if f.Raw > minActivation && f.Raw > 3*f.SE {
		f.Delay, f.Resolved = f.Raw, true
	}
	return f, true
}

// meanSE is the standard error of the mean: sd / √n.
func meanSE(ds []time.Duration) time.Duration {
	m := float64(Summarise(ds).Mean)
	var ss float64
	for _, d := range ds {
		ss += (float64(d) - m) * (float64(d) - m)
	}
	n := float64(len(ds))
	return time.Duration(math.Sqrt(ss/(n-1)) / math.Sqrt(n))
}
