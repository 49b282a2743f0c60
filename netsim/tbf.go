package netsim

import (
	"fmt"
	"time"
)

// TBFConfig configures a token-bucket shaper as tc-tbf does. Peakrate (a
// second bucket of depth mtu limiting the burst's own speed) is not
// modelled: the burst leaves at the link's rate.
type TBFConfig struct {
	// Rate is the long-run output rate in bits/s.
	Rate int64
	// Burst is the bucket depth in bytes (tc "burst"/"buffer"): how many
	// bytes may leave back to back after an idle period. A packet longer
	// than Burst could never leave and is dropped at once.
	Burst int
	// Limit is the bytes the shaper may hold waiting for tokens. If zero,
	// Latency sets it as tc does: limit = Rate*Latency/8 + Burst.
	Limit   int
	Latency time.Duration
}

// TBF holds packets in a byte-limited FIFO until the bucket has tokens for
// the head packet (Linux sch_tbf without peakrate).
type TBF struct {
	b     bucket
	q     fifo
	limit int
	stats Stats
}

func NewTBF(c TBFConfig) (*TBF, error) {
	b, err := newBucket("tbf", c.Rate, c.Burst)
	if err != nil {
		return nil, err
	}
	limit := c.Limit
	if limit == 0 && c.Latency > 0 {
		limit = int(float64(c.Rate)/8*c.Latency.Seconds()) + c.Burst
	}
	if limit <= 0 {
		return nil, fmt.Errorf("netsim: tbf: limit %d bytes, latency %v: want a positive limit or latency", c.Limit, c.Latency)
	}
	return &TBF{b: b, limit: limit}, nil
}

func (t *TBF) Enqueue(p *Packet, _ time.Time) Verdict {
	if int64(p.Len)*tokensPerByte > t.b.max || t.q.bytes+p.Len > t.limit {
		t.stats.dropped(p)
		return Dropped
	}
	t.q.push(p)
	t.stats.enqueued(p)
	return Queued
}

func (t *TBF) Dequeue(now time.Time) (*Packet, bool) {
	p := t.q.peek()
	if p == nil || !t.b.take(p.Len, now) {
		return nil, false
	}
	t.q.pop()
	t.stats.dequeued(p)
	return p, true
}

func (t *TBF) NextReady(now time.Time) (time.Time, bool) {
	p := t.q.peek()
	if p == nil {
		return time.Time{}, false
	}
	return t.b.readyAt(p.Len, now), true
}

func (t *TBF) Len() int     { return t.q.n }
func (t *TBF) Bytes() int   { return t.q.bytes }
func (t *TBF) Stats() Stats { return t.stats }

// Limit is the byte limit in force (given, or derived from the latency).
func (t *TBF) Limit() int { return t.limit }
