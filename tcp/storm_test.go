package tcp

import (
	"testing"
	"time"
)

// noSACKTimeoutRun is issue 10's no-SACK storm in small: ns-2 style
// endpoints (no SACK, no timestamps, no F-RTO), twenty losses three
// segments apart in one window, which NewReno repairs one per partial
// ACK, and the tenth hole's retransmission lost as well, so the RTO
// repairs the rest by going back N. It returns the pipe, the number of
// segments lost on the path, and sndNxt when the timeout fired.
func noSACKTimeoutRun(t *testing.T) (p *pipe, losses int, nxtAtRTO uint32) {
	ca, cb := testConfig(), testConfig()
	ca.SACK, cb.SACK = false, false
	ca.Timestamps, cb.Timestamps = false, false
	ca.FRTO = false
	p = newPipe(t, ca, cb, 10*time.Millisecond)
	p.rate = 10_000_000
	var drops []int
	for k := 200; k < 260; k += 3 {
		drops = append(drops, k)
	}
	orig := dropOriginals(drops...)
	seen := map[uint32]int{}
	lostRetrans := false
	p.filter = func(dir, i int, s *Segment) (time.Duration, bool) {
		if dir == 0 && s.Len > 0 {
			seen[s.Seq]++
			if seen[s.Seq] == 2 && !lostRetrans && s.Seq == p.a.iss+1+uint32(drops[9]*p.a.MSS()) {
				lostRetrans = true
				return 0, true
			}
		}
		return orig(dir, i, s)
	}
	const n = 20_000_000
	left := n
	done := false
	write := func() { left -= p.a.Write(left) }
	p.a.Handle(Handlers{
		Established: write,
		Writable:    write,
		Acked:       func(total uint64) { done = done || total >= n },
		Timeout: func() {
			if nxtAtRTO == 0 {
				nxtAtRTO = p.a.sndNxt
			}
		},
	})
	p.start()
	p.sim.RunUntil(epoch.Add(120 * time.Second))
	if !done {
		t.Fatalf("transfer not done: acked %d of %d", p.a.acked, n)
	}
	if !lostRetrans || nxtAtRTO == 0 {
		t.Fatalf("scenario did not force a timeout (retransmission dropped %v, RTO at sndNxt %d)", lostRetrans, nxtAtRTO)
	}
	if got := p.b.Stats().BytesReceived; got != n {
		t.Fatalf("received %d bytes, want %d", got, n)
	}
	return p, len(drops) + 1, nxtAtRTO
}

// TestNoSACKTimeoutNoStorm: after the timeout the sender goes back N
// once and then must not keep re-sending what the receiver holds. Before
// the fix the receiver dropped in-window out-of-order data (so holes came
// back as runs), and the sender took the duplicate ACKs the go-back-N's
// copies draw for a new loss: fast retransmit after fast retransmit, each
// partial ACK's retransmission a copy again, to the end of the flow
// (6 792 retransmissions here for 21 losses; 1 472 with the receiver
// fixed alone).
func TestNoSACKTimeoutNoStorm(t *testing.T) {
	p, losses, nxtAtRTO := noSACKTimeoutRun(t)
	st := p.a.Stats()
	t.Logf("losses %d: RetransSegs %d TCPTimeouts %d TCPRenoRecovery %d TCPFastRetrans %d TCPSlowStartRetrans %d",
		losses, st.RetransSegs, st.TCPTimeouts, st.TCPRenoRecovery, st.TCPFastRetrans, st.TCPSlowStartRetrans)
	if st.TCPTimeouts != 1 || st.TCPRenoRecovery != 1 {
		t.Errorf("TCPTimeouts %d TCPRenoRecovery %d, want 1 and 1 (no recovery after the timeout's episode)", st.TCPTimeouts, st.TCPRenoRecovery)
	}
	// Nothing sent after the timeout was lost, so none of it may be
	// retransmitted.
	seen := map[uint32]bool{}
	for _, s := range p.toB {
		if s.seg.Len == 0 {
			continue
		}
		if seen[s.seg.Seq] && !seqLT(s.seg.Seq, nxtAtRTO) {
			t.Fatalf("at %v: retransmitted seq %d, sent after the timeout (sndNxt then %d) and never lost", s.at, s.seg.Seq-p.a.iss, nxtAtRTO-p.a.iss)
		}
		seen[s.seg.Seq] = true
	}
	// Go-back-N resends, besides the holes left at the timeout, the
	// segments between them and what slow start sends in the last
	// round before the cumulative ACK passes them: a few times the
	// losses, not thousands.
	if limit := uint64(4 * losses); st.RetransSegs > limit {
		t.Errorf("%d retransmissions for %d lost segments, want at most %d", st.RetransSegs, losses, limit)
	}
}
