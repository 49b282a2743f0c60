package mptcp

// Scheduler picks the subflow for the next new data-level segment.
//
// Contract: Pick gets every subflow's view (Subflow.Space > 0 means its
// congestion window admits a new segment now) and returns the index of a
// Usable subflow with Space > 0, or -1 to send nothing now. It is called
// once per segment, so it sees the previous segment's effect on Space.
type Scheduler interface {
	Name() string
	Pick(subs []Subflow) int
}

// LowestRTT is Linux's default scheduler (mptcp_subflow_get_send's
// lowest-latency choice, the out-of-tree "default" scheduler before it):
// among the subflows with window space, the one with the smallest
// smoothed RTT; the first on ties.
type LowestRTT struct{}

func (LowestRTT) Name() string { return "lowest-rtt" }

func (LowestRTT) Pick(subs []Subflow) int {
	pick := -1
	for i := range subs {
		s := &subs[i]
		if !s.Usable || s.Space <= 0 {
			continue
		}
		if pick < 0 || s.SRTT < subs[pick].SRTT {
			pick = i
		}
	}
	return pick
}
