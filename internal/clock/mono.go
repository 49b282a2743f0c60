package clock

import "time"

// Mono reads a Clock as int64 nanoseconds since a base time, the form the
// per-packet paths (links, TCP endpoints) compute in. On a *Sim it reads
// the scheduler's own nanoseconds: no time.Time arithmetic, which at
// billions of packets is a visible share of a run. On any other clock it
// is Now().Sub(base). Either way the value is the same.
type Mono struct {
	clk     Clock
	base    time.Time
	sim     *Sim
	simBase int64 // base - sim.start, in ns
}

// NewMono reads clk relative to base.
func NewMono(clk Clock, base time.Time) Mono {
	m := Mono{clk: clk, base: base}
	if s, ok := clk.(*Sim); ok {
		// base - start is exact unless it saturates; use the fast path
		// only when adding it back gives base again.
		if d := base.Sub(s.start); s.start.Add(d).Equal(base) {
			m.sim, m.simBase = s, int64(d)
		}
	}
	return m
}

// Now is the clock's time in ns since base.
func (m *Mono) Now() int64 {
	if m.sim != nil { // kept small enough to inline into the hot paths
		return m.sim.now - m.simBase
	}
	return m.slow()
}

func (m *Mono) slow() int64 { return int64(m.clk.Now().Sub(m.base)) }

// Sim is the virtual clock behind m, nil on any other clock.
func (m *Mono) Sim() *Sim { return m.sim }

// Base is the time Now counts from.
func (m *Mono) Base() time.Time { return m.base }
