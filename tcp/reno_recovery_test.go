package tcp

import (
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/tcp/cc"
)

// renoPipe is lossPipe without SACK or F-RTO (ns-2's agents have
// neither) and with the given recovery rule.
func renoPipe(t *testing.T, r Recovery, drops ...int) *pipe {
	ca, cb := testConfig(), testConfig()
	ca.SACK, cb.SACK = false, false
	ca.FRTO = false
	ca.Recovery = r
	p := newPipe(t, ca, cb, 10*time.Millisecond)
	p.rate = 10_000_000
	p.filter = dropOriginals(drops...)
	return p
}

// TestRenoOneLoss: with a single loss Reno and NewReno agree: one fast
// retransmit, one recovery (one halving), no timeout.
func TestRenoOneLoss(t *testing.T) {
	for _, r := range []Recovery{RecoveryNewReno, RecoveryReno, RecoveryNewRenoInflation} {
		p := renoPipe(t, r, 30)
		p.transfer(300_000, 10*time.Second)
		st := p.a.Stats()
		if st.RetransSegs != 1 || st.TCPTimeouts != 0 || st.TCPFastRetrans != 1 || st.TCPRenoRecovery != 1 {
			t.Errorf("%v: RetransSegs %d TCPTimeouts %d TCPFastRetrans %d TCPRenoRecovery %d, want 1, 0, 1, 1",
				r, st.RetransSegs, st.TCPTimeouts, st.TCPFastRetrans, st.TCPRenoRecovery)
		}
		if p.b.Stats().BytesReceived != 300_000 {
			t.Errorf("%v: received %d bytes", r, p.b.Stats().BytesReceived)
		}
	}
}

// TestRenoTwoLossesOneWindow: two losses in one window. NewReno repairs
// both in one recovery (one halving, no timeout). Reno leaves recovery on
// the partial ACK, and the bugfix guard stops the second hole's duplicate
// ACKs from a second fast retransmit, so the timer repairs it and
// ssthresh is cut a second time: two reductions where NewReno has one.
func TestRenoTwoLossesOneWindow(t *testing.T) {
	for _, r := range []Recovery{RecoveryNewReno, RecoveryNewRenoInflation} {
		nr := renoPipe(t, r, 40, 45)
		nr.transfer(400_000, 20*time.Second)
		sn := nr.a.Stats()
		if sn.TCPRenoRecovery != 1 || sn.TCPTimeouts != 0 || sn.RetransSegs != 2 {
			t.Fatalf("%v: TCPRenoRecovery %d TCPTimeouts %d RetransSegs %d, want 1, 0, 2", r, sn.TCPRenoRecovery, sn.TCPTimeouts, sn.RetransSegs)
		}
	}
	var ssth []uint32 // a's ssthresh after each change
	re := renoPipe(t, RecoveryReno, 40, 45)
	re.delivered = func(dir int, _ *Segment) {
		if s := re.a.Info().Ssthresh; dir == 1 && (len(ssth) == 0 || ssth[len(ssth)-1] != s) {
			ssth = append(ssth, s)
		}
	}
	re.transfer(400_000, 20*time.Second)
	sr := re.a.Stats()
	if sr.TCPRenoRecovery != 1 || sr.TCPTimeouts != 1 {
		t.Fatalf("Reno: TCPRenoRecovery %d TCPTimeouts %d, want 1 fast recovery and 1 timeout", sr.TCPRenoRecovery, sr.TCPTimeouts)
	}
	if re.b.Stats().BytesReceived != 400_000 {
		t.Fatalf("Reno: received %d bytes", re.b.Stats().BytesReceived)
	}
	// The timer fires with no ACK, so the second cut is seen on the next
	// ACK: initial (infinite), then halved, then halved again.
	if len(ssth) < 3 || ssth[2] > ssth[1]/2+1 {
		t.Errorf("Reno ssthresh sequence %v: want a halving and then a second halving", ssth)
	}
}

// TestRenoInflationDeflation checks RFC 5681 §3.2's arithmetic with an
// independent count of the duplicate ACKs a received: every new segment
// sent during Reno recovery leaves FlightSize (packets out) at exactly
// ssthresh + duplicate ACKs (the inflated window: ssthresh + 3 on entry,
// one more per further duplicate ACK), and the first ACK that advances
// deflates the window to ssthresh and ends recovery. With one loss
// ns-2's NewReno (RecoveryNewRenoInflation) does the same.
func TestRenoInflationDeflation(t *testing.T) {
	for _, r := range []Recovery{RecoveryReno, RecoveryNewRenoInflation} {
		inflationDeflation(t, r)
	}
}

func inflationDeflation(t *testing.T, r Recovery) {
	p := renoPipe(t, r, 60)
	p.a.cfg.CountACKs = true // at most one segment of growth per ACK: deflation is exact
	var lastAck uint32
	var dups, checked int
	deflated, wasRecovery, sentNew := false, false, false
	p.delivered = func(dir int, s *Segment) {
		if dir != 1 {
			return
		}
		if s.Len == 0 && s.Ack == lastAck && p.a.packetsOut() > 0 {
			dups++
		} else if seqGT(s.Ack, lastAck) {
			lastAck, dups = s.Ack, 0
		}
		in := p.a.Info()
		if sentNew && in.Phase == cc.Recovery {
			// This ACK sent new data: FlightSize reached the inflated window.
			checked++
			if po, want := p.a.packetsOut(), in.Ssthresh+uint32(dups); po != want {
				t.Errorf("%v: new data sent in recovery: %d packets out, want ssthresh %d + %d duplicate ACKs = %d", r, po, in.Ssthresh, dups, want)
			}
		}
		sentNew = false
		if wasRecovery && in.Phase != cc.Recovery {
			deflated = true
			if in.Phase != cc.Open || in.Cwnd < in.Ssthresh || in.Cwnd > in.Ssthresh+1 {
				t.Errorf("%v: after recovery: phase %v cwnd %d ssthresh %d, want Open and cwnd = ssthresh (+1 of growth)", r, in.Phase, in.Cwnd, in.Ssthresh)
			}
		}
		wasRecovery = in.Phase == cc.Recovery
	}
	maxSeq := uint32(0)
	drop := p.filter
	p.filter = func(dir, i int, s *Segment) (time.Duration, bool) {
		if dir == 0 && s.Len > 0 && (maxSeq == 0 || seqGT(s.Seq, maxSeq)) {
			maxSeq = s.Seq
			sentNew = true
		}
		return drop(dir, i, s)
	}
	p.transfer(400_000, 10*time.Second)
	if checked < 3 || !deflated {
		t.Fatalf("%v: checked %d ACKs that sent in recovery, deflated %v: the test saw no inflation", r, checked, deflated)
	}
	if st := p.a.Stats(); st.TCPRenoRecovery != 1 || st.TCPTimeouts != 0 {
		t.Errorf("%v: TCPRenoRecovery %d TCPTimeouts %d, want 1, 0", r, st.TCPRenoRecovery, st.TCPTimeouts)
	}
}

// TestNewRenoInflationPartialDeflation: RFC 6582 §3.2 step 5 with
// inflation: a partial ACK deflates the window by what it acknowledged and
// adds one segment back, so (with the window full before it) it sends the
// next hole's retransmission and exactly one new segment.
func TestNewRenoInflationPartialDeflation(t *testing.T) {
	p := renoPipe(t, RecoveryNewRenoInflation, 40, 45)
	var retrans, fresh, partials int
	seen := map[uint32]bool{}
	inRecovery := false
	drop := p.filter
	p.filter = func(dir, i int, s *Segment) (time.Duration, bool) {
		if dir == 0 && s.Len > 0 {
			if seen[s.Seq] {
				retrans++
			} else {
				fresh++
			}
			seen[s.Seq] = true
		}
		return drop(dir, i, s)
	}
	// The counts are what a sent while processing one ACK: delivered
	// reads and resets them after each.
	var lastAck uint32
	p.delivered = func(dir int, s *Segment) {
		if dir != 1 {
			return
		}
		partial := inRecovery && seqGT(s.Ack, lastAck) && p.a.phase == cc.Recovery
		if seqGT(s.Ack, lastAck) {
			lastAck = s.Ack
		}
		if partial {
			partials++
			if retrans != 1 || fresh != 1 {
				t.Errorf("partial ACK %d sent %d retransmissions and %d new segments, want 1 and 1", partials, retrans, fresh)
			}
		}
		inRecovery = p.a.phase == cc.Recovery
		retrans, fresh = 0, 0
	}
	p.transfer(400_000, 20*time.Second)
	if partials != 1 {
		t.Fatalf("%d partial ACKs, want 1 (two losses in one window)", partials)
	}
}

// TestRestartOnRetransmit: a loss whose duplicate ACKs come late. Segment
// 30 is dropped and every original sent after it until the fast
// retransmission is held 180 ms on the way (RTT 100 ms, RTO ≈ 310 ms), so
// the third duplicate ACK arrives ≈ 260 ms after the last ACK that
// advanced and the retransmission's ACK ≈ 360 ms after it. RFC 6298's
// timer (restarted by new ACKs only) expires first; with
// RestartOnRetransmit the fast retransmission restarts it and the loss
// costs no timeout.
func TestRestartOnRetransmit(t *testing.T) {
	for _, restart := range []bool{false, true} {
		ca, cb := testConfig(), testConfig()
		ca.SACK, cb.SACK = false, false
		ca.FRTO = false
		ca.Profile.RTO.RestartOnRetransmit = restart
		p := newPipe(t, ca, cb, 50*time.Millisecond)
		p.rate = 10_000_000
		drop := dropOriginals(30)
		var lostSeq uint32
		held, retransmitted := false, false
		p.filter = func(dir, i int, s *Segment) (time.Duration, bool) {
			if dir != 0 || s.Len == 0 {
				return 0, false
			}
			if _, d := drop(dir, i, s); d {
				lostSeq, held = s.Seq, true
				return 0, true
			}
			if held && s.Seq == lostSeq {
				retransmitted = true
			}
			if held && !retransmitted {
				return 180 * time.Millisecond, false
			}
			return 0, false
		}
		p.transfer(300_000, 20*time.Second)
		st := p.a.Stats()
		if st.TCPFastRetrans < 1 {
			t.Errorf("restart %v: %d fast retransmissions, want the late loss repaired by one", restart, st.TCPFastRetrans)
		}
		if want := map[bool]uint64{false: 1, true: 0}[restart]; st.TCPTimeouts != want {
			t.Errorf("restart %v: %d timeouts, want %d", restart, st.TCPTimeouts, want)
		}
	}
}
