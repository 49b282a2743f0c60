package agent

// The agent's callbacks (Output, DropHandler, Job.Start, Job.Done) leave its
// locked section through an internal/outbox: lock-free, one at a time and in
// order even when wall-clock timers fire on several goroutines, and free to
// call back into the Agent.

// emitLocked queues f; the caller holds a.mu and must call a.drain after
// unlocking.
func (a *Agent) emitLocked(f func()) { a.outbox.PushLocked(f) }

// drain runs queued callbacks unless another goroutine (or an outer frame
// of this one) is already doing so.
func (a *Agent) drain() { a.outbox.Drain(&a.mu) }
