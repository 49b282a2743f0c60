package probes

import "time"

// ProbePacket is one probe segment as the sans-I/O logic sees it. A live
// shell turns it into a raw TCP frame (and back); a sim link carries it
// as is.
type ProbePacket struct {
	Type  PacketType
	Tuple FiveTuple
	// Index is the prober's flow number. Informational: the prober matches
	// replies by tuple and acknowledgment number, never by Index, because a
	// live shell decoding a frame cannot know it.
	Index int
	// Attempt is 0 for the first transmission and k for the k-th modelled
	// retransmission; the responder echoes it (like a TCP timestamp echo).
	Attempt int
	Seq     uint32
	Ack     uint32
	// PayloadLen is the TCP payload size (DATA only).
	PayloadLen int
	// SentAt is the clock time at which the packet was handed to the Sender.
	SentAt time.Time
}

// Sender takes packets out of a sans-I/O core: a raw socket in the live
// backend, a modelled link in the sim backend. Send must not block for
// long; in the sim it must not deliver synchronously into the same core
// while holding its own locks (the cores never hold theirs across Send).
type Sender interface {
	Send(p ProbePacket) error
}

// SenderFunc adapts a function to Sender.
type SenderFunc func(p ProbePacket) error

func (f SenderFunc) Send(p ProbePacket) error { return f(p) }

// Receiver takes packets into a core: both Probe and Responder are
// Receivers, so a link can deliver to either.
type Receiver interface {
	Deliver(p ProbePacket)
}

// seqSpace is how much sequence space a request consumes, i.e. what its
// reply must acknowledge: SYN counts one, data counts its payload.
func seqSpace(p ProbePacket) uint32 {
	if p.Type == PacketSYN {
		return 1
	}
	return uint32(p.PayloadLen)
}
