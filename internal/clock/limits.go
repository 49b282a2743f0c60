package clock

import (
	"fmt"
	"time"
)

// Limits bound a Sim's run so that a model that cannot finish fails with a
// *LimitError within seconds of wall time instead of looping until the test
// or experiment is killed. A zero field means no limit of that kind.
//
// The counts run across calls, so a driver that calls RunFor in a loop is
// bounded as well as one Run.
type Limits struct {
	// MaxEvents is how many events may fire in a row without the
	// scheduler running empty (no event left pending after one fired). It
	// stops a model that keeps rescheduling itself a little later each
	// time. A model that comes to rest starts a new count, so a long-lived
	// Sim driven one operation at a time (a benchmark) is not limited.
	MaxEvents uint64
	// MaxAtInstant is how many events may fire at one virtual instant. It
	// stops a timer that re-arms itself with zero delay (time never moves,
	// so no horizon would ever be reached).
	MaxAtInstant uint64
	// Horizon is the latest virtual time, since the start, the clock may
	// reach: no event due later fires and RunUntil does not go past it.
	Horizon time.Duration
	// MaxIdleCalls is how many calls of Run, RunUntil, RunFor or Step in a
	// row may do nothing at all (fire no event, leave the clock where it
	// was). Between such calls nothing can change on a virtual clock, so a
	// caller looping on them waits for a condition that never comes.
	MaxIdleCalls uint64
}

// The defaults are far above anything the project's legitimate runs do and
// still stop a runaway run within seconds (measured on the project's 2-core
// machine, where the cheapest runaway loop fires an event every 50-100 ns):
//
//   - events in a row: the biggest cell of `make run` (paper spec, fig5,
//     4 000 flows) fires 39 353 events, the busiest unit test (the agent's
//     100 000-miss storm) a few hundred thousand. 10 M is 250× the paper's
//     biggest cell; a cheap runaway loop reaches it in about a second.
//   - events at one instant: `make run` fires at most 25 at one instant
//     (a batch of Packet-Ins), the unit tests at most 20; a zero-delay
//     self-re-arming timer reaches 1 M in about 50 ms.
//   - horizon: the longest paper cell covers 411 s of virtual time and the
//     longest OpenFlow timeout is 65 535 s (18.2 h); 7 days is far beyond
//     both, and a loop polling every virtual second reaches it after
//     604 800 iterations (tens of milliseconds).
//   - idle calls: 1 M calls in a row that do nothing take milliseconds; no
//     legitimate driver makes more than a few.
const (
	DefaultMaxEvents    = 10_000_000
	DefaultMaxAtInstant = 1_000_000
	DefaultHorizon      = 7 * 24 * time.Hour
	DefaultMaxIdleCalls = 1_000_000
)

// DefaultLimits are the limits NewSim starts with.
func DefaultLimits() Limits {
	return Limits{
		MaxEvents:    DefaultMaxEvents,
		MaxAtInstant: DefaultMaxAtInstant,
		Horizon:      DefaultHorizon,
		MaxIdleCalls: DefaultMaxIdleCalls,
	}
}

// Limit names one of the Limits.
type Limit string

const (
	LimitEvents    Limit = "MaxEvents"
	LimitAtInstant Limit = "MaxAtInstant"
	LimitHorizon   Limit = "Horizon"
	LimitIdleCalls Limit = "MaxIdleCalls"
)

// LimitError is how a Sim reports a run stopped by one of its Limits.
type LimitError struct {
	Limit Limit
	// Max is the limit's value: a count, or the horizon in nanoseconds.
	Max uint64
	// Reached is the virtual time (since the start) the clock stands at,
	// Next the time of the event (or RunUntil bound) that would have
	// passed the limit.
	Reached, Next time.Duration
	// Fired and Pending are the Sim's event counts when it stopped.
	Fired   uint64
	Pending int
}

func (e *LimitError) Error() string {
	var what, hint string
	switch e.Limit {
	case LimitEvents:
		what = fmt.Sprintf("%d events in a row without the scheduler running empty", e.Max)
		hint = "a model that keeps rescheduling itself?"
	case LimitAtInstant:
		what = fmt.Sprintf("%d events at one instant", e.Max)
		hint = "a timer re-arming itself with zero delay?"
	case LimitHorizon:
		what = fmt.Sprintf("its horizon of %v (next event or bound at %v)", time.Duration(e.Max), e.Next)
		hint = "a model polling for a condition that never comes?"
	case LimitIdleCalls:
		what = fmt.Sprintf("%d calls in a row that fired nothing and did not move the clock", e.Max)
		hint = "a loop waiting for a condition no event will bring?"
	default:
		what = string(e.Limit)
	}
	return fmt.Sprintf("clock: virtual-clock run stopped by %s (%s) at virtual time %v, %d events fired, %d pending: %s",
		e.Limit, what, e.Reached, e.Fired, e.Pending, hint)
}

func (s *Sim) limitError(which Limit, next int64) *LimitError {
	e := &LimitError{Limit: which, Reached: time.Duration(s.now), Next: time.Duration(next),
		Fired: s.fired, Pending: s.live}
	switch which {
	case LimitEvents:
		e.Max = s.limits.MaxEvents
	case LimitAtInstant:
		e.Max = s.limits.MaxAtInstant
	case LimitHorizon:
		e.Max = uint64(s.limits.Horizon)
	case LimitIdleCalls:
		e.Max = s.limits.MaxIdleCalls
	}
	return e
}
