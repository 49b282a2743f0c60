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
//
// A model that cannot finish (a timer that re-arms itself at the same
// instant, a poll that waits for a condition no event will bring) would
// keep the loop busy forever. Every Sim therefore runs under Limits
// (DefaultLimits unless SetLimits says otherwise): Run, RunUntil, RunFor
// and Step panic with a *LimitError once a limit is passed, TryRun and
// TryRunUntil return it. Limits never change which events fire or in what
// order; they only stop a run that has already gone wrong.
type Sim struct {
	start time.Time
	now   int64 // nanoseconds since start
	seq   uint64
	// q holds the pending events in (time, seq) order. The event firing
	// is out of it before its callback runs, so a callback that panics
	// leaves no trace of it.
	q       eventQueue
	live    int // scheduled, not yet fired or stopped
	stopped int // stopped events still sitting in the queue (lazy deletion)
	fired   uint64
	running bool

	limits Limits
	// okAt and okBusy are Horizon and MaxEvents with 0 (none) as the
	// largest value: an event due no later than okAt, with fewer than
	// okBusy fired in this busy period, at a new instant, passes every
	// limit, which fire tests in two compares before check's full test.
	okAt      int64
	okBusy    uint64
	busy      uint64 // events fired since the scheduler was last empty
	instant   int64  // the instant atInstant counts events of
	atInstant uint64 // events fired at instant
	idleCalls uint64 // consecutive run calls that neither fired nor moved the clock
}

// NewSim returns a virtual clock whose time is start, under DefaultLimits.
func NewSim(start time.Time) *Sim {
	s := &Sim{start: start}
	s.q.shift = calInitShift
	s.SetLimits(DefaultLimits())
	return s
}

// SetLimits replaces the Sim's limits; the zero Limits removes them all.
// The counts so far (events fired, events at this instant) stay, so a run
// stopped by a limit can go on after raising it.
func (s *Sim) SetLimits(l Limits) {
	s.limits = l
	s.okAt, s.okBusy = math.MaxInt64, math.MaxUint64
	if l.Horizon > 0 {
		s.okAt = int64(l.Horizon)
	}
	if l.MaxEvents > 0 {
		s.okBusy = l.MaxEvents
	}
}

// Limits returns the Sim's current limits.
func (s *Sim) Limits() Limits { return s.limits }

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

// Post schedules f like AfterFunc but returns no handle: the event cannot
// be stopped, and in exchange it costs no allocation. It is for hot paths
// that never cancel (a link's next delivery); it takes a sequence number
// exactly as AfterFunc does, so it fires in the same (time, insertion)
// order AfterFunc would.
func (s *Sim) Post(d time.Duration, f func()) {
	if f == nil {
		panic("clock: Sim.Post with nil func")
	}
	if d < 0 {
		d = 0
	}
	at := s.now + int64(d)
	if at < s.now {
		at = math.MaxInt64
	}
	s.add(entry{at: at, f: f})
}

func (s *Sim) schedule(at int64, f func()) *simTimer {
	if f == nil {
		panic("clock: Sim.AfterFunc with nil func")
	}
	t := &simTimer{sim: s, f: f}
	s.add(entry{at: at, t: t})
	return t
}

// add gives e the next sequence number and queues it.
func (s *Sim) add(e entry) {
	s.seq++
	e.seq = s.seq
	if e.at < s.q.floor() {
		// Only after a look ahead (RunUntil stopping at its bound, Next)
		// has moved the queue past now. Nothing queued is due before now.
		s.q.lower(s.now)
	}
	s.q.push(e)
	s.live++
}

// Pending is the number of events scheduled and neither fired nor stopped.
func (s *Sim) Pending() int { return s.live }

// Fired is the number of events that have run so far.
func (s *Sim) Fired() uint64 { return s.fired }

// Next reports the time of the next live event, if any.
func (s *Sim) Next() (time.Time, bool) {
	e := s.dropStoppedTop()
	if e == nil {
		return time.Time{}, false
	}
	return s.start.Add(time.Duration(e.at)), true
}

// Step runs the next live event and reports whether there was one. It
// panics with a *LimitError if running it would pass one of the limits.
func (s *Sim) Step() bool {
	s.enter()
	defer s.leave()
	before, now := s.fired, s.now
	ok, err := s.step()
	mustNot(s.progress(before, now, err))
	return ok
}

// Run processes events until none is left. A model that reschedules itself
// forever cannot finish: Run then panics with a *LimitError once the Sim's
// limits are passed (TryRun returns it instead). Bound open-ended runs
// with RunUntil.
func (s *Sim) Run() { mustNot(s.TryRun()) }

// TryRun is Run that returns a *LimitError instead of panicking. After an
// error the clock stands at the last event fired (the one that would have
// passed the limit stays scheduled).
func (s *Sim) TryRun() error {
	s.enter()
	defer s.leave()
	before, now := s.fired, s.now
	var err error
	for ok := true; ok && err == nil; {
		ok, err = s.step()
	}
	return s.progress(before, now, err)
}

// RunUntil processes every event due at or before t, then sets the clock to
// t (if t is later than Now()). Events due after t stay scheduled. It
// panics with a *LimitError if that passes one of the limits (see
// TryRunUntil).
func (s *Sim) RunUntil(t time.Time) { mustNot(s.TryRunUntil(t)) }

// TryRunUntil is RunUntil that returns a *LimitError instead of panicking.
// A bound past the horizon runs the events up to the horizon, sets the
// clock to the horizon and returns the error.
func (s *Sim) TryRunUntil(t time.Time) error {
	s.enter()
	defer s.leave()
	before, now := s.fired, s.now
	limit := int64(t.Sub(s.start)) // saturates for far-away t
	bound := limit
	if h := int64(s.limits.Horizon); h > 0 && bound > h {
		bound = h
	}
	for {
		e := s.dropStoppedTop()
		if e == nil || e.at > bound {
			break
		}
		if err := s.fire(e); err != nil {
			return s.progress(before, now, err)
		}
	}
	if bound > s.now {
		s.now = bound
	}
	var err error
	if bound < limit {
		err = s.limitError(LimitHorizon, limit)
	}
	return s.progress(before, now, err)
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

// step runs the next live event, unless that would pass a limit; the
// caller holds the running flag.
func (s *Sim) step() (bool, error) {
	e := s.dropStoppedTop()
	if e == nil {
		return false, nil
	}
	if err := s.fire(e); err != nil {
		return false, err
	}
	return true, nil
}

// fire runs e, the queue's front, which the caller has made a live one
// (dropStoppedTop), unless that would pass a limit.
func (s *Sim) fire(e *entry) error {
	at := e.at
	if at > s.okAt || s.busy >= s.okBusy || at == s.instant {
		if err := s.check(at); err != nil {
			return err
		}
	}
	f := e.f
	if t := e.t; t != nil {
		t.state = timerFired
		f = t.f
		t.f = nil // let the closure be collected even if the handle lives on
	}
	s.q.pop() // e is gone from here on
	if at != s.instant {
		s.instant, s.atInstant = at, 0
	}
	s.atInstant++
	s.busy++
	s.now = at
	s.live--
	s.fired++
	f()
	if s.live == 0 {
		s.busy = 0 // the model came to rest: whatever follows is a new busy period
	}
	return nil
}

// check reports the limit that firing an event due at `at` would pass.
func (s *Sim) check(at int64) error {
	l := &s.limits
	switch {
	case l.Horizon > 0 && at > int64(l.Horizon):
		return s.limitError(LimitHorizon, at)
	case l.MaxEvents > 0 && s.busy >= l.MaxEvents:
		return s.limitError(LimitEvents, at)
	case l.MaxAtInstant > 0 && at == s.instant && s.atInstant >= l.MaxAtInstant:
		return s.limitError(LimitAtInstant, at)
	}
	return nil
}

// progress counts calls that did nothing: no event fired and the clock did
// not move. Nothing can change on a virtual clock between such calls, so a
// caller looping on them (for !done { s.Step() }) waits forever.
func (s *Sim) progress(fired uint64, now int64, err error) error {
	if err != nil {
		return err
	}
	if s.fired != fired || s.now != now {
		s.idleCalls = 0
		return nil
	}
	s.idleCalls++
	if max := s.limits.MaxIdleCalls; max > 0 && s.idleCalls > max {
		s.idleCalls = 0 // a caller that recovers starts a fresh count
		return s.limitError(LimitIdleCalls, now)
	}
	return nil
}

func mustNot(err error) {
	if err != nil {
		panic(err)
	}
}

// dropStoppedTop removes the stopped events at the front of the queue and
// returns the first live one, nil if there is none.
func (s *Sim) dropStoppedTop() *entry {
	for {
		e := s.q.front()
		if e == nil || !e.stopped() {
			return e
		}
		s.q.pop()
		s.stopped--
	}
}

// compact removes stopped events once they make up most of the queue, so
// a model that arms and stops many timers (retransmission timers, mostly
// stopped) does not grow the queue without bound.
func (s *Sim) compact() {
	if s.stopped < 64 || s.stopped < s.live {
		return
	}
	s.q.filter((*entry).stopped)
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
// queue and is skipped when popped (lazy deletion).
func (t *simTimer) Stop() bool {
	if t.state != timerPending {
		return false
	}
	t.state = timerStopped
	t.f = nil
	s := t.sim
	s.live--
	s.stopped++
	if s.live == 0 {
		s.busy = 0
	}
	s.compact()
	return true
}
