package tcp

import (
	"time"

	"github.com/pseudocong/pseudocong/internal/clock"
)

// lazyTimer is a deadline with at most one clock event behind it. Moving
// the deadline later (the RTO re-armed on every ACK) costs no event: the
// pending one fires, sees the later deadline and re-arms for it. Events
// are what a simulation pays for, so this keeps an ACK clock from
// creating one timer per ACK.
type lazyTimer struct {
	clk      clock.Clock
	mono     clock.Mono
	deadline int64 // ns since base; 0: disarmed
	eventAt  int64 // when the pending clock event fires; 0: none
	ev       clock.Timer
	fn       func()
	fire     func()
}

func (t *lazyTimer) init(clk clock.Clock, base time.Time, fn func()) {
	t.clk, t.mono, t.fn = clk, clock.NewMono(clk, base), fn
	t.fire = t.onFire
}

func (t *lazyTimer) now() int64 { return t.mono.Now() }

// armAt sets the deadline (ns since base, > 0).
func (t *lazyTimer) armAt(at int64) {
	if at <= 0 {
		at = 1
	}
	t.deadline = at
	if t.eventAt != 0 && t.eventAt <= at {
		return // the pending event comes first and will re-arm
	}
	if t.ev != nil {
		t.ev.Stop()
	}
	now := t.now()
	t.eventAt = max(at, now)
	t.ev = t.clk.AfterFunc(time.Duration(t.eventAt-now), t.fire)
}

func (t *lazyTimer) arm(d time.Duration) { t.armAt(t.now() + int64(d)) }

func (t *lazyTimer) stop()       { t.deadline = 0 }
func (t *lazyTimer) armed() bool { return t.deadline != 0 }

func (t *lazyTimer) onFire() {
	t.eventAt, t.ev = 0, nil
	if t.deadline == 0 {
		return
	}
	if now := t.now(); now < t.deadline {
		t.armAt(t.deadline)
		return
	}
	t.deadline = 0
	t.fn()
}
