package softswitch

// The data path's per-packet effects without a heap allocation each: a
// hit for the Forwarder and a frame for a port wait in FIFOs under s.mu,
// and the outbox runs a func made once (s.forwardOne, s.transmitOne)
// that takes the oldest. The outbox runs effects in push order, so the
// n-th such func pushed finds the n-th record at the head.

type pendingHit struct {
	h   Hit
	fwd Forwarder // the seam when the hit happened
}

type pendingTx struct {
	p     Port
	frame []byte
	queue int64 // < 0: Transmit; else TransmitQueue
}

// emitForwardLocked queues h for fwd.Forward.
func (s *Switch) emitForwardLocked(h Hit) {
	s.pendingHits.Push(pendingHit{h: h, fwd: s.fwd})
	s.emitLocked(s.forwardOne)
}

func (s *Switch) runPendingHit() {
	s.mu.Lock()
	ph := s.pendingHits.Pop()
	s.mu.Unlock()
	ph.fwd.Forward(ph.h)
}

// emitTransmitLocked queues frame for port p (queue < 0: its Transmit).
func (s *Switch) emitTransmitLocked(p Port, frame []byte, queue int64) {
	s.pendingTx.Push(pendingTx{p: p, frame: frame, queue: queue})
	s.emitLocked(s.transmitOne)
}

func (s *Switch) runPendingTx() {
	s.mu.Lock()
	t := s.pendingTx.Pop()
	s.mu.Unlock()
	var err error
	if t.queue < 0 {
		err = t.p.Transmit(t.frame)
	} else {
		err = t.p.(QueuedPort).TransmitQueue(t.frame, uint32(t.queue))
	}
	if err != nil {
		s.txFailed(t.p.No(), len(t.frame))
	}
}
