package tcp

import (
	"testing"
	"time"
)

// dropOriginals drops, a→b, the first transmission of the data segments
// whose index among first transmissions (0-based) is in which.
func dropOriginals(which ...int) func(dir, i int, s *Segment) (time.Duration, bool) {
	seen := map[uint32]bool{}
	n := 0
	drop := map[int]bool{}
	for _, w := range which {
		drop[w] = true
	}
	return func(dir, i int, s *Segment) (time.Duration, bool) {
		if dir != 0 || s.Len == 0 || seen[s.Seq] {
			return 0, false
		}
		seen[s.Seq] = true
		k := n
		n++
		return 0, drop[k]
	}
}

func lossPipe(t *testing.T, sack bool, drops ...int) *pipe {
	ca, cb := testConfig(), testConfig()
	ca.SACK, cb.SACK = sack, sack
	p := newPipe(t, ca, cb, 10*time.Millisecond)
	p.rate = 10_000_000
	p.filter = dropOriginals(drops...)
	return p
}

// TestFastRetransmitOneLoss: one lost segment is repaired by exactly one
// retransmission, without a timeout, with and without SACK.
func TestFastRetransmitOneLoss(t *testing.T) {
	for _, sack := range []bool{false, true} {
		p := lossPipe(t, sack, 30)
		p.transfer(300_000, 10*time.Second)
		st := p.a.Stats()
		if st.RetransSegs != 1 || st.TCPTimeouts != 0 || st.TCPFastRetrans != 1 {
			t.Errorf("sack=%v: RetransSegs %d TCPTimeouts %d TCPFastRetrans %d, want 1, 0, 1", sack, st.RetransSegs, st.TCPTimeouts, st.TCPFastRetrans)
		}
		rec := st.TCPRenoRecovery
		if sack {
			rec = st.TCPSackRecovery
		}
		if rec != 1 {
			t.Errorf("sack=%v: %d recoveries, want 1", sack, rec)
		}
		if p.a.Info().Ssthresh >= 1<<20 {
			t.Errorf("sack=%v: ssthresh not reduced", sack)
		}
		if p.b.Stats().BytesReceived != 300_000 {
			t.Errorf("received %d bytes", p.b.Stats().BytesReceived)
		}
	}
}

// retransTimes returns when a's retransmissions left (relative to start).
func retransTimes(p *pipe) []time.Duration {
	seen := map[uint32]bool{}
	var out []time.Duration
	for _, s := range p.toB {
		if s.seg.Len == 0 {
			continue
		}
		if seen[s.seg.Seq] {
			out = append(out, s.at)
		}
		seen[s.seg.Seq] = true
	}
	return out
}

// TestNewRenoPartialACKs: three losses in one window, no SACK: NewReno
// stays in one recovery, retransmitting one hole per partial ACK (one
// RTT apart), and never times out.
func TestNewRenoPartialACKs(t *testing.T) {
	p := lossPipe(t, false, 40, 45, 50)
	p.transfer(400_000, 10*time.Second)
	st := p.a.Stats()
	if st.RetransSegs != 3 || st.TCPTimeouts != 0 || st.TCPRenoRecovery != 1 {
		t.Fatalf("RetransSegs %d TCPTimeouts %d TCPRenoRecovery %d, want 3, 0, 1", st.RetransSegs, st.TCPTimeouts, st.TCPRenoRecovery)
	}
	rt := retransTimes(p)
	rtt := p.a.Info().MinRTT
	for i := 1; i < len(rt); i++ {
		if gap := rt[i] - rt[i-1]; gap < rtt {
			t.Errorf("retransmission %d came %v after the previous, want a partial ACK's RTT (≥ %v)", i, gap, rtt)
		}
	}
}

// TestSACKRecoveryManyLosses: with SACK, four losses in one window are all
// retransmitted within about one RTT of the first fast retransmit, where
// NewReno needs an RTT per hole.
func TestSACKRecoveryManyLosses(t *testing.T) {
	drops := []int{40, 44, 48, 52}
	p := lossPipe(t, true, drops...)
	p.transfer(400_000, 10*time.Second)
	st := p.a.Stats()
	if st.RetransSegs != 4 || st.TCPTimeouts != 0 || st.TCPSackRecovery != 1 {
		t.Fatalf("RetransSegs %d TCPTimeouts %d TCPSackRecovery %d, want 4, 0, 1", st.RetransSegs, st.TCPTimeouts, st.TCPSackRecovery)
	}
	rt := retransTimes(p)
	rtt := p.a.Info().MinRTT
	if span := rt[len(rt)-1] - rt[0]; span > rtt {
		t.Errorf("SACK retransmissions spread over %v, want within one RTT (%v)", span, rtt)
	}
	q := lossPipe(t, false, drops...)
	q.transfer(400_000, 10*time.Second)
	rq := retransTimes(q)
	if len(rq) != 4 {
		t.Fatalf("NewReno: %d retransmissions, want 4", len(rq))
	}
	if span := rq[len(rq)-1] - rq[0]; span < 3*rtt {
		t.Errorf("NewReno spread %v; expected ≥ 3 RTTs (%v) — then the comparison above proves nothing", span, 3*rtt)
	}
}

// TestRTORecovery: losing the last segments of a transfer leaves no
// duplicate ACKs, so only the timer repairs them; cwnd restarts at 1.
func TestRTORecovery(t *testing.T) {
	ca, cb := testConfig(), testConfig()
	ca.FRTO = false
	p := newPipe(t, ca, cb, 10*time.Millisecond)
	p.rate = 10_000_000
	n := 20 * 1448
	p.filter = dropOriginals(19)
	done := p.transfer(n, 10*time.Second)
	st := p.a.Stats()
	if st.TCPTimeouts != 1 || st.RetransSegs != 1 || st.TCPSlowStartRetrans != 1 {
		t.Errorf("TCPTimeouts %d RetransSegs %d TCPSlowStartRetrans %d, want 1 each", st.TCPTimeouts, st.RetransSegs, st.TCPSlowStartRetrans)
	}
	if done < 200*time.Millisecond {
		t.Errorf("done at %v: before any RTO could fire", done)
	}
}
