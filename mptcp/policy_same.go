package mptcp

import "math/rand/v2"

// Same is RTX-SAME: the timed-out subflow's own retransmission is all;
// nothing is sent again elsewhere.
type Same struct{}

func (Same) Name() string { return "rtx-same" }

func (Same) Pick(timedOut int, _ []Subflow, _ *rand.Rand) int { return timedOut }
