package softswitch

// The outbox carries every effect of the core out of its locked section:
// channel sends, port transmits and seam calls. Whoever finds it idle
// drains it; everybody else only appends. Effects therefore run without the
// lock, one at a time, in the order the core produced them — also across
// goroutines on the wall clock — and an effect may call back into the
// switch (its own effects are appended and run by the same drain loop).
// This is what keeps BARRIER replies behind the FLOW_REMOVEDs and errors
// of earlier FLOW_MODs, and lets a Port hand a frame straight to another
// switch.

// emitLocked queues f; the caller holds s.mu and calls s.drain after
// unlocking.
func (s *Switch) emitLocked(f func()) { s.outbox = append(s.outbox, f) }

// outboxFullLocked reports whether data-path effects must be dropped.
func (s *Switch) outboxFullLocked() bool { return len(s.outbox)-s.outHead >= s.cfg.OutboxLimit }

// drain runs queued effects unless another goroutine (or an outer frame of
// this one) is already doing so.
func (s *Switch) drain() {
	s.mu.Lock()
	if s.draining {
		s.mu.Unlock()
		return
	}
	s.draining = true
	for s.outHead < len(s.outbox) {
		f := s.outbox[s.outHead]
		s.outbox[s.outHead] = nil
		s.outHead++
		if s.outHead == len(s.outbox) {
			s.outbox, s.outHead = s.outbox[:0], 0
		}
		s.mu.Unlock()
		f()
		s.mu.Lock()
	}
	s.draining = false
	s.mu.Unlock()
}

// unlockAndDrain ends a locked section.
func (s *Switch) unlockAndDrain() {
	s.mu.Unlock()
	s.drain()
}
