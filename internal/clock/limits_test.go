package clock

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// runaway runs f on its own goroutine and fails the test if it has not
// returned within a generous wall-clock bound. The default limits stop the
// runaway runs below in 0.05-1.5 s (5.5 s for the 10 M-event budget under
// -race); without them f never returns, and the test should say so long
// before go test's own timeout. Two minutes leave room for -race on a
// loaded 2-core machine.
func runaway(t *testing.T, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(2 * time.Minute):
		t.Fatal("the run did not stop within 2 minutes of wall time: no limit caught it")
		return nil
	}
}

// wantLimit checks err is a *LimitError of the given kind whose message
// names the limit and the virtual time reached.
func wantLimit(t *testing.T, err error, which Limit, reached time.Duration) *LimitError {
	t.Helper()
	var le *LimitError
	if !errors.As(err, &le) {
		t.Fatalf("err = %v, want a *LimitError (%s)", err, which)
	}
	if le.Limit != which || le.Reached != reached {
		t.Fatalf("stopped by %s at %v, want %s at %v: %v", le.Limit, le.Reached, which, reached, err)
	}
	msg := err.Error()
	if !strings.Contains(msg, string(which)) || !strings.Contains(msg, fmt.Sprintf("virtual time %v", reached)) {
		t.Fatalf("message %q does not name the limit %s and the time %v", msg, which, reached)
	}
	return le
}

// A timer that re-arms itself with zero delay never lets time move; under
// the default limits the run fails with MaxAtInstant instead of hanging.
func TestSimZeroDelayRearmFailsFast(t *testing.T) {
	s := NewSim(epoch)
	var tick func()
	tick = func() { s.AfterFunc(0, tick) }
	s.AfterFunc(time.Second, tick)
	began := time.Now()
	err := runaway(t, s.TryRun)
	le := wantLimit(t, err, LimitAtInstant, time.Second)
	t.Logf("stopped after %v of wall time: %v", time.Since(began), err)
	if le.Fired != DefaultMaxAtInstant || le.Pending != 1 {
		t.Errorf("fired %d pending %d, want %d and 1 (the next re-arm stays scheduled)", le.Fired, le.Pending, DefaultMaxAtInstant)
	}
	// Run, the form the unit tests use, panics with the same error.
	err = runaway(t, func() (err error) {
		defer func() { err, _ = recover().(error) }()
		s.Run()
		return nil
	})
	wantLimit(t, err, LimitAtInstant, time.Second)
}

// Many events at one instant are fine up to the limit; the count starts
// again at every new instant.
func TestSimAtInstantCountsPerInstant(t *testing.T) {
	s := NewSim(epoch)
	s.SetLimits(Limits{MaxAtInstant: 3})
	for i := range 9 { // three instants with three events each
		s.AfterFunc(time.Duration(i/3)*time.Millisecond, func() {})
	}
	if err := s.TryRun(); err != nil {
		t.Fatalf("3 events at each of 3 instants under MaxAtInstant 3: %v", err)
	}
	// The instant 2 ms has had its three: one more there is too many.
	s.AfterFunc(0, func() {})
	wantLimit(t, s.TryRun(), LimitAtInstant, 2*time.Millisecond)
	s = NewSim(epoch)
	s.SetLimits(Limits{MaxAtInstant: 3})
	for range 4 {
		s.AfterFunc(time.Millisecond, func() {})
	}
	wantLimit(t, s.TryRun(), LimitAtInstant, time.Millisecond)
	if s.Pending() != 1 || s.Fired() != 3 {
		t.Errorf("fired %d pending %d, want 3 and 1", s.Fired(), s.Pending())
	}
}

// A model that re-arms itself a little later each time runs into the event
// budget.
func TestSimEventBudget(t *testing.T) {
	s := NewSim(epoch)
	s.SetLimits(Limits{MaxEvents: 10_000})
	var tick func()
	tick = func() { s.AfterFunc(time.Nanosecond, tick) }
	s.AfterFunc(0, tick)
	le := wantLimit(t, runaway(t, s.TryRun), LimitEvents, 9_999*time.Nanosecond)
	if le.Fired != 10_000 || s.Fired() != 10_000 {
		t.Errorf("fired %d (Sim: %d), want exactly the budget", le.Fired, s.Fired())
	}
	// The count runs across calls: a driver stepping with RunFor is caught
	// as well.
	err := runaway(t, func() error {
		for {
			if err := s.TryRunUntil(s.Now().Add(time.Microsecond)); err != nil {
				return err
			}
		}
	})
	wantLimit(t, err, LimitEvents, 9_999*time.Nanosecond)
}

// Under the default limits a timer re-arming itself every nanosecond fails
// with MaxEvents (it would take 7 days of virtual time, 6·10^14 events, to
// reach the horizon).
func TestSimRearmingTimerFailsWithDefaultBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("fires 10 M events (about a second)")
	}
	s := NewSim(epoch)
	var tick func()
	tick = func() { s.AfterFunc(time.Nanosecond, tick) }
	s.AfterFunc(0, tick)
	began := time.Now()
	err := runaway(t, s.TryRun)
	wantLimit(t, err, LimitEvents, (DefaultMaxEvents-1)*time.Nanosecond)
	t.Logf("stopped after %v of wall time: %v", time.Since(began), err)
}

// A model that comes to rest between operations starts a new count: a
// long-lived Sim driven one operation at a time is never stopped.
func TestSimEventBudgetRestartsWhenIdle(t *testing.T) {
	s := NewSim(epoch)
	s.SetLimits(Limits{MaxEvents: 10})
	for range 100 {
		for range 10 {
			s.AfterFunc(time.Millisecond, func() {})
		}
		if err := s.TryRun(); err != nil {
			t.Fatal(err)
		}
	}
	// Stopping the last pending event brings the model to rest as well:
	// 9 events while a far timer keeps the scheduler busy, the timer
	// stopped, then 10 more.
	for range 9 {
		s.AfterFunc(0, func() {})
	}
	far := s.AfterFunc(time.Hour, func() {})
	if err := s.TryRunUntil(s.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	far.Stop()
	for range 10 {
		s.AfterFunc(0, func() {})
	}
	if err := s.TryRun(); err != nil {
		t.Fatalf("after the model came to rest: %v", err)
	}
	// Without rest the count goes on.
	far = s.AfterFunc(time.Hour, func() {})
	for range 11 {
		s.AfterFunc(0, func() {})
	}
	wantLimit(t, s.TryRunUntil(s.Now().Add(time.Minute)), LimitEvents, s.Elapsed())
	far.Stop()
}

// Nothing fires after the horizon and RunUntil does not pass it.
func TestSimHorizon(t *testing.T) {
	s := NewSim(epoch)
	s.SetLimits(Limits{Horizon: time.Minute})
	fired := 0
	s.AfterFunc(time.Minute, func() { fired++ }) // at the horizon: fires
	s.AfterFunc(time.Minute+1, func() { fired++ })
	le := wantLimit(t, s.TryRun(), LimitHorizon, time.Minute)
	if fired != 1 || s.Pending() != 1 || le.Next != time.Minute+1 {
		t.Fatalf("fired %d pending %d next %v, want 1, 1, 1m0.000000001s", fired, s.Pending(), le.Next)
	}

	s = NewSim(epoch)
	s.SetLimits(Limits{Horizon: time.Minute})
	s.AfterFunc(30*time.Second, func() { fired++ })
	le = wantLimit(t, s.TryRunUntil(epoch.Add(time.Hour)), LimitHorizon, time.Minute)
	if fired != 2 || s.Now() != epoch.Add(time.Minute) || le.Next != time.Hour {
		t.Fatalf("fired %d now %v next %v: RunUntil past the horizon must run up to it and stop there",
			fired, s.Elapsed(), le.Next)
	}
	if err := s.TryRunUntil(epoch.Add(time.Minute)); err != nil {
		t.Fatalf("RunUntil(horizon): %v", err)
	}
}

// A test that polls for a condition on the virtual clock, stepping time
// forward, and never sees it: the default horizon stops it.
func TestSimPollBeyondDefaultHorizonFails(t *testing.T) {
	s := NewSim(epoch)
	done := false // no event will ever set it
	err := runaway(t, func() (err error) {
		defer func() { err, _ = recover().(error) }()
		for !done {
			s.RunFor(time.Second)
		}
		return nil
	})
	wantLimit(t, err, LimitHorizon, DefaultHorizon)
}

// A loop of calls that do nothing (an empty scheduler) is stopped by
// MaxIdleCalls.
func TestSimIdleCallsLimit(t *testing.T) {
	s := NewSim(epoch)
	done := false
	err := runaway(t, func() (err error) {
		defer func() { err, _ = recover().(error) }()
		for !done {
			s.Step()
		}
		return nil
	})
	wantLimit(t, err, LimitIdleCalls, 0)

	// Calls that fire an event or move the clock are progress.
	s = NewSim(epoch)
	s.SetLimits(Limits{MaxIdleCalls: 2})
	for range 10 {
		s.AfterFunc(0, func() {})
		if !s.Step() {
			t.Fatal("Step found no event")
		}
		s.RunFor(time.Millisecond)
		s.Run() // idle: 1
	}
	s.Run() // idle: 2
	wantLimit(t, s.TryRun(), LimitIdleCalls, 10*time.Millisecond)
}

// Limits never change what a run does: a run stopped by its budget and
// resumed after raising it gives the same trace as an unlimited run.
func TestSimLimitsDoNotChangeTheRun(t *testing.T) {
	trace := func(budget uint64) string {
		s := NewSim(epoch)
		s.SetLimits(Limits{MaxEvents: budget})
		r := rand.New(rand.NewPCG(9, 9))
		var b strings.Builder
		var spawn func(id, depth int)
		spawn = func(id, depth int) {
			s.AfterFunc(time.Duration(r.IntN(3))*time.Millisecond, func() {
				fmt.Fprintf(&b, "%d@%d ", id, s.Elapsed())
				if depth < 4 {
					for k := range r.IntN(3) {
						spawn(id*10+k, depth+1)
					}
				}
			})
		}
		for i := range 50 {
			spawn(i, 0)
		}
		for {
			err := s.TryRun()
			if err == nil {
				return b.String()
			}
			var le *LimitError
			if !errors.As(err, &le) || le.Limit != LimitEvents {
				t.Fatal(err)
			}
			s.SetLimits(Limits{MaxEvents: s.Limits().MaxEvents + budget})
		}
	}
	want := trace(0)
	if got := trace(7); got != want {
		t.Fatal("stopping at the budget and resuming changed the run")
	}
	s := NewSim(epoch)
	if s.Limits() != DefaultLimits() {
		t.Fatalf("NewSim limits %+v, want the defaults", s.Limits())
	}
}
