package mptcp

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// Subflow is a policy's view of one subflow at the moment of a timeout
// (after the timed-out subflow reacted: its window is 1, its RTO backed
// off).
type Subflow struct {
	ID       int
	Cwnd     uint32 // segments
	Ssthresh uint32 // segments
	// Space is the number of new segments its congestion window admits
	// now.
	Space    int
	SRTT     time.Duration
	RTO      time.Duration
	LossRate float64 // segments marked lost / segments sent, so far
	Usable   bool    // established and joined
}

// Policy picks where a timeout's data-level retransmission goes.
//
// Contract: Pick is called once per retransmission timeout of subflow
// subs[timedOut] with every subflow of the connection (Usable ones only
// may be returned); it returns the index of the subflow that is to
// retransmit the timed-out subflow's outstanding data at the data level.
// Returning timedOut means the subflow's own retransmission is all
// (RTX-SAME). rng is the connection's seeded source; a policy must not
// keep other randomness.
type Policy interface {
	Name() string
	Pick(timedOut int, subs []Subflow, rng *rand.Rand) int
}

// PolicyNames lists the policies in the paper's order.
func PolicyNames() []string {
	return []string{"rtx-same", "rtx-asap", "rtx-cwnd", "rtx-ssthresh", "rtx-lossrate", "rtx-dlcs"}
}

// NewPolicy returns the named policy (PolicyNames).
func NewPolicy(name string) (Policy, error) {
	switch name {
	case "rtx-same":
		return Same{}, nil
	case "rtx-asap":
		return ASAP{}, nil
	case "rtx-cwnd":
		return CwndPolicy{}, nil
	case "rtx-ssthresh":
		return SsthreshPolicy{}, nil
	case "rtx-lossrate":
		return LossRatePolicy{}, nil
	case "rtx-dlcs":
		return DLCS{M: 3}, nil
	}
	return nil, fmt.Errorf("mptcp: unknown retransmission policy %q (have %v)", name, PolicyNames())
}

// best returns the usable index maximising better (a strict "i beats j"),
// the first one on ties; timedOut if none is usable.
func best(timedOut int, subs []Subflow, better func(a, b *Subflow) bool) int {
	pick := -1
	for i := range subs {
		if !subs[i].Usable {
			continue
		}
		if pick < 0 || better(&subs[i], &subs[pick]) {
			pick = i
		}
	}
	if pick < 0 {
		return timedOut
	}
	return pick
}
