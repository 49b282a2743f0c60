// Package outbox carries a core's effects (sends, transmits, callbacks) out
// of its locked section. Whoever finds the outbox idle drains it; everybody
// else only appends. Effects therefore run without the owner's lock, one at
// a time and in the order the core produced them, also across goroutines on
// the wall clock, and an effect may call back into its core: the effects it
// produces are appended and run by the same drain loop. The switch core
// relies on this to keep BARRIER replies behind the FLOW_REMOVEDs and
// errors of earlier FLOW_MODs; the agent to call its Output and job
// callbacks in order.
package outbox

import "sync"

// Outbox is a FIFO of effects guarded by its owner's mutex. The zero value
// is ready to use.
type Outbox struct {
	queue    []func()
	head     int
	draining bool
}

// PushLocked queues f. The caller holds the owner's mutex and calls Drain
// after unlocking it.
func (o *Outbox) PushLocked(f func()) { o.queue = append(o.queue, f) }

// LenLocked is the number of queued effects; the caller holds the mutex.
func (o *Outbox) LenLocked() int { return len(o.queue) - o.head }

// Drain runs the queued effects, each with mu unlocked, unless another
// goroutine (or an outer frame of this one) is already draining. The caller
// must not hold mu.
func (o *Outbox) Drain(mu *sync.Mutex) {
	mu.Lock()
	if o.draining {
		mu.Unlock()
		return
	}
	o.draining = true
	for o.head < len(o.queue) {
		f := o.queue[o.head]
		o.queue[o.head] = nil
		o.head++
		if o.head == len(o.queue) { // empty: reuse the backing array
			o.queue, o.head = o.queue[:0], 0
		}
		mu.Unlock()
		f()
		mu.Lock()
	}
	o.draining = false
	mu.Unlock()
}
