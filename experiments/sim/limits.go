package sim

import (
	"math"
	"time"

	"github.com/pseudocong/pseudocong/internal/clock"
)

// Per-flow allowances of a run's limits, far above what the runs of
// `make run` need (paper spec, measured with `pseudocong experiment run
// paper --backend sim`, report.md "What the model did"):
//
//   - events: at most 18 per flow (handshake, 10 pps: 4 479 events for 250
//     flows; fig5's 4 000 flows fire 39 353). 1 000 per flow plus 1 M is
//     over 50× that, and a runaway model reaches it in about a second.
//   - virtual time: a run lasts the warm-up, the sending (flows / rate) and
//     a tail while the switch works off its backlog and the probes' timers
//     run out: at most 41 s (0.17 s per flow, handshake on 3 500 base
//     rules). An hour (SYN retransmissions back off for about two minutes)
//     plus a second per flow is over 20× that.
const (
	eventsPerFlow = 1_000
	eventsBase    = 1_000_000
	tailPerFlow   = time.Second
	tailBase      = time.Hour
	// eventsPerBulkSecond allows for a bulk run's events per virtual
	// second: 20× the 0.1 M of bulk flows on 100 Mbit/s links.
	eventsPerBulkSecond = 2_000_000
)

// limits returns the scenario's limits: sc.Limits if set, else ones derived
// from its size, so that a model that cannot finish (a timer re-arming
// itself, a wait for a condition that never comes) fails the run with a
// *clock.LimitError within seconds instead of hanging the experiment.
func (sc Scenario) limits() clock.Limits {
	if sc.Limits != (clock.Limits{}) {
		return sc.Limits
	}
	l := clock.DefaultLimits()
	flows := uint64(max(sc.Flows, 0))
	l.MaxEvents = eventsBase + eventsPerFlow*flows
	if sc.SeriesInterval > 0 {
		// One sampling event per interval while the model is busy, up to
		// the horizon below.
		l.MaxEvents += uint64(min(float64(tailBase+time.Duration(flows)*tailPerFlow)/float64(sc.SeriesInterval)+1, 1e9))
	}
	if sc.Kind == Bulk && sc.TCP != nil {
		// Bulk flows fill their links: events grow with the virtual time,
		// not the flow count (bulk.go: a 100 Mbit/s pair of links fires
		// about 0.1 M per second).
		l.MaxEvents += uint64(min(sc.TCP.Duration.Seconds()*eventsPerBulkSecond, 1e10))
	}
	send := float64(sc.Flows) / sc.Rate * float64(time.Second)
	horizon := float64(warmUp) + send + float64(tailBase) + float64(sc.Flows)*float64(tailPerFlow)
	// math.MaxInt64 nanoseconds is 292 years; a scenario that long (a rate
	// close to zero) gets no horizon rather than an overflowed one.
	if horizon < math.MaxInt64/2 {
		l.Horizon = time.Duration(horizon)
	} else {
		l.Horizon = 0
	}
	return l
}
