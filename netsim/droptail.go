package netsim

import (
	"fmt"
	"time"
)

// DropTail is a FIFO that drops the arriving packet when it would pass a
// limit in packets or in bytes (Linux pfifo / bfifo; both limits may be
// set, then both hold).
type DropTail struct {
	_                   linePad
	q                   fifo
	limitPkts, limitBts int
	stats               Stats
	_                   linePad
}

// NewDropTail makes a FIFO holding at most packets packets and bytes bytes;
// a zero limit is no limit of that kind, but one of them must be set: a
// queue without a bound is a memory leak under overload.
func NewDropTail(packets, bytes int) (*DropTail, error) {
	if packets < 0 || bytes < 0 || (packets == 0 && bytes == 0) {
		return nil, fmt.Errorf("netsim: droptail: limits %d packets, %d bytes: want one positive limit, none negative", packets, bytes)
	}
	return &DropTail{limitPkts: packets, limitBts: bytes}, nil
}

func (d *DropTail) Enqueue(p *Packet, _ time.Time) Verdict {
	if (d.limitPkts > 0 && d.q.n >= d.limitPkts) || (d.limitBts > 0 && d.q.bytes+p.Len > d.limitBts) {
		d.stats.dropped(p)
		return Dropped
	}
	d.q.push(p)
	d.stats.enqueued(p)
	return Queued
}

func (d *DropTail) Dequeue(time.Time) (*Packet, bool) {
	p, _, ok := d.dequeueLen()
	return p, ok
}

// dequeueLen is Dequeue with the packet's length, for the link's DropTail
// path: neither reads the descriptor (see fifo).
func (d *DropTail) dequeueLen() (*Packet, int, bool) {
	p, n := d.q.popLen()
	if p == nil {
		return nil, 0, false
	}
	d.stats.dequeuedLen(n)
	return p, n, true
}

func (d *DropTail) NextReady(now time.Time) (time.Time, bool) { return now, d.q.n > 0 }
func (d *DropTail) Len() int                                  { return d.q.n }
func (d *DropTail) Bytes() int                                { return d.q.bytes }
func (d *DropTail) Stats() Stats                              { return d.stats }
