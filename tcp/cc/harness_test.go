package cc

import (
	"testing"
	"time"
)

// t0 is the virtual epoch of every unit test; no test reads the wall clock.
var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// pipe is a minimal fake sender for unit tests: it acknowledges one
// whole window per round trip, one segment per ACK, at a fixed RTT, and
// fills Conn the way the sender's contract says (InFlight, SndUna/SndNxt,
// Delivered, SRTT/MinRTT). It knows no queue: each test sets the RTT.
type pipe struct {
	a   Algorithm
	c   *Conn
	una uint32
}

func newPipe(t *testing.T, name string, cwnd uint32) *pipe {
	t.Helper()
	a, err := New(name)
	if err != nil {
		t.Fatal(err)
	}
	return newPipeWith(a, cwnd)
}

// newPipeWith is newPipe for an instance built by the test (parameters).
func newPipeWith(a Algorithm, cwnd uint32) *pipe {
	c := &Conn{Cwnd: cwnd, Ssthresh: InfiniteSsthresh, CwndClamp: 1 << 20, MSS: 1000, Now: t0}
	p := &pipe{a: a, c: c}
	p.sync()
	a.Init(c)
	return p
}

// sync sets the sequence numbers from the window: everything the window
// allows is in flight.
func (p *pipe) sync() {
	p.c.SndUna = p.una
	p.c.SndNxt = p.una + p.c.Cwnd*uint32(p.c.MSS)
	p.c.InFlight = p.c.Cwnd
}

// ack delivers one ACK for n segments with RTT sample rtt at Now.
func (p *pipe) ack(n uint32, rtt time.Duration) {
	c := p.c
	c.InFlight = c.Cwnd
	p.una += n * uint32(c.MSS)
	c.SndUna = p.una
	c.Delivered += uint64(n)
	if rtt > 0 {
		if c.SRTT == 0 {
			c.SRTT = rtt
		} else {
			c.SRTT = (7*c.SRTT + rtt) / 8
		}
		if c.MinRTT == 0 || rtt < c.MinRTT {
			c.MinRTT = rtt
		}
	}
	p.a.PktsAcked(c, AckSample{Acked: n, RTT: rtt, InFlight: c.InFlight})
	if c.Phase == Open || c.Phase == Disorder {
		p.a.CongAvoid(c, n)
	}
	c.SndNxt = p.una + c.Cwnd*uint32(c.MSS)
}

// round acknowledges one window, its ACKs spread evenly over rtt, and
// returns the window it started with.
func (p *pipe) round(rtt time.Duration) uint32 {
	w := p.c.Cwnd
	step := rtt / time.Duration(w)
	for range w {
		p.c.Now = p.c.Now.Add(step)
		p.ack(1, rtt)
	}
	return w
}

// loss runs a fast-retransmit reduction as the sender would: SSThresh on
// entering Recovery, Cwnd set to the threshold on leaving it.
func (p *pipe) loss() {
	c := p.c
	p.a.SetPhase(c, Recovery)
	c.Phase = Recovery
	c.Ssthresh = p.a.SSThresh(c)
	c.Cwnd = c.Ssthresh
	c.CwndCnt = 0
	c.Phase = Open
	p.a.SetPhase(c, Open)
	p.a.Event(c, EventCompleteCWR)
}
