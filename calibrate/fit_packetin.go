package calibrate

import (
	"fmt"
	"math"
	"sort"
	"time"
)

// BurstFit describes the Packet-Ins a burst of table misses produced.
type BurstFit struct {
	// PacketInCost is the switch's time per Packet-In (1 / rate ceiling):
	// the median over groups of (gap before the group) / (its size).
	PacketInCost, SEPacketInCost time.Duration
	// Rate is 1/PacketInCost in Packet-Ins per second.
	Rate float64
	// BatchSize is the median size of the groups the Packet-Ins arrive
	// in (1: no batching); Groups lists every group's size.
	BatchSize int
	Groups    []int
	// GapSplit is the inter-arrival gap that separates groups.
	GapSplit time.Duration
	// ReadBurst is the size of regular groups that were found not to be
	// batches (Unbatch): the switch reads its input in bursts but holds
	// no lone miss. 0 otherwise.
	ReadBurst int
}

// MaxReadBurstWait is the longest wait of an isolated miss beyond its
// build and the channel for which regular groups in a burst are still
// read bursts rather than batches. A batching switch holds a lone miss
// for its flush timer (Pica8: a 120 ms period); Open vSwitch's netdev
// datapath reads up to 32 packets per poll (NETDEV_MAX_BURST) and, with
// its thread under SCHED_FIFO, sends a burst's Packet-Ins in regular
// groups of 32, while a lone miss comes back in its upcall time (0.1-0.5
// ms). Modelled as batches (agent.batch_size 32) a lone miss would wait a
// flush timer the switch does not have.
const MaxReadBurstWait = time.Millisecond

// Unbatch refits a burst whose regular groups are not batches, as a
// switch without batching (the burst's throughput is its rate).
func Unbatch(f BurstFit, arrivals []time.Duration) (BurstFit, error) {
	size := f.BatchSize
	u, err := fitBurst(arrivals, false)
	if err != nil {
		return f, err
	}
	u.ReadBurst = size
	return u, nil
}

// FitBurst groups arrival times (any order) into batches and measures the
// rate ceiling. Two Packet-Ins are in the same batch when the gap between
// them is much smaller than the typical gap between batches: the split is
// the largest ratio between consecutive sorted gaps if it exceeds 4 (a
// batched switch sends a group in one write, microseconds apart, and the
// next one a batch's build time later); otherwise there is no batching.
func FitBurst(arrivals []time.Duration) (BurstFit, error) {
	return fitBurst(arrivals, true)
}

func fitBurst(arrivals []time.Duration, batching bool) (BurstFit, error) {
	if len(arrivals) < 8 {
		return BurstFit{}, fmt.Errorf("calibrate: burst fit: %d Packet-Ins, need 8", len(arrivals))
	}
	t := append([]time.Duration(nil), arrivals...)
	sort.Slice(t, func(i, j int) bool { return t[i] < t[j] })
	gaps := make([]time.Duration, len(t)-1)
	for i := range gaps {
		gaps[i] = t[i+1] - t[i]
	}
	sg := append([]time.Duration(nil), gaps...)
	sort.Slice(sg, func(i, j int) bool { return sg[i] < sg[j] })
	split := time.Duration(-1) // no batching: every gap separates
	bestRatio := 4.0
	for i := 0; i+1 < len(sg); i++ {
		lo := math.Max(float64(sg[i]), float64(time.Microsecond))
		r := float64(sg[i+1]) / lo
		// Only splits that leave at least one large gap per 64 Packet-Ins
		// and a majority of small ones count as batching.
		if r > bestRatio && i+1 >= len(sg)/2 && len(sg)-(i+1) >= 1 {
			bestRatio, split = r, (sg[i]+sg[i+1])/2
		}
	}
	var groups []int
	var starts []time.Duration
	n := 1
	starts = append(starts, t[0])
	for i, g := range gaps {
		if split < 0 || g > split {
			groups = append(groups, n)
			n = 1
			starts = append(starts, t[i+1])
			continue
		}
		n++
	}
	groups = append(groups, n)
	// Batching means a train of groups of about one size: at least three
	// groups and the inner ones (the first and last may be cut by a
	// timer) within ±25 % of their median. Otherwise the large gaps are
	// stalls (a switch dropping or pausing), not batches.
	if split >= 0 && (!batching || !regularGroups(groups)) {
		split = -1
		groups = groups[:0]
		starts = starts[:1]
		for i := range gaps {
			groups = append(groups, 1)
			starts = append(starts, t[i+1])
		}
		groups = append(groups, 1)
	}
	f := BurstFit{Groups: groups, GapSplit: max(split, 0)}
	sz := append([]int(nil), groups...)
	sort.Ints(sz)
	f.BatchSize = sz[len(sz)/2]
	if len(groups) < 2 {
		return f, fmt.Errorf("calibrate: burst fit: all %d Packet-Ins arrived in one group; no rate measurable", len(t))
	}
	// Between two releases the CPU built the second group: gap / its
	// size is one Packet-In's cost. The median over groups ignores the
	// first group (partly built before the burst ended, released by a
	// timer) and a last one the flush timer released.
	per := make([]float64, 0, len(starts)-1)
	for i := 0; i+1 < len(starts); i++ {
		per = append(per, float64(starts[i+1]-starts[i])/float64(groups[i+1]))
	}
	sort.Float64s(per)
	med := per[len(per)/2]
	mean, sd := 0.0, 0.0
	for _, v := range per {
		mean += v
	}
	mean /= float64(len(per))
	for _, v := range per {
		sd += (v - mean) * (v - mean)
	}
	sd = math.Sqrt(sd / math.Max(float64(len(per)-1), 1))
	f.PacketInCost = time.Duration(med)
	if f.BatchSize <= 1 {
		// Without regular batches the switch may still write Packet-Ins
		// in irregular clumps (Open vSwitch's handler threads: groups of
		// up to 64 upcalls, sub-µs apart, and stalls between them): the
		// ceiling is the throughput over the whole burst.
		span := float64(t[len(t)-1] - t[0])
		f.PacketInCost = time.Duration(span / float64(len(t)-1))
		f.SEPacketInCost = time.Duration(sd / math.Sqrt(float64(len(per))))
		f.Rate = 1 / f.PacketInCost.Seconds()
		return f, nil
	}
	// SE of a median ≈ 1.253 σ/√n; σ from the middle half (MAD) so the
	// timer-released groups do not inflate it.
	dev := make([]float64, len(per))
	for i, v := range per {
		dev[i] = math.Abs(v - med)
	}
	sort.Float64s(dev)
	sd = math.Min(sd, 1.4826*dev[len(dev)/2])
	f.SEPacketInCost = time.Duration(1.253 * sd / math.Sqrt(float64(len(per))))
	f.Rate = 1 / f.PacketInCost.Seconds()
	return f, nil
}

// FlushFit describes the flush timer from isolated misses: with a
// periodic timer of period T a lone miss waits uniformly in [0, T) after
// its build, so delays spread over T; a timer started by the first queued
// entry gives a constant delay.
type FlushFit struct {
	Periodic bool
	// Period is the flush period (periodic) or the fixed wait (one-shot);
	// SE its standard error.
	Period, SE time.Duration
	// Lattice is set when Period comes from the arrivals' lattice.
	Lattice bool
	// MinDelay, MedianDelay, MaxDelay of the isolated misses.
	MinDelay, MedianDelay, MaxDelay time.Duration
	Samples                         int
}

// FitFlush estimates the flush timer from the miss→Packet-In delays of
// isolated misses (sent far apart at random phases). packetInCost (from
// the burst) and baseline (channel and host overhead, e.g. half an echo
// RTT) are subtracted for a one-shot timer. The spread of a uniform
// sample of n has the unbiased range estimate (max−min)·(n+1)/(n−1).
//
// With the Packet-Ins' arrival times (arrivals, any common origin) the
// period is refined: a periodic timer releases them on a lattice
// anchor + k·T, so T is the spacing that puts every arrival on it
// (latticePeriod). The range estimate only chooses which lattice (T, not
// T/2); the lattice is immune to the host's scheduling tail, which
// inflates the range.
func FitFlush(delays, arrivals []time.Duration, packetInCost, baseline time.Duration) (FlushFit, error) {
	n := len(delays)
	if n < 5 {
		return FlushFit{}, fmt.Errorf("calibrate: flush fit: %d isolated misses, need 5", n)
	}
	d := append([]time.Duration(nil), delays...)
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	f := FlushFit{MinDelay: d[0], MedianDelay: d[n/2], MaxDelay: d[n-1], Samples: n}
	spread := float64(d[n-1] - d[0])
	// Jitter of a software path on a busy host is a few ms at most; a
	// spread beyond max(5 ms, a third of the median wait) is a timer.
	wait := float64(d[n/2] - packetInCost - baseline)
	if spread > math.Max(float64(5*time.Millisecond), wait/3) {
		f.Periodic = true
		f.Period = time.Duration(spread * float64(n+1) / float64(n-1))
		// SE of the range-based estimate of a uniform width: ≈ T/(n+1)·√2.
		f.SE = time.Duration(float64(f.Period) * math.Sqrt2 / float64(n+1))
		if t, se, ok := latticePeriod(arrivals, f.Period); ok {
			f.Period, f.SE, f.Lattice = t, se, true
		}
		return f, nil
	}
	f.Period = time.Duration(math.Max(wait, 0))
	f.SE = time.Duration(spread / 2)
	return f, nil
}

// QueueFit is what a burst larger than the miss queue shows.
type QueueFit struct {
	Sent, Received, Dropped int
	// Limit estimates the miss queue: the Packet-Ins received minus those
	// the switch built while the burst was still arriving; LowerBound is
	// set when nothing was dropped (the queue holds at least Sent).
	Limit      int
	LowerBound bool
}

// FitQueue estimates the miss queue bound from one overflowing burst that
// took burstDur to send, with the switch building one Packet-In per
// packetInCost meanwhile (one more may be in its CPU).
func FitQueue(sent, received int, burstDur, packetInCost time.Duration) QueueFit {
	q := QueueFit{Sent: sent, Received: received, Dropped: sent - received}
	if q.Dropped <= 0 {
		q.Dropped = 0
		q.Limit, q.LowerBound = sent, true
		return q
	}
	built := 0
	if packetInCost > 0 {
		built = int(burstDur / packetInCost)
	}
	if built >= received {
		// The switch kept pace with the burst as it was sent (its
		// Packet-In cost is no more than calibrate's sending interval):
		// the drops are a bound on what it takes in at once, and that
		// bound is what came back.
		built = 0
	}
	q.Limit = max(received-built-1, 1)
	return q
}

// DelayStats summarises one-way delays.
type DelayStats struct {
	N                     int
	Min, P10, Median, P90 time.Duration
	Max, Mean             time.Duration
}

// Summarise computes DelayStats.
func Summarise(ds []time.Duration) DelayStats {
	if len(ds) == 0 {
		return DelayStats{}
	}
	d := append([]time.Duration(nil), ds...)
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	var sum time.Duration
	for _, v := range d {
		sum += v
	}
	q := func(p float64) time.Duration { return d[int(p*float64(len(d)-1))] }
	return DelayStats{N: len(d), Min: d[0], P10: q(0.1), Median: q(0.5), P90: q(0.9), Max: d[len(d)-1],
		Mean: sum / time.Duration(len(d))}
}

// CacheFit is the Tango-style cache test: after filling the table, every
// rule is probed once; rules the chip holds answer at the hit delay, rules
// only in a software table need a slow path. Fast counts the former.
type CacheFit struct {
	Probed, Fast, Slow   int
	Threshold            time.Duration
	IsCache              bool
	FastDelay, SlowDelay DelayStats
}

// FitCache splits the first-probe delays of the rules, in the order they
// were probed (newest rule first), into a fast prefix and a slow rest: a
// cache holding the most recently inserted rules answers for the first
// ones at the hit delay and sends the older ones down a slow path
// (milliseconds: a Packet-In build plus an insert). The split is the
// change point of log(delay) (least within-segment squared error), which
// a few delays stretched by the host's scheduler do not move; it counts
// as a cache when the slow side's median is over 5× the fast side's and
// over 2 ms more, and holds at least max(3, 1 %) of the rules.
func FitCache(delays []time.Duration) CacheFit {
	c := CacheFit{Probed: len(delays)}
	n := len(delays)
	if n == 0 {
		return c
	}
	lg := make([]float64, n)
	for i, d := range delays {
		lg[i] = math.Log(math.Max(float64(d), 1))
	}
	// Prefix sums for the segment SSE.
	ps, ps2 := make([]float64, n+1), make([]float64, n+1)
	for i, v := range lg {
		ps[i+1], ps2[i+1] = ps[i]+v, ps2[i]+v*v
	}
	sse := func(a, b int) float64 { // [a, b)
		m := float64(b - a)
		s := ps[b] - ps[a]
		return ps2[b] - ps2[a] - s*s/m
	}
	minSlow := max(3, n/100)
	cut, best := -1, sse(0, n)
	for k := 1; k <= n-minSlow; k++ {
		if v := sse(0, k) + sse(k, n); v < best {
			cut, best = k, v
		}
	}
	if cut > 0 {
		fast, slow := Summarise(delays[:cut]), Summarise(delays[cut:])
		if float64(slow.Median) > 5*float64(max(fast.Median, time.Microsecond)) && slow.Median-fast.Median > 2*time.Millisecond {
			c.IsCache = true
			c.Fast, c.Slow = cut, n-cut
			c.Threshold = time.Duration(math.Sqrt(float64(fast.Median) * float64(slow.Median)))
			c.FastDelay, c.SlowDelay = fast, slow
			return c
		}
	}
	c.Fast = n
	c.FastDelay = Summarise(delays)
	return c
}

func regularGroups(g []int) bool {
	if len(g) < 3 {
		return false
	}
	inner := g
	if len(g) > 3 {
		inner = g[1 : len(g)-1]
	}
	sz := append([]int(nil), inner...)
	sort.Ints(sz)
	med := float64(sz[len(sz)/2])
	for _, v := range inner {
		if math.Abs(float64(v)-med) > 0.25*med {
			return false
		}
	}
	return med >= 2
}

// latticePeriod finds T within ±35 % of guess such that the arrivals sit
// on anchor + k·T. Each candidate T is scored by how many arrivals lie
// within max(2 ms, T/30) of the lattice through a reference arrival (each
// of the first five tried, in case one of them was delayed), ties broken
// by the squared residuals of those inliers; the least-squares T of the
// inliers given their multiples, with its standard error, is returned. A
// few Packet-Ins delayed by the host's scheduler or a timer restarted once
// then cost inliers, not the period. ok is false when fewer than 60 % of
// the arrivals fit any lattice (no periodic timer).
func latticePeriod(arrivals []time.Duration, guess time.Duration) (time.Duration, time.Duration, bool) {
	if len(arrivals) < 5 || guess <= 0 {
		return 0, 0, false
	}
	a := append([]time.Duration(nil), arrivals...)
	sort.Slice(a, func(i, j int) bool { return a[i] < a[j] })
	type score struct {
		inl int
		sse float64
		t   float64
		ref int
	}
	eval := func(t float64, ref int) score {
		tol := math.Max(float64(2*time.Millisecond), t/30)
		sc := score{t: t, ref: ref}
		for _, v := range a {
			d := float64(v - a[ref])
			r := d - t*math.Round(d/t)
			if math.Abs(r) <= tol {
				sc.inl++
				sc.sse += r * r
			}
		}
		return sc
	}
	better := func(x, y score) bool { return x.inl > y.inl || (x.inl == y.inl && x.sse < y.sse) }
	lo, hi := 0.65*float64(guess), 1.35*float64(guess)
	step := float64(guess) / 4000
	var best score
	for ref := 0; ref < min(5, len(a)); ref++ {
		for t := lo; t <= hi; t += step {
			if sc := eval(t, ref); better(sc, best) {
				best = sc
			}
		}
	}
	if best.inl < (len(a)*6+9)/10 {
		return 0, 0, false
	}
	// Refine on the inliers: regress their offsets on their multiples.
	tol := math.Max(float64(2*time.Millisecond), best.t/30)
	var xs, ys []float64
	for _, v := range a {
		d := float64(v - a[best.ref])
		k := math.Round(d / best.t)
		if math.Abs(d-best.t*k) <= tol {
			xs = append(xs, k)
			ys = append(ys, d)
		}
	}
	x := make([][]float64, len(xs))
	for i, k := range xs {
		x[i] = []float64{1, k}
	}
	lf, err := leastSquares(x, ys)
	if err != nil || lf.Beta[1] <= 0 {
		return time.Duration(best.t), 0, true
	}
	return time.Duration(lf.Beta[1]), time.Duration(lf.SE[1]), true
}
