package tcp

import (
	"testing"
	"time"
)

// TestDelayedACK: the receiver ACKs every second full segment, and a lone
// segment after the delayed-ACK timeout.
func TestDelayedACK(t *testing.T) {
	for _, prof := range []Profile{Linux(), NS3()} {
		ca, cb := testConfig(), testConfig()
		ca.Profile, cb.Profile = prof, prof
		cb.Profile.QuickAcks = 0
		p := newPipe(t, ca, cb, 5*time.Millisecond)
		p.rate = 100_000_000
		p.transfer(200*1448, 5*time.Second)
		data, acks := 0, 0
		for _, s := range p.toB {
			if s.seg.Len > 0 {
				data++
			}
		}
		for _, s := range p.toA {
			if s.seg.Len == 0 && s.seg.Flags&FlagSYN == 0 {
				acks++
			}
		}
		if acks != data/2 {
			t.Errorf("%s: %d ACKs for %d data segments, want one per two (%d)", prof.Name, acks, data, data/2)
		}
		// One segment: its ACK waits for the timer.
		q := newPipe(t, ca, cb, 5*time.Millisecond)
		done := q.transfer(100, 5*time.Second)
		var sentAt time.Duration
		for _, s := range q.toB {
			if s.seg.Len > 0 {
				sentAt = s.at
			}
		}
		if want := sentAt + 10*time.Millisecond + prof.DelAckTimeout; done != want {
			t.Errorf("%s: lone segment acked at %v, want %v (RTT + %v delayed-ACK timeout)", prof.Name, done, want, prof.DelAckTimeout)
		}
		if q.b.Stats().DelayedACKs != 1 {
			t.Errorf("%s: DelayedACKs %d, want 1", prof.Name, q.b.Stats().DelayedACKs)
		}
	}
}

// TestECNEcho: one CE mark makes the receiver set ECE on its ACKs until a
// segment with CWR arrives; the sender reduces its window once and sends
// CWR on its next new segment; data goes out ECT(0).
func TestECNEcho(t *testing.T) {
	ca, cb := testConfig(), testConfig()
	ca.ECN, cb.ECN = true, true
	p := newPipe(t, ca, cb, 10*time.Millisecond)
	p.rate = 10_000_000
	marked := uint32(0)
	nData := 0
	p.filter = func(dir, i int, s *Segment) (time.Duration, bool) {
		if dir == 0 && s.Len > 0 {
			if s.ECN != ECNECT0 {
				t.Errorf("data segment %d with ECN %v, want ECT(0)", nData, s.ECN)
			}
			nData++
			if nData == 30 {
				s.ECN = ECNCE
				marked = s.Seq
			}
		}
		return 0, false
	}
	p.transfer(300_000, 10*time.Second)
	if p.a.Stats().TCPECNReductions != 1 || p.a.Stats().RetransSegs != 0 {
		t.Errorf("TCPECNReductions %d RetransSegs %d, want 1 and 0", p.a.Stats().TCPECNReductions, p.a.Stats().RetransSegs)
	}
	if p.a.Info().Ssthresh >= 1<<20 {
		t.Error("ssthresh not reduced")
	}
	// ECE from the first ACK covering the marked segment until CWR arrived.
	var cwrSeq uint32
	cwrs := 0
	for _, s := range p.toB {
		if s.seg.Flags&FlagCWR != 0 && s.seg.Len > 0 {
			cwrSeq = s.seg.Seq
			cwrs++
		}
	}
	if cwrs != 1 {
		t.Fatalf("%d segments with CWR, want 1", cwrs)
	}
	ece := 0
	for _, s := range p.toA {
		if s.seg.Flags&FlagSYN != 0 {
			continue
		}
		want := seqGT(s.seg.Ack, marked) && seqLE(s.seg.Ack, cwrSeq)
		if got := s.seg.Flags&FlagECE != 0; got != want {
			t.Errorf("ACK %d: ECE %v, want %v (CE at %d, CWR at %d)", s.seg.Ack, got, want, marked, cwrSeq)
		}
		if s.seg.Flags&FlagECE != 0 {
			ece++
		}
	}
	if ece == 0 {
		t.Error("no ECE at all")
	}
}

// TestWindowScaling: a 1 MiB receive buffer with window scaling lets more
// than 64 KiB be in flight; without scaling the window caps it at 65535.
func TestWindowScaling(t *testing.T) {
	for _, ws := range []bool{true, false} {
		ca, cb := testConfig(), testConfig()
		ca.WindowScaling, cb.WindowScaling = ws, ws
		cb.RcvBuf = 1 << 20
		p := newPipe(t, ca, cb, 50*time.Millisecond) // 100 ms RTT, no rate limit
		var maxFlight uint64
		p.filter = func(dir, i int, s *Segment) (time.Duration, bool) {
			if dir == 0 {
				maxFlight = max(maxFlight, uint64(p.a.sndNxt-p.a.sndUna))
			}
			return 0, false
		}
		p.transfer(4<<20, 20*time.Second)
		if ws && maxFlight <= 65535 {
			t.Errorf("with scaling: at most %d bytes in flight, want more than 64 KiB", maxFlight)
		}
		if ws && maxFlight > 1<<20 {
			t.Errorf("with scaling: %d bytes in flight, more than the 1 MiB window", maxFlight)
		}
		if !ws && maxFlight > 65535 {
			t.Errorf("without scaling: %d bytes in flight, want ≤ 65535", maxFlight)
		}
	}
}

// spikePipe delays a→b segments sent during [from, from+d) so that they
// all arrive together after the spike: the RTO fires though nothing was
// lost.
func spikePipe(t *testing.T, ca, cb Config) *pipe {
	p := newPipe(t, ca, cb, 10*time.Millisecond)
	p.rate = 10_000_000
	from, d := 300*time.Millisecond, 600*time.Millisecond
	p.filter = func(dir, i int, s *Segment) (time.Duration, bool) {
		now := p.sim.Elapsed()
		if dir == 1 && now >= from && now < from+d {
			return from + d - now, false // ACKs held back, then released
		}
		return 0, false
	}
	return p
}

// TestFRTOSpuriousTimeout: a delay spike on the ACK path fires the RTO;
// F-RTO sees never-retransmitted data acknowledged and undoes.
func TestFRTOSpuriousTimeout(t *testing.T) {
	ca, cb := testConfig(), testConfig()
	ca.FRTO = true
	p := spikePipe(t, ca, cb)
	p.transfer(2_000_000, 20*time.Second)
	st := p.a.Stats()
	if st.TCPTimeouts < 1 || st.TCPSpuriousRTOs != 1 || st.TCPLossUndo != 1 {
		t.Errorf("TCPTimeouts %d TCPSpuriousRTOs %d TCPLossUndo %d, want ≥1, 1, 1", st.TCPTimeouts, st.TCPSpuriousRTOs, st.TCPLossUndo)
	}
	// Without F-RTO the same spike is taken as a loss: no undo, and the
	// whole window is retransmitted.
	ca.FRTO = false
	q := spikePipe(t, ca, cb)
	q.transfer(2_000_000, 20*time.Second)
	sq := q.a.Stats()
	if sq.TCPSpuriousRTOs != 0 || sq.TCPLossUndo != 0 || sq.RetransSegs <= st.RetransSegs {
		t.Errorf("without F-RTO: TCPSpuriousRTOs %d TCPLossUndo %d RetransSegs %d (F-RTO run: %d); want 0, 0, more", sq.TCPSpuriousRTOs, sq.TCPLossUndo, sq.RetransSegs, st.RetransSegs)
	}
}

// TestEifelSpuriousTimeout: with timestamps, the first ACK after the
// timeout echoes the original's timestamp: Eifel undoes.
func TestEifelSpuriousTimeout(t *testing.T) {
	ca, cb := testConfig(), testConfig()
	ca.FRTO, ca.Eifel = false, true
	p := spikePipe(t, ca, cb)
	p.transfer(2_000_000, 20*time.Second)
	st := p.a.Stats()
	if st.TCPTimeouts < 1 || st.TCPLossUndo != 1 || st.TCPSpuriousRTOs != 0 {
		t.Errorf("TCPTimeouts %d TCPLossUndo %d TCPSpuriousRTOs %d, want ≥1, 1, 0", st.TCPTimeouts, st.TCPLossUndo, st.TCPSpuriousRTOs)
	}
}

// TestCountACKs: with delayed ACKs, counting ACKs (ns-3) instead of
// segments (Linux) slows slow start from ×2 to ×1.5 per RTT.
func TestCountACKs(t *testing.T) {
	cwndAfter := func(count bool) uint32 {
		ca, cb := testConfig(), testConfig()
		ca.CountACKs = count
		cb.Profile.QuickAcks = 0
		p := newPipe(t, ca, cb, 50*time.Millisecond)
		Bulk(p.a)
		p.start()
		p.sim.RunUntil(epoch.Add(100*time.Millisecond + 4*100*time.Millisecond + 50*time.Millisecond))
		return p.a.Info().Cwnd
	}
	segs, acks := cwndAfter(false), cwndAfter(true)
	t.Logf("cwnd after 4 RTTs: %d counting segments, %d counting ACKs", segs, acks)
	// Four RTTs of slow start from 10: ×2 gives 160, ×1.5 about 50.
	if segs < 140 || acks > 70 || acks < 40 {
		t.Errorf("cwnd after 4 RTTs: %d counting segments, %d counting ACKs; want ≈ 160 and ≈ 50", segs, acks)
	}
}
