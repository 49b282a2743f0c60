package netsim

import (
	"fmt"
	"time"
)

// MultiQueue is a port with N child qdiscs, the target of OpenFlow's
// ENQUEUE action: Packet.Queue selects the child, and children are served
// in strict priority, queue 0 first. Strict priority is what a port's
// queues need to show one class starving another (the pseudo-congestion
// experiments' point) and, unlike round-robin, has no per-round state to
// get wrong when a shaped child is not ready: the first ready child wins.
//
// A shaped child that holds its head packet does not block lower queues;
// NextReady is the earliest of the children's.
type MultiQueue struct {
	children []Qdisc
	stats    Stats // drops for an unknown queue id; the rest sums the children
}

func NewMultiQueue(children ...Qdisc) (*MultiQueue, error) {
	if len(children) == 0 {
		return nil, fmt.Errorf("netsim: multiqueue: no child qdiscs")
	}
	for i, c := range children {
		if c == nil {
			return nil, fmt.Errorf("netsim: multiqueue: child %d is nil", i)
		}
	}
	return &MultiQueue{children: children}, nil
}

// Child is queue i's qdisc (for its own stats).
func (m *MultiQueue) Child(i int) Qdisc { return m.children[i] }

// NumQueues is the number of children.
func (m *MultiQueue) NumQueues() int { return len(m.children) }

// Enqueue offers p to child p.Queue. A queue id the port does not have is
// dropped and counted here, as a switch drops a packet for a deleted queue.
func (m *MultiQueue) Enqueue(p *Packet, now time.Time) Verdict {
	if int64(p.Queue) >= int64(len(m.children)) {
		m.stats.dropped(p)
		return Dropped
	}
	return m.children[p.Queue].Enqueue(p, now)
}

func (m *MultiQueue) Dequeue(now time.Time) (*Packet, bool) {
	for _, c := range m.children {
		if p, ok := c.Dequeue(now); ok {
			return p, true
		}
	}
	return nil, false
}

func (m *MultiQueue) NextReady(now time.Time) (time.Time, bool) {
	var best time.Time
	found := false
	for _, c := range m.children {
		t, ok := c.NextReady(now)
		if !ok {
			continue
		}
		if !t.After(now) {
			return t, true
		}
		if !found || t.Before(best) {
			best, found = t, true
		}
	}
	return best, found
}

func (m *MultiQueue) Len() int {
	n := 0
	for _, c := range m.children {
		n += c.Len()
	}
	return n
}

func (m *MultiQueue) Bytes() int {
	n := 0
	for _, c := range m.children {
		n += c.Bytes()
	}
	return n
}

// Stats sum the children's, plus the drops for unknown queue ids.
func (m *MultiQueue) Stats() Stats {
	s := m.stats
	for _, c := range m.children {
		cs := c.Stats()
		s.Enqueued += cs.Enqueued
		s.EnqueuedBytes += cs.EnqueuedBytes
		s.Dropped += cs.Dropped
		s.DroppedBytes += cs.DroppedBytes
		s.Marked += cs.Marked
		s.MarkedBytes += cs.MarkedBytes
		s.Dequeued += cs.Dequeued
		s.DequeuedBytes += cs.DequeuedBytes
	}
	return s
}
