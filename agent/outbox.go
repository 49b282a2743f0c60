package agent

// The outbox carries callbacks (Output, DropHandler, Job.Start, Job.Done)
// out of the locked section. Whoever finds it idle drains it; everybody
// else only appends. That keeps callbacks lock-free, one at a time, and in
// the order the agent produced them, even on the wall clock where timers
// fire on several goroutines, and lets a callback call back into the Agent
// (its work is appended and run by the same drain loop).

// emitLocked queues f; the caller holds a.mu and must call a.drain after
// unlocking.
func (a *Agent) emitLocked(f func()) { a.outbox = append(a.outbox, f) }

// drain runs queued callbacks unless another goroutine (or an outer frame
// of this one) is already doing so.
func (a *Agent) drain() {
	a.mu.Lock()
	if a.draining {
		a.mu.Unlock()
		return
	}
	a.draining = true
	for a.outHead < len(a.outbox) {
		f := a.outbox[a.outHead]
		a.outbox[a.outHead] = nil
		a.outHead++
		if a.outHead == len(a.outbox) { // empty: reuse the backing array
			a.outbox, a.outHead = a.outbox[:0], 0
		}
		a.mu.Unlock()
		f()
		a.mu.Lock()
	}
	a.draining = false
	a.mu.Unlock()
}
