package probes

import (
	"fmt"
	"log/slog"
	"sync"

	"github.com/pseudocong/pseudocong/internal/clock"
)

// ResponderStats counts what a Responder did.
type ResponderStats struct {
	SYNs       int // SYNs answered with a SYN-ACK
	Data       int // data segments answered with an ACK
	Ignored    int // packets that are not requests (replies, unknown types)
	SendErrors int
}

// Responder is NIC B of the paper's testbed: it answers each SYN with a
// SYN-ACK and each data segment with an ACK at once, on the reversed
// 5-tuple, so the measured RTT is network (switch) delay only.
type Responder struct {
	clk clock.Clock
	out Sender
	log *slog.Logger

	mu    sync.Mutex
	stats ResponderStats
}

// NewResponder returns a responder that replies through out. logger may be
// nil.
func NewResponder(clk clock.Clock, out Sender, logger *slog.Logger) (*Responder, error) {
	if clk == nil || out == nil {
		return nil, fmt.Errorf("responder: nil clock or sender")
	}
	return &Responder{clk: clk, out: out, log: logger}, nil
}

// Deliver answers a request packet.
func (r *Responder) Deliver(p ProbePacket) {
	reply := ProbePacket{
		Tuple:   p.Tuple.Reverse(),
		Index:   p.Index,
		Attempt: p.Attempt, // echoed, like a TCP timestamp
		Ack:     p.Seq + seqSpace(p),
		SentAt:  r.clk.Now(),
	}
	r.mu.Lock()
	switch p.Type {
	case PacketSYN:
		reply.Type = PacketSYNACK
		// A deterministic ISN of our own, distinct per flow.
		reply.Seq = uint32(splitmix64(uint64(p.Seq) ^ 0xa5a5a5a5))
		r.stats.SYNs++
	case PacketData:
		reply.Type = PacketACK
		r.stats.Data++
	default:
		r.stats.Ignored++
		r.mu.Unlock()
		return
	}
	r.mu.Unlock()

	if err := r.out.Send(reply); err != nil {
		r.mu.Lock()
		r.stats.SendErrors++
		first := r.stats.SendErrors == 1
		r.mu.Unlock()
		if first && r.log != nil {
			r.log.Warn("responder send failed (further failures only counted)",
				"reply", reply.Type.String(), "tuple", reply.Tuple.String(), "err", err)
		}
	}
}

// Stats returns the counters so far.
func (r *Responder) Stats() ResponderStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stats
}
