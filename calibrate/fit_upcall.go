package calibrate

import (
	"fmt"
	"math"
	"sort"
	"time"
)

// UpcallFit is the profile's upcall section: the off-CPU latency from a
// table miss to the local CPU and how it depends on the time since the
// previous miss,
//
//	delay(g) = base + Latency + (IdleLatency − Latency)·(1 − e^(−g/TimeConstant)),
//
// fitted to the median miss → PACKET_IN delay of each spacing of the
// paced misses (and the isolated ones, the longest spacing). base is what
// the model already has on that path: the channel latency and the
// Packet-In's CPU cost. Open vSwitch's userspace datapath has one thread
// polling the ports, translating a miss and sending its PACKET_IN; it is
// slower to answer after a long sleep, so its misses at 10 per second wait
// longer than at 1 000.
type UpcallFit struct {
	Latency, IdleLatency, TimeConstant time.Duration
	// RateDependent: the idle term is resolved (its size above 3 standard
	// errors and 30 µs, over at least four spacings); otherwise Latency is
	// the median over every miss and the idle keys are 0.
	RateDependent bool
	// SE is the standard error of the idle term's size (IdleLatency −
	// Latency); Resid the residual σ over the spacings' medians.
	SE, Resid time.Duration
	// Base is what was subtracted (channel latency + Packet-In cost).
	Base time.Duration
	// Levels are the spacings' medians, shortest first.
	Levels []UpcallLevel
}

// UpcallLevel is one spacing: the median time since the previous miss,
// the median miss → PACKET_IN delay, and the number of misses.
type UpcallLevel struct {
	Level, Gap, Delay time.Duration
	N                 int
}

// minUpcallIdle is the smallest idle term calibrate claims: below it the
// host's own timer and scheduling noise on a loaded machine dominate.
const minUpcallIdle = 30 * time.Microsecond

// FitUpcall fits UpcallFit to misses (Gap: time since the previous miss,
// Delay: miss sent → PACKET_IN), grouped by their Level. It needs three
// spacings of at least three misses each. It is pure.
func FitUpcall(misses []PacedMiss, base time.Duration) (UpcallFit, error) {
	f := UpcallFit{Base: base}
	by := map[time.Duration][]PacedMiss{}
	for _, m := range misses {
		if m.Gap > 0 && m.Delay > 0 {
			by[m.Level] = append(by[m.Level], m)
		}
	}
	var all []time.Duration
	for lv, ms := range by {
		if len(ms) < 3 {
			continue
		}
		gaps := make([]time.Duration, len(ms))
		ds := make([]time.Duration, len(ms))
		for i, m := range ms {
			gaps[i], ds[i] = m.Gap, m.Delay
		}
		all = append(all, ds...)
		f.Levels = append(f.Levels, UpcallLevel{Level: lv, Gap: Summarise(gaps).Median, Delay: Summarise(ds).Median, N: len(ms)})
	}
	sort.Slice(f.Levels, func(i, j int) bool { return f.Levels[i].Gap < f.Levels[j].Gap })
	if len(f.Levels) < 3 {
		return f, fmt.Errorf("calibrate: upcall fit: %d spacings with 3 or more misses, need 3", len(f.Levels))
	}
	flat := Summarise(all).Median - base
	f.Latency = max(flat, 0)
	if len(f.Levels) < 4 {
		return f, nil
	}
	// Least squares in (a, b) for each time constant on a log grid from a
	// quarter of the shortest spacing to the longest; the lowest residual
	// wins.
	lo, hi := float64(f.Levels[0].Gap)/4, float64(f.Levels[len(f.Levels)-1].Gap)
	best := struct{ sse, a, b, tau, sxx float64 }{sse: math.Inf(1)}
	for i := 0; i <= 200; i++ {
		tau := lo * math.Pow(hi/lo, float64(i)/200)
		var sx, sy float64
		n := float64(len(f.Levels))
		xs := make([]float64, len(f.Levels))
		for j, l := range f.Levels {
			xs[j] = 1 - math.Exp(-float64(l.Gap)/tau)
			sx += xs[j]
			sy += float64(l.Delay)
		}
		mx, my := sx/n, sy/n
		var sxx, sxy float64
		for j, l := range f.Levels {
			sxx += (xs[j] - mx) * (xs[j] - mx)
			sxy += (xs[j] - mx) * (float64(l.Delay) - my)
		}
		if sxx < 1e-9 {
			continue
		}
		b := sxy / sxx
		a := my - b*mx
		var sse float64
		for j, l := range f.Levels {
			r := float64(l.Delay) - a - b*xs[j]
			sse += r * r
		}
		if sse < best.sse {
			best.sse, best.a, best.b, best.tau, best.sxx = sse, a, b, tau, sxx
		}
	}
	if math.IsInf(best.sse, 1) {
		return f, nil
	}
	dof := float64(len(f.Levels) - 3)
	sigma := math.Sqrt(best.sse / dof)
	f.Resid = time.Duration(sigma)
	f.SE = time.Duration(sigma / math.Sqrt(best.sxx))
	idle := time.Duration(best.b)
	if idle > minUpcallIdle && idle > 3*f.SE {
		f.RateDependent = true
		f.Latency = max(time.Duration(best.a)-base, 0)
		f.IdleLatency = max(time.Duration(best.a+best.b)-base, f.Latency)
		f.TimeConstant = time.Duration(best.tau)
	}
	return f, nil
}
