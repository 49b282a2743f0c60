package mptcp

import (
	"math/rand/v2"
	"time"
)

// DLCS is paper 004's RTX-DLCS: the subflow with the least expected
// delivery time
//
//	T_i = Σ_{k=0..M} l_i^k (1 − l_i) (d_i + k·RTO_i)
//
// where the k-th term is "lost k times, then delivered": probability
// l_i^k (1 − l_i), time d_i plus k timeouts. The paper's formula images
// are missing from its text; this is the reconstruction from its words
// (M = 3 retransmissions, independent losses). d_i is the one-way delay,
// estimated as SRTT_i/2; l_i the measured loss rate; RTO_i the subflow's
// current RTO. Ties (within TieTolerance) go to the larger cwnd, then the
// larger ssthresh, then the first.
type DLCS struct {
	M int // retransmissions considered (the paper: 3)
}

// TieTolerance is how close two expected delivery times must be to count
// as a tie.
const TieTolerance = time.Microsecond

func (DLCS) Name() string { return "rtx-dlcs" }

// ExpectedDelivery is T_i for one subflow (in seconds).
func (p DLCS) ExpectedDelivery(s *Subflow) float64 {
	l := min(max(s.LossRate, 0), 1)
	d := s.SRTT.Seconds() / 2
	rto := s.RTO.Seconds()
	t, lk := 0.0, 1.0
	for k := 0; k <= p.M; k++ {
		t += lk * (1 - l) * (d + float64(k)*rto)
		lk *= l
	}
	return t
}

func (p DLCS) Pick(timedOut int, subs []Subflow, _ *rand.Rand) int {
	tol := TieTolerance.Seconds()
	return best(timedOut, subs, func(a, b *Subflow) bool {
		ta, tb := p.ExpectedDelivery(a), p.ExpectedDelivery(b)
		switch {
		case ta < tb-tol:
			return true
		case ta > tb+tol:
			return false
		case a.Cwnd != b.Cwnd:
			return a.Cwnd > b.Cwnd
		}
		return a.Ssthresh > b.Ssthresh
	})
}
