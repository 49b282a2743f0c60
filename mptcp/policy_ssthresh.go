package mptcp

import "math/rand/v2"

// SsthreshPolicy is RTX-SSTHRESH: the subflow with the largest slow-start
// threshold (the first on ties; a subflow that never lost has the
// infinite threshold and wins).
type SsthreshPolicy struct{}

func (SsthreshPolicy) Name() string { return "rtx-ssthresh" }

func (SsthreshPolicy) Pick(timedOut int, subs []Subflow, _ *rand.Rand) int {
	return best(timedOut, subs, func(a, b *Subflow) bool { return a.Ssthresh > b.Ssthresh })
}
