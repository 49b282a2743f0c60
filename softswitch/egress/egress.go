// Package egress emulates a link on a live switch port's transmit side: the
// frames the switch core transmits go through a netsim qdisc (DropTail,
// RED/ECN, TBF, policer, or a prio of them whose queues are the port's
// OpenFlow queues), a loss model and a delay line, on a clock, and then
// to the port's socket. It is what tc's netem/tbf/red would do, for a
// kernel that has none of them.
//
// # Timing on the wall clock
//
// Wall-clock timers fire late, by up to about a millisecond on a loaded
// machine. Two rules keep that from adding up:
//
//   - The delay line stamps each frame with its due time (the instant it
//     left the qdisc plus the delay) and a timer firing late sends every
//     frame due by then, then re-arms for the next due time: each frame is
//     late by at most one timer's lateness, never by the sum.
//   - A shaper's bucket is filled from the real time of each wake-up (the
//     qdisc is asked at clock.Now, not at the time the timer was meant to
//     fire), and every packet the bucket pays for leaves at that wake-up,
//     so a late wake-up sends the backlog it owes and the long-run rate
//     stays the configured one (as long as the lateness stays under
//     burst/rate, when the bucket would overflow).
//
// A line rate (Config.Rate) is a token bucket a few frames deep rather
// than netsim.Link's transmitter, whose "free at" timer per frame would
// lose its lateness at every frame: the bucket, like the shaper's, pays
// for the frames owed at each late wake-up. Without a Rate the port's own
// line (a veth, 10 Gbit/s class) serialises.
//
// # Concurrency and memory
//
// Transmit and the timers' callbacks (their own goroutines on clock.Wall,
// the one dispatcher goroutine on clock.Precise, which the switch command
// uses) are serialised by one mutex, since qdiscs are not safe for
// concurrent use; the socket write happens under it too, which keeps the
// frames in order. Transmit copies the frame (the caller may reuse its
// buffer, and a flood hands one buffer to several ports). The qdisc's
// limit bounds the queue; the delay line holds at most DelayLimit bytes
// and drops (and counts) beyond.
package egress

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/pseudocong/pseudocong/internal/clock"
	"github.com/pseudocong/pseudocong/internal/ring"
	"github.com/pseudocong/pseudocong/netsim"
)

// LineRate is the rate assumed for the delay line's bound when nothing
// before it shapes: a veth's speed class.
const LineRate = 10_000_000_000

// minDelayLimit is the least a delay line may hold, so a short delay still
// takes a burst of full-size frames.
const minDelayLimit = 256 << 10

// Config is one port's emulated link. The zero Config passes frames
// straight through (but a port without emulation should not have a
// Shaper at all: it adds a copy and a lock).
type Config struct {
	// Qdisc, if set, queues the frames; nil sends each at once (with a
	// Rate, a DropTail of netsim.DefaultDropTailLimit packets).
	Qdisc netsim.Qdisc
	// Rate, if set, is the emulated line rate in bits/s: frames leave the
	// qdisc no faster, so a DropTail or RED qdisc builds a queue when the
	// offered load passes it. 0: the port's own line (no queue builds in
	// front of a veth, as with Linux's noqueue). See txBucket for how it
	// stays exact on late timers.
	Rate int64
	// Loss, if set, decides which frames leaving the qdisc are lost.
	Loss netsim.LossModel
	// Delay is the one-way delay the delay line adds after the qdisc.
	Delay time.Duration
	// DelayLimit bounds the bytes on the delay line; 0: the qdisc's rate
	// (or LineRate) times Delay, and at least 256 KiB.
	DelayLimit int
	// Logger: default discard.
	Logger *slog.Logger
}

// Enabled reports whether c emulates anything.
func (c Config) Enabled() bool {
	return c.Qdisc != nil || c.Rate > 0 || c.Loss != nil || c.Delay > 0
}

// Stats are a shaper's counters. Enqueued counts frames the qdisc took
// (marked ones included), or every frame offered without a qdisc.
type Stats struct {
	Offered                uint64
	Enqueued, QdiscDropped uint64
	Marked                 uint64
	Lost, DelayDropped     uint64
	Sent, SentBytes        uint64
	TxErrors               uint64
	Backlog, BacklogBytes  int // in the qdisc now
	InDelay, InDelayBytes  int // on the delay line now
	DelayLimit             int // bytes
	QdiscStats             netsim.Stats
}

// ErrDropped is what Transmit returns for a frame the qdisc refused, so the
// switch counts it as tx_dropped.
var ErrDropped = errors.New("egress: dropped by the qdisc")

// ErrClosed is returned by Transmit after Close.
var ErrClosed = errors.New("egress: closed")

// Shaper is one port's egress: Transmit in, send out.
type Shaper struct {
	clk  clock.Clock
	send func([]byte) error
	log  *slog.Logger

	mu     sync.Mutex
	closed bool
	q      netsim.Qdisc
	mq     *netsim.MultiQueue // q, if it is one
	loss   netsim.LossModel
	delay  time.Duration
	line   line
	limit  int
	rate   int64
	tx     txBucket
	held   *netsim.Packet // out of the qdisc, waiting for the line
	free   []*netsim.Packet
	stats  Stats

	// One pending timer of each kind; gen tells a callback whether it is
	// the current one (an old one may run after being replaced).
	qTimer    clock.Timer
	qAt       time.Time
	qGen      uint64
	lineTimer clock.Timer
	lineGen   uint64
}

// New makes a shaper that writes frames with send (the port's socket
// write) on clk. send must not keep the frame after it returns: the
// shaper reuses the buffer.
func New(clk clock.Clock, send func([]byte) error, c Config) (*Shaper, error) {
	if clk == nil || send == nil {
		return nil, fmt.Errorf("egress: nil clock or send func")
	}
	if c.Delay < 0 {
		return nil, fmt.Errorf("egress: delay %v: want ≥ 0", c.Delay)
	}
	if c.DelayLimit < 0 {
		return nil, fmt.Errorf("egress: delay limit %d bytes: want ≥ 0", c.DelayLimit)
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Rate < 0 {
		return nil, fmt.Errorf("egress: rate %d bit/s: want ≥ 0", c.Rate)
	}
	if c.Rate > 0 && c.Qdisc == nil {
		q, err := netsim.NewDropTail(netsim.DefaultDropTailLimit, 0)
		if err != nil {
			return nil, err
		}
		c.Qdisc = q
	}
	limit := c.DelayLimit
	if limit == 0 && c.Delay > 0 {
		rate := int64(LineRate)
		if r, ok := netsim.QdiscRate(c.Qdisc); ok {
			rate = r
		}
		if c.Rate > 0 {
			rate = min(rate, c.Rate)
		}
		limit = max(minDelayLimit, int(float64(rate)/8*c.Delay.Seconds()))
	}
	s := &Shaper{clk: clk, send: send, log: c.Logger, q: c.Qdisc, loss: c.Loss, delay: c.Delay, limit: limit, rate: c.Rate}
	if c.Rate > 0 {
		s.tx = newTxBucket(c.Rate)
	}
	s.mq, _ = c.Qdisc.(*netsim.MultiQueue)
	s.stats.DelayLimit = limit
	return s, nil
}

// Transmit takes a copy of frame into the emulated link. It returns
// ErrDropped if the qdisc refused it; frames lost or dropped later are
// only counted.
func (s *Shaper) Transmit(frame []byte) error { return s.TransmitQueue(frame, 0) }

// TransmitQueue is Transmit into queue of a prio (netsim.MultiQueue)
// qdisc, OpenFlow ENQUEUE's target; with any other qdisc every queue id is
// the one queue. A queue the prio lacks is refused (ErrDropped) and
// counted by the MultiQueue.
func (s *Shaper) TransmitQueue(frame []byte, queue uint32) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	s.stats.Offered++
	p := s.get()
	p.Frame = append(p.Frame[:0], frame...)
	p.Len = len(frame)
	p.ECN = frameECN(p.Frame)
	p.Queue = queue
	if s.mq == nil {
		p.Queue = 0
	}
	now := s.clk.Now()
	if s.q == nil {
		s.stats.Enqueued++
		s.leave(p, now)
		return nil
	}
	switch s.q.Enqueue(p, now) {
	case netsim.Dropped:
		s.stats.QdiscDropped++
		s.put(p)
		return ErrDropped
	case netsim.Marked:
		s.stats.Marked++
		setCE(p.Frame)
	}
	s.stats.Enqueued++
	s.pump(now)
	return nil
}

// pump sends everything the qdisc and the line rate let go at now, and
// arms a wake-up for when the next one may.
func (s *Shaper) pump(now time.Time) {
	for {
		if s.held == nil {
			p, ok := s.q.Dequeue(now)
			if !ok {
				break
			}
			s.held = p
		}
		if s.rate > 0 {
			if at := s.tx.readyAt(s.held.Len, now); at.After(now) {
				s.tx.setBacklogged(true, now)
				s.arm(at, now)
				return
			}
			s.tx.take(s.held.Len, now)
		}
		p := s.held
		s.held = nil
		s.leave(p, now)
	}
	if s.rate > 0 {
		s.tx.setBacklogged(false, now)
	}
	if at, ok := s.q.NextReady(now); ok {
		s.arm(at, now)
	}
}

// arm makes sure a wake-up is pending no later than at.
func (s *Shaper) arm(at, now time.Time) {
	if !at.After(now) {
		// "Ready now" yet refused: wait a little instead of spinning.
		at = now.Add(time.Microsecond)
	}
	if s.qTimer != nil {
		if !s.qAt.After(at) {
			return // a wake-up no later is pending
		}
		s.qTimer.Stop()
	}
	s.qGen++
	gen := s.qGen
	s.qAt = at
	s.qTimer = s.clk.AfterFunc(at.Sub(now), func() { s.onQTimer(gen) })
}

func (s *Shaper) onQTimer(gen uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || gen != s.qGen {
		return
	}
	s.qTimer = nil
	// The real time, not the time the timer was for: the buckets account
	// the lateness and pay for the backlog now.
	s.pump(s.clk.Now())
}

// leave takes a packet that left the qdisc at now through the loss model
// and the delay line.
func (s *Shaper) leave(p *netsim.Packet, now time.Time) {
	if s.loss != nil && s.loss.Lose(p) {
		s.stats.Lost++
		s.put(p)
		return
	}
	if s.delay == 0 {
		s.write(p)
		return
	}
	if s.line.bytes+p.Len > s.limit {
		s.stats.DelayDropped++
		s.put(p)
		return
	}
	s.line.push(slot{p: p, due: now.Add(s.delay)})
	if s.lineTimer == nil {
		s.armLine(now)
	}
}

func (s *Shaper) armLine(now time.Time) {
	s.lineGen++
	gen := s.lineGen
	s.lineTimer = s.clk.AfterFunc(s.line.Head().due.Sub(now), func() { s.onLineTimer(gen) })
}

// onLineTimer sends every frame due by now and re-arms for the next due
// time (not now + a period: a late firing does not delay the ones after).
func (s *Shaper) onLineTimer(gen uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || gen != s.lineGen {
		return
	}
	s.lineTimer = nil
	now := s.clk.Now()
	for s.line.Len() > 0 && !s.line.Head().due.After(now) {
		s.write(s.line.pop())
	}
	if s.line.Len() > 0 {
		s.armLine(now)
	}
}

func (s *Shaper) write(p *netsim.Packet) {
	if err := s.send(p.Frame); err != nil {
		s.stats.TxErrors++
		if s.stats.TxErrors == 1 || s.stats.TxErrors%1000 == 0 {
			s.log.Warn("egress write", "err", err, "tx_errors", s.stats.TxErrors)
		}
	} else {
		s.stats.Sent++
		s.stats.SentBytes += uint64(p.Len)
	}
	s.put(p)
}

// maxFree bounds the recycled descriptors kept: enough for a queue's
// steady state, not a leak after a burst.
const maxFree = 1024

func (s *Shaper) get() *netsim.Packet {
	if n := len(s.free); n > 0 {
		p := s.free[n-1]
		s.free = s.free[:n-1]
		return p
	}
	return &netsim.Packet{}
}

func (s *Shaper) put(p *netsim.Packet) {
	if len(s.free) < maxFree && cap(p.Frame) <= 16<<10 {
		*p = netsim.Packet{Frame: p.Frame[:0]}
		s.free = append(s.free, p)
	}
}

// Stats returns the counters so far.
func (s *Shaper) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	if s.q != nil {
		st.Backlog, st.BacklogBytes, st.QdiscStats = s.q.Len(), s.q.Bytes(), s.q.Stats()
	}
	if s.held != nil {
		st.Backlog++
		st.BacklogBytes += s.held.Len
	}
	st.InDelay, st.InDelayBytes = s.line.Len(), s.line.bytes
	return st
}

// NumQueues is the number of queues of a prio qdisc (ENQUEUE targets), 0
// for any other.
func (s *Shaper) NumQueues() int {
	if s.mq == nil {
		return 0
	}
	return s.mq.NumQueues()
}

// QueueStats are queue i's qdisc counters (a prio's child i); the zero
// Stats for a queue the shaper does not have.
func (s *Shaper) QueueStats(i int) netsim.Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mq == nil || i < 0 || i >= s.mq.NumQueues() {
		return netsim.Stats{}
	}
	return s.mq.Child(i).Stats()
}

// Close stops the timers and discards the frames held; Transmit fails
// after it.
func (s *Shaper) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.closed = true
	if s.qTimer != nil {
		s.qTimer.Stop()
	}
	if s.lineTimer != nil {
		s.lineTimer.Stop()
	}
}

// slot is a frame on the delay line.
type slot struct {
	p   *netsim.Packet
	due time.Time
}

// line is the delay line: frames with their due times, in send order,
// which is due order (the delay is the same for all).
type line struct {
	ring.Buffer[slot]
	bytes int
}

func (l *line) push(e slot) {
	l.Push(e)
	l.bytes += e.p.Len
}

func (l *line) pop() *netsim.Packet {
	p := l.Pop().p
	l.bytes -= p.Len
	return p
}
