package probes

import (
	"fmt"
	"slices"
	"strconv"
	"time"
)

// Bins returns the bin edges for classifying RTTs of kind k under profile
// p: every cumulative retransmission time, then the give-up time. With n
// edges there are n+1 bins: [0,e0), [e0,e1), …, [e(n-1),∞). Bin i means
// "the stack would have retransmitted i times before the reply came"; the
// last bin means "the stack would have given up".
//
// Berkeley SYN: edges 5.8s, 24s, 75s → [0,5.8), [5.8,24), [24,75), [75,∞).
// Berkeley data: edges 1.5s, 4.5s, 10.5s, 22.5s, … 478.5s, 542.5s.
func Bins(p TimerProfile, k Kind) []time.Duration {
	return append(p.Retransmits(k), p.GiveUp(k))
}

// BinOf returns the bin of rtt: the number of edges ≤ rtt. An RTT exactly
// on an edge belongs to the upper bin (the timer fired as the reply
// arrived, so the retransmission happened).
func BinOf(rtt time.Duration, edges []time.Duration) int {
	i, found := slices.BinarySearch(edges, rtt)
	if found {
		// Skip equal edges (a degenerate, unvalidated edge list).
		for i < len(edges) && edges[i] == rtt {
			i++
		}
	}
	return i
}

// Count returns how many RTTs fall in each of the len(edges)+1 bins.
func Count(rtts []time.Duration, edges []time.Duration) []int {
	counts := make([]int, len(edges)+1)
	for _, r := range rtts {
		counts[BinOf(r, edges)]++
	}
	return counts
}

// Classify returns the share (0–1) of RTTs in each bin. With no RTTs every
// share is 0 (never NaN).
func Classify(rtts []time.Duration, edges []time.Duration) []float64 {
	return Shares(Count(rtts, edges))
}

// Shares turns bin counts into fractions of their total.
func Shares(counts []int) []float64 {
	total := 0
	for _, c := range counts {
		total += c
	}
	out := make([]float64, len(counts))
	if total == 0 {
		return out
	}
	for i, c := range counts {
		out[i] = float64(c) / float64(total)
	}
	return out
}

// BinLabels names the bins for reports: "[0s,5.8s)", …, "[75s,inf)".
func BinLabels(edges []time.Duration) []string {
	out := make([]string, len(edges)+1)
	lo := "0s"
	for i, e := range edges {
		out[i] = fmt.Sprintf("[%s,%s)", lo, e)
		lo = e.String()
	}
	out[len(edges)] = fmt.Sprintf("[%s,inf)", lo)
	return out
}

// Retransmissions says how many retransmissions an RTT implies for kind k
// under profile p, and whether the stack would have given up first (then n
// is the number of retransmissions made before giving up).
func Retransmissions(p TimerProfile, k Kind, rtt time.Duration) (n int, failed bool) {
	return BinOf(rtt, p.Retransmits(k)), rtt >= p.GiveUp(k)
}

// RTTBuckets returns Prometheus-style histogram upper bounds in seconds,
// spanning 50 µs to 200 s on a 1-2-5 scale, plus every bin edge (SYN and
// data, up to 200 s) of the given profiles, so that histogram quantiles
// can be read against the timer edges exactly.
func RTTBuckets(profiles ...TimerProfile) []float64 {
	const top = 200 * time.Second
	var ds []time.Duration
	for d := 50 * time.Microsecond; d <= top; {
		ds = append(ds, d)
		s := strconv.FormatInt(int64(d), 10)
		switch s[0] { // 1 → 2 → 5 → 10
		case '1':
			d *= 2
		case '2':
			d = d / 2 * 5
		default:
			d *= 2
		}
	}
	for _, p := range profiles {
		for _, k := range []Kind{KindSYN, KindData} {
			for _, e := range Bins(p, k) {
				if e <= top {
					ds = append(ds, e)
				}
			}
		}
	}
	slices.Sort(ds)
	ds = slices.Compact(ds)
	out := make([]float64, len(ds))
	for i, d := range ds {
		out[i] = d.Seconds()
	}
	return out
}

// CountResults bins the answered results by RTT and puts every unanswered
// one in the last bin ("the stack would have given up"). That is right when
// the probe waited at least the give-up time (DefaultTimeout, 200 s, covers
// Berkeley SYN's 75 s), which is how the paper's ≥ 75 s shares are read.
func CountResults(rs []Result, edges []time.Duration) []int {
	counts := Count(RTTs(rs), edges)
	for _, r := range rs {
		if !r.Answered {
			counts[len(edges)]++
		}
	}
	return counts
}

// ClassifyResults is Shares(CountResults(rs, edges)).
func ClassifyResults(rs []Result, edges []time.Duration) []float64 {
	return Shares(CountResults(rs, edges))
}
