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
	spare    []func() // the drained batch's array, for the next queue
	draining bool
}

// PushLocked queues f. The caller holds the owner's mutex and calls Drain
// after unlocking it.
func (o *Outbox) PushLocked(f func()) { o.queue = append(o.queue, f) }

// LenLocked is the number of queued effects not yet taken by a drain; the
// caller holds the mutex. A drain takes every queued effect at once, so
// at most twice what an owner lets LenLocked reach are outstanding.
func (o *Outbox) LenLocked() int { return len(o.queue) }

// Drain runs the queued effects, each with mu unlocked, unless another
// goroutine (or an outer frame of this one) is already draining. The caller
// must not hold mu.
//
// It takes the whole queue at once and runs it without the lock, then
// takes what was queued meanwhile: one lock round trip per batch rather
// than per effect, which matters when a data path's receive and delivery
// goroutines share the owner's mutex at a high packet rate. Two arrays
// alternate, so a steady state allocates nothing.
func (o *Outbox) Drain(mu *sync.Mutex) {
	mu.Lock()
	if o.draining {
		mu.Unlock()
		return
	}
	o.draining = true
	for len(o.queue) > 0 {
		batch := o.queue
		o.queue, o.spare = o.spare[:0], nil
		mu.Unlock()
		for i, f := range batch {
			batch[i] = nil // let the effect's captures go
			f()
		}
		mu.Lock()
		o.spare = batch[:0]
	}
	o.draining = false
	mu.Unlock()
}
