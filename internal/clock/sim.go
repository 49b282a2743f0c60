package clock

import (
	"math"
	"time"
)

// Sim is a virtual clock driven by a discrete-event scheduler: the sim
// backend's Clock.
//
// Time only moves when the scheduler pops an event: Now() is the start time
// until the first event fires, and during an event it is exactly that
// event's time. Events fire in (time, insertion sequence) order, so two
// events due at the same instant fire first-scheduled-first and a run is
// byte-for-byte reproducible.
//
// Sim is single-goroutine by design. The sans-I/O cores (switch, agent,
// TCAM, controller, probes) run *inside* the scheduler loop: every piece of
// their work is an event callback, and every callback may schedule further
// events. Nothing may call a Sim from another goroutine, and a callback must
// not call Run, RunUntil or Step (that would re-enter the loop; it panics).
type Sim struct {
	start   time.Time
	now     int64 // nanoseconds since start
	seq     uint64
	heap    eventHeap
	live    int // scheduled, not yet fired or stopped
	stopped int // stopped events still sitting in the heap (lazy deletion)
	fired   uint64
	running bool
}

// NewSim returns a virtual clock whose time is start.
func NewSim(start time.Time) *Sim {
	return &Sim{start: start}
}

// Now returns the virtual time: the time of the event being processed, or
// of the last event / RunUntil bound once the loop is idle.
func (s *Sim) Now() time.Time { return s.start.Add(time.Duration(s.now)) }

// Elapsed is Now() minus the start time.
func (s *Sim) Elapsed() time.Duration { return time.Duration(s.now) }

// AfterFunc schedules f to run inside the scheduler loop d after Now().
// A negative d is treated as zero: the event runs after everything already
// due at Now(), never in the past.
func (s *Sim) AfterFunc(d time.Duration, f func()) Timer {
	if d < 0 {
		d = 0
	}
	at := s.now + int64(d)
	if at < s.now { // overflow: "never" in practice
		at = math.MaxInt64
	}
	return s.schedule(at, f)
}

// At schedules f to run at the absolute virtual time t (clamped to Now()).
func (s *Sim) At(t time.Time, f func()) Timer {
	return s.AfterFunc(t.Sub(s.Now()), f)
}

func (s *Sim) schedule(at int64, f func()) *simTimer {
	if f == nil {
		panic("clock: Sim.AfterFunc with nil func")
	}
	t := &simTimer{sim: s, f: f}
	s.seq++
	s.heap.push(entry{at: at, seq: s.seq, t: t})
	s.live++
	return t
}

// Pending is the number of events scheduled and neither fired nor stopped.
func (s *Sim) Pending() int { return s.live }

// Fired is the number of events that have run so far.
func (s *Sim) Fired() uint64 { return s.fired }

// Next reports the time of the next live event, if any.
func (s *Sim) Next() (time.Time, bool) {
	s.dropStoppedTop()
	if len(s.heap) == 0 {
		return time.Time{}, false
	}
	return s.start.Add(time.Duration(s.heap[0].at)), true
}

// Step runs the next live event and reports whether there was one.
func (s *Sim) Step() bool {
	s.enter()
	defer s.leave()
	return s.step()
}

// Run processes events until none is left. A model that reschedules itself
// forever never returns from Run; bound such runs with RunUntil.
func (s *Sim) Run() {
	s.enter()
	defer s.leave()
	for s.step() {
	}
}

// RunUntil processes every event due at or before t, then sets the clock to
// t (if t is later than Now()). Events due after t stay scheduled.
func (s *Sim) RunUntil(t time.Time) {
	s.enter()
	defer s.leave()
	limit := int64(t.Sub(s.start))
	for {
		s.dropStoppedTop()
		if len(s.heap) == 0 || s.heap[0].at > limit {
			break
		}
		s.step()
	}
	if limit > s.now {
		s.now = limit
	}
}

// RunFor is RunUntil(Now() + d).
func (s *Sim) RunFor(d time.Duration) { s.RunUntil(s.Now().Add(d)) }

func (s *Sim) enter() {
	if s.running {
		panic("clock: Sim scheduler re-entered from inside an event")
	}
	s.running = true
}

func (s *Sim) leave() { s.running = false }

// step pops and runs one live event; the caller holds the running flag.
func (s *Sim) step() bool {
	for len(s.heap) > 0 {
		e := s.heap.pop()
		t := e.t
		if t.state == timerStopped {
			s.stopped--
			continue
		}
		s.now = e.at
		t.state = timerFired
		s.live--
		s.fired++
		f := t.f
		t.f = nil // let the closure be collected even if the handle lives on
		f()
		return true
	}
	return false
}

func (s *Sim) dropStoppedTop() {
	for len(s.heap) > 0 && s.heap[0].t.state == timerStopped {
		s.heap.pop()
		s.stopped--
	}
}

// compact removes stopped events once they make up most of the heap, so a
// model that arms and stops many timers (retransmission timers, mostly
// stopped) does not grow the heap without bound.
func (s *Sim) compact() {
	if s.stopped < 64 || s.stopped < s.live {
		return
	}
	kept := s.heap[:0]
	for _, e := range s.heap {
		if e.t.state != timerStopped {
			kept = append(kept, e)
		}
	}
	clear(s.heap[len(kept):])
	s.heap = kept
	s.heap.init()
	s.stopped = 0
}

const (
	timerPending uint8 = iota
	timerFired
	timerStopped
)

// simTimer is the handle AfterFunc returns; it is also the event payload.
type simTimer struct {
	sim   *Sim
	f     func()
	state uint8
}

// Stop cancels the event if it has not fired yet. The entry stays in the
// heap and is skipped when popped (lazy deletion).
func (t *simTimer) Stop() bool {
	if t.state != timerPending {
		return false
	}
	t.state = timerStopped
	t.f = nil
	s := t.sim
	s.live--
	s.stopped++
	s.compact()
	return true
}
