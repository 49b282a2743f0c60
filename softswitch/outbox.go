package softswitch

// Every effect of the core (channel sends, port transmits, seam calls)
// leaves its locked section through an internal/outbox, in the order the
// core produced it. That is what keeps BARRIER replies behind the
// FLOW_REMOVEDs and errors of earlier FLOW_MODs, and lets a Port hand a
// frame straight to another switch.

// emitLocked queues f; the caller holds s.mu and calls s.drain after
// unlocking.
func (s *Switch) emitLocked(f func()) { s.outbox.PushLocked(f) }

// outboxFullLocked reports whether data-path effects must be dropped.
func (s *Switch) outboxFullLocked() bool { return s.outbox.LenLocked() >= s.cfg.OutboxLimit }

// drain runs queued effects unless another goroutine (or an outer frame of
// this one) is already doing so.
func (s *Switch) drain() { s.outbox.Drain(&s.mu) }

// unlockAndDrain ends a locked section.
func (s *Switch) unlockAndDrain() {
	s.mu.Unlock()
	s.drain()
}
