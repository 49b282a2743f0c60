package mptcp

import "math/rand/v2"

// CwndPolicy is RTX-CWND: the subflow with the largest congestion window
// (the first on ties).
type CwndPolicy struct{}

func (CwndPolicy) Name() string { return "rtx-cwnd" }

func (CwndPolicy) Pick(timedOut int, subs []Subflow, _ *rand.Rand) int {
	return best(timedOut, subs, func(a, b *Subflow) bool { return a.Cwnd > b.Cwnd })
}
