// Package clock gives the sans-I/O cores (switch, agent, TCAM, controller,
// probes) one notion of time that is either the wall clock (live backend) or
// a virtual clock driven by a discrete-event scheduler (sim backend).
package clock

import "time"

// Clock is what a core asks for the time and for timers.
type Clock interface {
	Now() time.Time
	// AfterFunc runs f once, d after Now(). On Wall f runs on its own
	// goroutine; on Precise, on its one dispatcher goroutine in time order;
	// on a virtual clock, inside the scheduler loop.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer can be stopped before it fires.
type Timer interface {
	// Stop prevents the timer from firing; it reports whether it did so.
	Stop() bool
}

// Wall is the real clock.
type Wall struct{}

func (Wall) Now() time.Time { return time.Now() }

func (Wall) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }
