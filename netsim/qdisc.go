package netsim

import "time"

// Verdict is what a qdisc did with a packet offered to Enqueue.
type Verdict uint8

const (
	// Queued: the qdisc holds the packet until Dequeue returns it.
	Queued Verdict = iota
	// Marked: queued, and its ECN codepoint set to CE.
	Marked
	// Dropped: refused. The caller still owns the packet.
	Dropped
)

func (v Verdict) String() string {
	switch v {
	case Queued:
		return "queued"
	case Marked:
		return "marked"
	default:
		return "dropped"
	}
}

// Qdisc is the queue at the sending end of a link. It is sans-I/O: every
// call is given the time, a qdisc never arms a timer itself. A shaper that
// holds its head packet says when it may leave through NextReady and the
// link arms the timer, so one qdisc works on the virtual and the wall clock.
//
// Calls come from one goroutine (the link's); qdiscs are not safe for
// concurrent use.
type Qdisc interface {
	// Enqueue offers p at time now. Unless the verdict is Dropped the qdisc
	// owns p until Dequeue returns it.
	Enqueue(p *Packet, now time.Time) Verdict
	// Dequeue returns the next packet allowed to leave at now, if any. A
	// shaper returns false while its head packet waits for tokens.
	Dequeue(now time.Time) (*Packet, bool)
	// NextReady reports the earliest time Dequeue can return a packet: now
	// (or earlier) if one is ready, a later time if a shaper holds it, and
	// false if the qdisc is empty.
	NextReady(now time.Time) (time.Time, bool)
	// Len and Bytes are the packets and bytes held.
	Len() int
	Bytes() int
	Stats() Stats
}

// Stats are a qdisc's counters since it was made. Marked packets are also
// counted as Enqueued (they are queued); Dropped counts every refusal, for
// whatever reason.
type Stats struct {
	Enqueued, EnqueuedBytes uint64
	Dropped, DroppedBytes   uint64
	Marked, MarkedBytes     uint64
	Dequeued, DequeuedBytes uint64
}

func (s *Stats) enqueued(p *Packet) {
	s.Enqueued++
	s.EnqueuedBytes += uint64(p.Len)
}

func (s *Stats) dropped(p *Packet) {
	s.Dropped++
	s.DroppedBytes += uint64(p.Len)
}

func (s *Stats) marked(p *Packet) {
	s.Marked++
	s.MarkedBytes += uint64(p.Len)
}

func (s *Stats) dequeued(p *Packet) { s.dequeuedLen(p.Len) }

// dequeuedLen is dequeued for a packet of n bytes, without reading it.
func (s *Stats) dequeuedLen(n int) {
	s.Dequeued++
	s.DequeuedBytes += uint64(n)
}
