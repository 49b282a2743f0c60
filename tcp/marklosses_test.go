package tcp

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestMarkLossesWatermark checks markLosses' resumable walk (and
// sackTag's skip pointers, nextLost's bounds) against the rules they implement, RFC 6675's IsLost, judged from scratch on every ACK
// of SACK transfers that lose, reorder and stall segments (the stalls
// cause spurious timeouts and so undo, the one change that moves the
// watermark back): after an ACK that SACKed something new, no record that
// is neither SACKed, lost nor retransmitted may have DupThresh SACKed
// records above it, and the watermark's count must be the SACKed records
// below it.
func TestMarkLossesWatermark(t *testing.T) {
	var undos, recoveries, checked int
	for seed := range uint64(6) {
		ca, cb := testConfig(), testConfig()
		ca.SACK, cb.SACK = true, true
		p := newPipe(t, ca, cb, 10*time.Millisecond)
		p.rate = 20_000_000
		rng := rand.New(rand.NewPCG(seed, 7))
		var stallTo time.Duration // data sent before it arrive then
		p.filter = func(dir, i int, s *Segment) (time.Duration, bool) {
			if dir != 0 || s.Len == 0 {
				return 0, false
			}
			now := p.sim.Elapsed()
			r := rng.Float64()
			if r < 0.02 {
				return 0, true
			}
			if now < stallTo {
				return stallTo - now, false
			}
			switch {
			case r < 0.04:
				return time.Duration(rng.IntN(5)) * time.Millisecond, false // reordered
			case r < 0.06:
				// A path stall: what is sent in the next second
				// arrives at its end, after the timer fired (a
				// spurious timeout, which undo reverses).
				stallTo = now + time.Second
				return time.Second, false
			}
			return 0, false
		}
		sacked := map[uint32]bool{}
		p.delivered = func(dir int, ack *Segment) {
			if dir != 1 {
				return
			}
			c := p.a
			// sackTag's skip pointers: every record inside a block of
			// this ACK is tagged, and nextUnsacked agrees with a scan.
			for i := 0; i < ack.NumSACK; i++ {
				b := ack.SACK[i]
				for j := c.qHead; j < len(c.q); j++ {
					if r := c.q[j]; seqGE(r.seq, b.Left) && seqLE(r.end, b.Right) && r.state&segSacked == 0 {
						t.Fatalf("seed %d: record %d [%d, %d) inside SACK block [%d, %d) is not SACKed", seed, j, r.seq, r.end, b.Left, b.Right)
					}
				}
			}
			want := -1
			for j := c.qHead; j < len(c.q) && c.lostOut > 0; j++ {
				if c.q[j].state&(segLost|segRetrans|segSacked) == segLost {
					want = j
					break
				}
			}
			if got := c.nextLost(); got != want {
				t.Fatalf("seed %d: nextLost() = %d, want %d", seed, got, want)
			}
			for j := c.qHead; j <= len(c.q); j += 7 {
				k := j
				for k < len(c.q) && c.q[k].state&segSacked != 0 {
					k++
				}
				if got := c.nextUnsacked(j); got != k {
					t.Fatalf("seed %d: nextUnsacked(%d) = %d, want %d", seed, j, got, k)
				}
			}
			if c.lossW < c.qHead || c.lossW > len(c.q) {
				t.Fatalf("seed %d: lossW %d outside [qHead %d, %d]", seed, c.lossW, c.qHead, len(c.q))
			}
			newly, below := false, 0
			for j := c.qHead; j < len(c.q); j++ {
				s := c.q[j].state&segSacked != 0
				if s && !sacked[c.q[j].seq] {
					newly = true
					sacked[c.q[j].seq] = true
				}
				if s && j < c.lossW {
					below++
				}
			}
			if below != c.lossBelow {
				t.Fatalf("seed %d: lossBelow %d, want %d SACKed records below lossW %d", seed, c.lossBelow, below, c.lossW)
			}
			if !newly || c.sackedOut < uint32(c.cfg.DupThresh) {
				return
			}
			checked++
			var above uint32
			for j := len(c.q) - 1; j >= c.qHead; j-- {
				st := c.q[j].state
				if st&segSacked != 0 {
					above++
				} else if above >= uint32(c.cfg.DupThresh) && st&(segLost|segRetrans) == 0 {
					t.Fatalf("seed %d: record %d (seq %d) has %d SACKed above it and is not marked lost", seed, j, c.q[j].seq, above)
				}
			}
		}
		p.transfer(3_000_000, 120*time.Second)
		st := p.a.Stats()
		undos += int(st.TCPLossUndo)
		recoveries += int(st.TCPSackRecovery)
	}
	// The test proves something only if the walk was exercised: SACK
	// recoveries, ACKs judged and an undo.
	if recoveries == 0 || checked < 100 || undos == 0 {
		t.Fatalf("%d SACK recoveries, %d ACKs judged, %d undos: the transfers did not exercise the walk", recoveries, checked, undos)
	}
	t.Logf("%d SACK recoveries, %d ACKs judged, %d undos", recoveries, checked, undos)
}

// TestMarkLossesAfterUndo: undo clears every lost mark, and the records
// the walk had already judged lost must be marked again by the next
// SACK, as a walk from scratch would.
func TestMarkLossesAfterUndo(t *testing.T) {
	p := newPipe(t, testConfig(), testConfig(), time.Millisecond)
	p.start()
	p.sim.RunUntil(epoch.Add(time.Second))
	c := p.a
	if !c.sackOK || len(c.q) != c.qHead {
		t.Fatalf("after the handshake: sackOK %v, %d records queued", c.sackOK, len(c.q)-c.qHead)
	}
	base := c.sndNxt
	for i := range uint32(20) {
		c.q = append(c.q, txSeg{seq: base + i*100, end: base + (i+1)*100})
	}
	c.sndNxt = base + 2000
	sack := func(from, to int) {
		s := Segment{NumSACK: 1}
		s.SACK[0] = SACKBlock{Left: c.q[from].seq, Right: c.q[to-1].end}
		if n, _, _ := c.sackTag(&s, 0); n == 0 {
			t.Fatalf("SACK of records %d–%d tagged nothing", from, to-1)
		}
		c.markLosses(false)
	}
	lost := func() (n int) {
		for j := c.qHead; j < len(c.q); j++ {
			if c.q[j].state&segLost != 0 {
				n++
			}
		}
		return n
	}
	sack(10, 15) // five SACKed: records 0–9 have at least three above
	if n := lost(); n != 10 || c.lostOut != 10 {
		t.Fatalf("after SACK 10–14: %d records lost (lostOut %d), want 10", n, c.lostOut)
	}
	c.undo(false)
	if n := lost(); n != 0 || c.lostOut != 0 {
		t.Fatalf("after undo: %d records lost (lostOut %d), want 0", n, c.lostOut)
	}
	sack(15, 16)
	if n := lost(); n != 10 || c.lostOut != 10 {
		t.Fatalf("after undo and SACK 15: %d records lost (lostOut %d), want 10 (0–9 again)", n, c.lostOut)
	}
	sack(17, 20) // 16 now has three SACKed above it (10–15 are below it)
	if c.q[16].state&segLost == 0 || c.lostOut != 11 {
		t.Fatalf("after SACK 17–19: record 16 lost %v, lostOut %d, want true, 11", c.q[16].state&segLost != 0, c.lostOut)
	}
}
