package probes

import (
	"math"
	"slices"
	"time"
)

// Result is the outcome of one probe (one flow).
type Result struct {
	Index int
	Tuple FiveTuple
	// Sent is when the first transmission left; Received when the matching
	// reply arrived (zero if unanswered).
	Sent, Received time.Time
	// RTT is Received − Sent: measured from the *first* transmission even
	// when retransmission modelling is on, i.e. the delay the application
	// would see before connect() returns or the segment is acknowledged.
	RTT      time.Duration
	Answered bool
	// Retransmits is how many modelled retransmissions were sent before
	// the reply arrived (always 0 with retransmission modelling off).
	Retransmits int
}

// RTTs returns the RTTs of the answered results, in result order.
func RTTs(rs []Result) []time.Duration {
	out := make([]time.Duration, 0, len(rs))
	for _, r := range rs {
		if r.Answered {
			out = append(out, r.RTT)
		}
	}
	return out
}

// Summary describes a set of RTTs.
type Summary struct {
	Probes     int // results summarised
	Answered   int
	Unanswered int
	Min, Max   time.Duration
	Mean       time.Duration
	// Median is the classic median (mean of the two middle values for an
	// even count); P50/P90/P99 are nearest-rank percentiles, i.e. always
	// an observed value.
	Median        time.Duration
	P50, P90, P99 time.Duration
}

// Summarize summarises the answered results' RTTs and counts the rest.
func Summarize(rs []Result) Summary {
	s := SummarizeRTTs(RTTs(rs))
	s.Probes = len(rs)
	s.Unanswered = len(rs) - s.Answered
	return s
}

// SummarizeRTTs summarises a list of RTTs (all counted as answered). The
// input is not modified.
func SummarizeRTTs(rtts []time.Duration) Summary {
	s := Summary{Probes: len(rtts), Answered: len(rtts)}
	if len(rtts) == 0 {
		return s
	}
	sorted := slices.Clone(rtts)
	slices.Sort(sorted)
	n := len(sorted)
	s.Min, s.Max = sorted[0], sorted[n-1]
	// Sum as float64: an int64 nanosecond sum overflows at ~292 years of
	// total RTT, which a long sweep of slow probes could reach.
	var sum float64
	for _, d := range sorted {
		sum += float64(d)
	}
	s.Mean = time.Duration(math.Round(sum / float64(n)))
	if n%2 == 1 {
		s.Median = sorted[n/2]
	} else {
		s.Median = sorted[n/2-1] + (sorted[n/2]-sorted[n/2-1])/2
	}
	s.P50 = Percentile(sorted, 50)
	s.P90 = Percentile(sorted, 90)
	s.P99 = Percentile(sorted, 99)
	return s
}

// Percentile returns the nearest-rank p-th percentile (0 < p ≤ 100) of an
// ascending slice: the smallest value with at least p % of the values at
// or below it. It returns 0 for an empty slice.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(n)))
	rank = min(max(rank, 1), n)
	return sorted[rank-1]
}
