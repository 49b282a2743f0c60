package pipeline

import (
	"time"

	"github.com/pseudocong/pseudocong/internal/clock"
	"github.com/pseudocong/pseudocong/internal/ring"
	"github.com/pseudocong/pseudocong/softswitch"
	"github.com/pseudocong/pseudocong/softswitch/dataplane"
)

// delayLine holds packets for one delay (the profile's hit delay; the
// packet-out delay for packets the controller hands back) and delivers them in
// the order they entered. One timer serves the whole line (armed for the
// head), and one caller at a time delivers, so packets cannot overtake each
// other even on the wall clock, where every timer fires on its own
// goroutine. All fields are guarded by the pipeline's mu.
type delayLine struct {
	p        *Pipeline
	limit    int
	delay    time.Duration
	q        ring.Buffer[delayItem] // a ring: under steady load the line never empties
	timer    clock.Timer
	draining bool
	stopped  bool
	batch    []softswitch.Hit // fire's, reused (one fire runs at a time)
}

type delayItem struct {
	h    softswitch.Hit
	path string
	due  time.Time
}

func (l *delayLine) init(p *Pipeline, limit int, delay time.Duration) {
	l.p, l.limit, l.delay = p, limit, delay
}

func (l *delayLine) len() int { return l.q.Len() }

// pushLocked queues h to be delivered one delay after now.
func (l *delayLine) pushLocked(h softswitch.Hit, path string, now time.Time) {
	if l.stopped {
		l.p.dropLocked(dataplane.DropStopped)
		return
	}
	if l.len() >= l.limit {
		l.p.dropLocked(dataplane.DropDelayLineFull)
		return
	}
	l.q.Push(delayItem{h: h, path: path, due: now.Add(l.delay)})
	l.armLocked(now)
}

// armLocked makes sure a timer fires when the head is due, unless a
// delivery loop is running (it re-arms when it ends).
func (l *delayLine) armLocked(now time.Time) {
	if l.draining || l.timer != nil || l.len() == 0 || l.stopped {
		return
	}
	l.timer = l.p.clk.AfterFunc(l.q.Head().due.Sub(now), l.fire)
}

// fire delivers every due packet, in order, without holding the lock
// while the switch runs their actions.
func (l *delayLine) fire() {
	p := l.p
	p.mu.Lock()
	l.timer = nil
	if l.draining {
		p.mu.Unlock()
		return
	}
	l.draining = true
	for !l.stopped {
		now := p.clk.Now()
		batch := l.batch[:0]
		for l.len() > 0 && !l.q.Head().due.After(now) {
			it := l.q.Pop()
			p.st.Delivered[it.path]++
			p.metrics.ObserveForwarding(it.path, now.Sub(it.h.At))
			batch = append(batch, it.h)
		}
		if len(batch) == 0 {
			break
		}
		p.mu.Unlock()
		p.sw.DeliverBatch(batch)
		clear(batch) // drop the frames
		p.mu.Lock()
		l.batch = batch[:0]
	}
	l.draining = false
	l.armLocked(p.clk.Now())
	p.mu.Unlock()
}

// stop cancels the timer and returns the packets still in the line.
func (l *delayLine) stop() []delayItem {
	l.stopped = true
	if l.timer != nil {
		l.timer.Stop()
		l.timer = nil
	}
	rest := make([]delayItem, 0, l.q.Len())
	for l.q.Len() > 0 {
		rest = append(rest, l.q.Pop())
	}
	return rest
}
