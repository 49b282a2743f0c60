//go:build !linux

package clock

// Precise is the wall clock where there is no timerfd: its timers are
// time.AfterFunc's (see the Linux build for why it exists).
type Precise struct{ Wall }

// NewPrecise returns the wall clock.
func NewPrecise() (*Precise, error) { return &Precise{}, nil }

// Close does nothing.
func (*Precise) Close() error { return nil }
