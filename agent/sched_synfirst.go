package agent

// SYNFirst builds the misses that open a new TCP connection (a SYN without
// ACK) ahead of every other miss, each class in arrival order; a queued job
// runs before a queued build. The SYN's Packet-In is what installs the
// connection's rule, so serving it first shortens handshakes under a miss
// backlog (paper 000's SYN retransmissions). When the queue is full a new
// SYN pushes out the oldest queued non-SYN miss (reported with reason
// miss_queue_full); a non-SYN, or a SYN when only SYNs are queued, is
// dropped itself.
const SYNFirst Policy = "syn_first"

type synFirstScheduler struct {
	syn, other *ring[QueuedMiss]
	limit      int
}

func newSYNFirstScheduler(limit int) Scheduler {
	return &synFirstScheduler{syn: newRing[QueuedMiss](limit), other: newRing[QueuedMiss](limit), limit: limit}
}

func (s *synFirstScheduler) Policy() Policy  { return SYNFirst }
func (s *synFirstScheduler) JobsFirst() bool { return true }
func (s *synFirstScheduler) Len() int        { return s.syn.len() + s.other.len() }

func (s *synFirstScheduler) Next() *QueuedMiss {
	if s.syn.len() > 0 {
		return s.syn.peek()
	}
	return s.other.peek()
}

func (s *synFirstScheduler) Pop() QueuedMiss {
	if s.syn.len() > 0 {
		return s.syn.pop()
	}
	return s.other.pop()
}

func (s *synFirstScheduler) Drain(fn func(QueuedMiss)) {
	s.syn.drain(fn)
	s.other.drain(fn)
}

func (s *synFirstScheduler) Push(m QueuedMiss) (QueuedMiss, bool) {
	isSYN := IsTCPSYN(m.P.Data)
	var dropped QueuedMiss
	did := false
	if s.Len() >= s.limit {
		if !isSYN || s.other.len() == 0 {
			return m, true
		}
		dropped, did = s.other.pop(), true
	}
	if isSYN {
		s.syn.push(m)
	} else {
		s.other.push(m)
	}
	return dropped, did
}

// IsTCPSYN reports whether frame (Ethernet, optionally one 802.1Q tag) is
// an IPv4 TCP segment with SYN set and ACK clear: the first packet of a
// new connection. Truncated or other frames are not.
func IsTCPSYN(frame []byte) bool {
	off := 12
	if len(frame) < off+2 {
		return false
	}
	typ := uint16(frame[off])<<8 | uint16(frame[off+1])
	if typ == 0x8100 {
		off += 4
		if len(frame) < off+2 {
			return false
		}
		typ = uint16(frame[off])<<8 | uint16(frame[off+1])
	}
	off += 2
	if typ != 0x0800 || len(frame) < off+20 {
		return false
	}
	ihl := int(frame[off]&0x0f) * 4
	if frame[off]>>4 != 4 || ihl < 20 || frame[off+9] != 6 {
		return false
	}
	if frag := uint16(frame[off+6]&0x1f)<<8 | uint16(frame[off+7]); frag != 0 {
		return false // a later fragment carries no TCP header
	}
	off += ihl
	if len(frame) < off+14 {
		return false
	}
	flags := frame[off+13]
	const syn, ack = 0x02, 0x10
	return flags&syn != 0 && flags&ack == 0
}
