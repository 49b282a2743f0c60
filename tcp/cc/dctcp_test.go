package cc

import (
	"math"
	"testing"
)

// dctcpWindows acknowledges n windows of w segments, one ACK per
// segment, the first marked of each window carrying ECE. The sender
// keeps w segments in flight, so SndNxt runs w segments ahead of SndUna
// (DCTCP's window is "until SndUna reaches today's SndNxt").
func dctcpWindows(p *pipe, n, w, marked int) {
	c := p.c
	for range n {
		for i := range w {
			p.una += uint32(c.MSS)
			c.SndUna = p.una
			p.a.PktsAcked(c, AckSample{Acked: 1, ECE: i < marked})
			c.SndNxt = p.una + uint32(w*c.MSS)
		}
	}
}

// newDCTCP starts a DCTCP connection with a window of 40 segments in
// flight, the window every test here acknowledges per round.
func newDCTCP(t *testing.T, ecn bool) *pipe {
	a, err := New("dctcp")
	if err != nil {
		t.Fatal(err)
	}
	c := &Conn{Cwnd: 40, Ssthresh: InfiniteSsthresh, CwndClamp: 1 << 20, MSS: 1000, Now: t0, ECN: ecn}
	p := &pipe{a: a, c: c}
	p.sync()
	a.Init(c)
	return p
}

func TestDCTCPAlphaConvergesToMarkedFraction(t *testing.T) {
	for _, f := range []float64{0, 0.1, 0.25, 0.5, 1} {
		p := newDCTCP(t, true)
		const w = 40
		dctcpWindows(p, 200, w, int(f*w))
		got := p.a.(*DCTCP).Alpha()
		// Fixed point: alpha>>4 and (ce<<6)/delivered truncate, so the
		// steady state is within 16/1024 (plus one step) of F.
		if math.Abs(got-f) > 17.0/1024 {
			t.Errorf("marked %.2f: alpha %.4f, want %.2f", f, got, f)
		}
	}
}

func TestDCTCPAlphaDecaysByG(t *testing.T) {
	p := newDCTCP(t, true)
	a := p.a.(*DCTCP)
	if a.Alpha() != 1 {
		t.Fatalf("initial alpha %v, want 1", a.Alpha())
	}
	want := 1024.0
	for n := 1; n <= 20; n++ {
		dctcpWindows(p, 1, 40, 0)
		want -= math.Floor(want / 16)
		if float64(a.alpha) != want {
			t.Fatalf("window %d without marks: alpha %d/1024, want %.0f (×15/16 per window)", n, a.alpha, want)
		}
	}
}

// The cut on ECE is cwnd·(1 − alpha/2).
func TestDCTCPCutIsAlphaOverTwo(t *testing.T) {
	p := newDCTCP(t, true)
	dctcpWindows(p, 200, 40, 10) // alpha → 1/4
	a := p.a.(*DCTCP)
	alpha := a.Alpha()
	for _, cwnd := range []uint32{10, 100, 1000} {
		p.c.Cwnd = cwnd
		got := p.a.SSThresh(p.c)
		want := float64(cwnd) * (1 - alpha/2)
		if math.Abs(float64(got)-want) > 1 {
			t.Errorf("cwnd %d alpha %.3f: ssthresh %d, want %.1f", cwnd, alpha, got, want)
		}
	}
	// With no marks alpha decays to 0 and ECE barely cuts.
	dctcpWindows(p, 200, 40, 0)
	p.c.Cwnd = 100
	if got := p.a.SSThresh(p.c); got != 100 {
		t.Fatalf("alpha %v: ssthresh %d, want 100", a.Alpha(), got)
	}
}

// A loss halves the window whatever alpha is, in either call order.
func TestDCTCPLossHalves(t *testing.T) {
	p := newDCTCP(t, true)
	dctcpWindows(p, 200, 40, 0) // alpha 0
	p.c.Cwnd = 100
	p.a.SetPhase(p.c, Recovery)
	if p.c.Ssthresh != 50 {
		t.Fatalf("ssthresh %d on entering recovery, want 50", p.c.Ssthresh)
	}
	if got := p.a.SSThresh(p.c); got != 50 {
		t.Fatalf("SSThresh %d in recovery, want 50", got)
	}
	q := newDCTCP(t, true)
	dctcpWindows(q, 200, 40, 0)
	q.c.Cwnd = 80
	q.c.Phase = Loss
	if got := q.a.SSThresh(q.c); got != 40 {
		t.Fatalf("SSThresh %d on RTO, want 40", got)
	}
	q.a.Event(q.c, EventLoss)
	if q.c.Ssthresh != 40 {
		t.Fatalf("ssthresh %d after EventLoss, want 40", q.c.Ssthresh)
	}
	q.c.Cwnd = 1
	if got := q.a.Undo(q.c); got != 80 {
		t.Fatalf("undo %d, want 80", got)
	}
}

func TestDCTCPWithoutECNIsReno(t *testing.T) {
	p := newDCTCP(t, false)
	dctcpWindows(p, 5, 40, 40)
	p.c.Cwnd = 100
	if got := p.a.SSThresh(p.c); got != 50 {
		t.Fatalf("no ECN: ssthresh %d, want Reno's 50", got)
	}
}

// The receiver's CE state machine (tcp_dctcp.h): ECE echoes each
// segment's CE; a flip ACKs at once, after flushing a pending delayed
// ACK that carries the previous state and sequence.
func TestDCTCPReceiverStateMachine(t *testing.T) {
	p := newDCTCP(t, true)
	c := p.c
	type step struct {
		ce      bool
		pending bool
		rcvNxt  uint32
		flush   bool
		seq     uint32
		fECE    bool
		now     bool
		ece     bool
	}
	steps := []step{
		{ce: false, pending: false, rcvNxt: 1000, ece: false},
		{ce: false, pending: true, rcvNxt: 2000, ece: false},
		{ce: true, pending: true, rcvNxt: 3000, flush: true, seq: 2000, fECE: false, now: true, ece: true},
		{ce: true, pending: false, rcvNxt: 4000, ece: true},
		{ce: true, pending: true, rcvNxt: 5000, ece: true},
		{ce: false, pending: true, rcvNxt: 6000, flush: true, seq: 5000, fECE: true, now: true, ece: false},
		{ce: true, pending: false, rcvNxt: 7000, now: true, ece: true},
	}
	for i, s := range steps {
		c.Ack.RcvNxt, c.Ack.Pending = s.rcvNxt, s.pending
		ev := EventECNNoCE
		if s.ce {
			ev = EventECNIsCE
		}
		p.a.Event(c, ev)
		a := c.Ack
		if a.FlushAck != s.flush || (s.flush && (a.FlushSeq != s.seq || a.FlushECE != s.fECE)) || a.Now != s.now || a.ECE != s.ece {
			t.Fatalf("step %d: got %+v, want flush %v seq %d ece %v, now %v, ece %v", i, a, s.flush, s.seq, s.fECE, s.now, s.ece)
		}
	}
	if _, ok := p.a.(ECNOwner); !ok {
		t.Fatal("DCTCP does not implement ECNOwner")
	}
}
