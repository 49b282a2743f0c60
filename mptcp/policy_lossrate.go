package mptcp

import "math/rand/v2"

// LossRatePolicy is RTX-LOSSRATE: the subflow with the lowest measured
// loss rate (segments marked lost over segments sent; the first on ties).
type LossRatePolicy struct{}

func (LossRatePolicy) Name() string { return "rtx-lossrate" }

func (LossRatePolicy) Pick(timedOut int, subs []Subflow, _ *rand.Rand) int {
	return best(timedOut, subs, func(a, b *Subflow) bool { return a.LossRate < b.LossRate })
}
