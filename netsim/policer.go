package netsim

import "time"

// Policer is a token bucket with no buffer (tc police, OpenFlow meters'
// drop band): a packet the bucket cannot pay for at its arrival is dropped.
// Over any interval it admits at most Burst + Rate·interval bytes.
type Policer struct {
	b     bucket
	stats Stats
}

// NewPolicer polices to rate bits/s with a bucket of burst bytes, full at
// the first packet.
func NewPolicer(rate int64, burst int) (*Policer, error) {
	b, err := newBucket("policer", rate, burst)
	if err != nil {
		return nil, err
	}
	return &Policer{b: b}, nil
}

// Admit reports whether p conforms at now, and spends its tokens if so.
// Stats count admitted packets as Enqueued and Dequeued.
func (pl *Policer) Admit(p *Packet, now time.Time) bool {
	if !pl.b.take(p.Len, now) {
		pl.stats.dropped(p)
		return false
	}
	pl.stats.enqueued(p)
	pl.stats.dequeued(p)
	return true
}

func (pl *Policer) Stats() Stats { return pl.stats }

// Policed puts a policer in front of a qdisc: the ingress policing of a
// port, or a meter before a queue.
type Policed struct {
	*Policer
	Child Qdisc
}

func (q *Policed) Enqueue(p *Packet, now time.Time) Verdict {
	if !q.Admit(p, now) {
		return Dropped
	}
	return q.Child.Enqueue(p, now)
}

func (q *Policed) Dequeue(now time.Time) (*Packet, bool)     { return q.Child.Dequeue(now) }
func (q *Policed) NextReady(now time.Time) (time.Time, bool) { return q.Child.NextReady(now) }
func (q *Policed) Len() int                                  { return q.Child.Len() }
func (q *Policed) Bytes() int                                { return q.Child.Bytes() }

// Stats are the child's, with the policer's drops added.
func (q *Policed) Stats() Stats {
	s := q.Child.Stats()
	ps := q.Policer.Stats()
	s.Dropped += ps.Dropped
	s.DroppedBytes += ps.DroppedBytes
	return s
}
