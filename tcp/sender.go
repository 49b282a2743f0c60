package tcp

import (
	"time"
	"unsafe"

	"github.com/pseudocong/pseudocong/internal/prefetch"
	"github.com/pseudocong/pseudocong/tcp/cc"
)

func (c *Conn) packetsOut() uint32 { return uint32(len(c.q) - c.qHead) }

// inFlight is Linux's tcp_packets_in_flight: sent, minus what is known to
// have left the network (SACKed or marked lost), plus retransmissions.
func (c *Conn) inFlight() uint32 {
	return c.packetsOut() - (c.sackedOut + c.lostOut) + c.retransOut
}

// onAck is the sender's half of an arriving ACK (tcp_ack).
func (c *Conn) onAck(s *Segment) {
	ack := s.Ack
	if seqGT(ack, c.sndNxt) || seqLT(ack, c.sndUna) {
		return // acknowledges nothing we sent, or is older than what we know
	}
	now := c.now()
	priorInFlight := c.inFlight()
	priorUna := c.sndUna
	wnd := uint32(s.Window) << c.sndScale
	windowChanged := wnd != c.sndWnd
	c.sndWnd = wnd

	c.rsValid = false
	c.rs = cc.RateSample{Delivered: -1, PriorInFlight: priorInFlight}
	lostBefore := c.lostOut
	var newlySacked, newlyAcked uint32
	origAcked := false // never-retransmitted data (s)acked (Linux FLAG_ORIG_SACK_ACKED)
	var retransAcked uint32
	seqRTT, caRTT, sackRTT := int64(-1), int64(-1), int64(-1)

	if c.sackOK && s.NumSACK > 0 {
		newlySacked, sackRTT, origAcked = c.sackTag(s, now)
	}
	for c.qHead < len(c.q) && seqLE(c.q[c.qHead].end, ack) {
		r := &c.q[c.qHead]
		if r.state&segSacked != 0 {
			c.sackedOut--
		} else {
			newlyAcked++
			c.rateDelivered(r, now)
			if r.state&segEverRetrans == 0 {
				origAcked = true
				if seqRTT < 0 {
					seqRTT = now - r.sentAt
				}
				caRTT = now - r.sentAt
			}
		}
		if r.state&segLost != 0 {
			c.lostOut--
		}
		if r.state&segRetrans != 0 {
			c.retransOut--
			retransAcked++
		}
		if c.qHead < c.lossW && r.state&segSacked != 0 {
			c.lossBelow--
		}
		c.qHead++
	}
	if c.qHead == len(c.q) {
		c.q, c.qHead, c.hint, c.lostTop = c.q[:0], 0, 0, 0
		c.lossW, c.lossBelow = 0, 0
	} else if c.qHead > 256 && 2*c.qHead > len(c.q) {
		n := copy(c.q, c.q[c.qHead:])
		c.q = c.q[:n]
		c.hint = max(c.hint-c.qHead, 0)
		c.lostTop = max(c.lostTop-c.qHead, 0)
		c.lossW = max(c.lossW-c.qHead, 0)
		c.qHead = 0
	}
	c.hint = max(c.hint, c.qHead)
	c.lossW = max(c.lossW, c.qHead) // lossBelow is 0 if the head passed it
	if h := c.qHead + 1; h < len(c.q) {
		// The next ACK reads the records after the one the loop stopped
		// at, written a round trip ago and long gone from the cache
		// when the window is large: ask for them now (see prefetch).
		prefetch.Lines(unsafe.Pointer(&c.q[h]), 2)
	}

	advanced := seqGT(ack, priorUna)
	if advanced {
		n := uint64(ack - priorUna)
		c.acked += n
		c.stats.BytesAcked += n
		c.sndUna = ack
		c.rtoRetries = 0
	}
	isDup := !advanced && s.Len == 0 && !windowChanged && c.packetsOut() > 0
	if !c.sackOK {
		isDup = c.renoEchoes(isDup, advanced, ack, retransAcked)
		isDup = c.renoDup(isDup)
	}
	if !c.sackOK && c.phase == cc.Loss {
		// Linux's tcp_process_loss for Reno: after a timeout everything
		// outstanding is marked lost, so a duplicate ACK (the receiver
		// seeing a go-back-N copy of data it holds) says nothing left
		// the network; only with new data sent beyond the timeout's
		// high mark (F-RTO) does it count. A cumulative ACK resets the
		// count (tcp_reset_reno_sack).
		if isDup && seqGT(c.sndNxt, c.highSeq) {
			c.sackedOut++
			c.limitRenoSacks()
			newlySacked = 1
			c.delivered++
			c.deliveredAt = now
		} else if advanced {
			c.sackedOut = 0
		}
	} else if !c.sackOK {
		// Reno: count duplicate ACKs as SACKed segments (Linux's
		// tcp_add_reno_sack / tcp_remove_reno_sacks), so the in-flight
		// estimate falls by one per duplicate ACK as RFC 5681's window
		// inflation has it.
		if isDup {
			c.sackedOut++
			c.limitRenoSacks()
			newlySacked = 1
			c.delivered++
			c.deliveredAt = now
		} else if newlyAcked > 0 && c.sackedOut > 0 {
			d := min(newlyAcked-1, c.sackedOut)
			c.sackedOut -= d
			c.delivered -= uint64(d)
			newlyAcked -= d
			newlySacked += d
		}
	}

	// RTT (Karn: only never-retransmitted segments sample).
	if seqRTT >= 0 {
		c.rtt.sample(time.Duration(seqRTT))
	} else if sackRTT >= 0 {
		c.rtt.sample(time.Duration(sackRTT))
	}
	if caRTT < 0 {
		caRTT = sackRTT
	}
	if caRTT >= 0 {
		c.updateMinRTT(time.Duration(caRTT))
	}

	// Loss-state processing: spurious-timeout detection, then the end of
	// an episode, then entering one.
	if c.phase == cc.Loss {
		c.checkSpurious(s, advanced, isDup, newlySacked, origAcked)
	}
	// Reno leaves recovery on the first ACK that advances, partial or
	// full (RenoTcpAgent::recv zeroes dupwnd_ on any new ACK).
	if c.phase != cc.Open && c.phase != cc.Disorder && advanced &&
		(seqGE(c.sndUna, c.highSeq) || c.phase == cc.Recovery && c.reno()) {
		c.endEpisode()
	}
	if c.sackOK && newlySacked > 0 || !c.sackOK && (isDup || advanced) {
		c.markLosses(advanced)
	}
	switch c.phase {
	case cc.Open, cc.Disorder:
		if c.ecnOK && s.Flags&FlagECE != 0 && advanced && seqGT(ack, c.reducedAt) {
			c.enterCWR()
		} else if c.lostOut > 0 {
			c.enterRecovery()
		} else if c.sackedOut > 0 {
			c.setPhase(cc.Disorder)
		} else if c.phase == cc.Disorder {
			c.setPhase(cc.Open)
		}
	case cc.CWR:
		if c.lostOut > 0 {
			c.enterRecovery()
		}
	}
	var newlyLost uint32
	if c.lostOut > lostBefore {
		newlyLost = c.lostOut - lostBefore
	}

	// Congestion control.
	ackedSacked := newlyAcked + newlySacked
	c.fillCC()
	var rtt time.Duration
	if caRTT >= 0 {
		rtt = time.Duration(caRTT)
	}
	c.alg.PktsAcked(&c.cc, cc.AckSample{Acked: ackedSacked, RTT: rtt, ECE: s.Flags&FlagECE != 0, InFlight: priorInFlight})
	if c.ctl != nil {
		c.rateGen(ackedSacked, rtt, newlyLost)
		c.fillCC()
		c.ctl.Control(&c.cc, &c.rs)
		if m := c.cc.AppLimitedMark; m != 0 {
			c.appLimited = m
			c.cc.AppLimitedMark = 0
		}
	} else if c.phase == cc.Recovery && c.inflating() {
		if advanced {
			c.renoRtx = true // a partial ACK: its hole goes out now
		}
		// The window stays at ssthresh: renoEnter says why.
	} else if c.phase == cc.Recovery || c.phase == cc.CWR {
		c.prrReduce(ackedSacked, newlyLost > 0, advanced)
	} else if newlyAcked > 0 && c.isCwndLimited() {
		c.fillCC()
		n := ackedSacked
		if c.cfg.CountACKs {
			n = min(n, 1)
		}
		c.alg.CongAvoid(&c.cc, n)
	}
	c.cc.Cwnd = max(c.cc.Cwnd, 1)

	// Timer (RFC 6298 §5.2–5.3).
	if c.packetsOut() == 0 {
		c.rto.stop()
	} else if advanced {
		c.rto.arm(c.rtt.rto())
	}
	if advanced {
		if c.h.Acked != nil {
			c.h.Acked(c.acked)
		}
		if c.h.Writable != nil && c.SendBufferFree() > 0 {
			c.h.Writable()
		}
	}
	c.renoFastRetransmit()
	c.push()
}

// renoEchoes discounts, without SACK, the duplicate ACKs that copies of
// data the receiver already holds will draw, and reports whether this ACK
// still counts as a duplicate. A cumulative ACK that covers several
// segments with a retransmission in flight was drawn by one of those
// copies at most; each of the others reaches the receiver after its data
// did and comes back as a duplicate ACK that says nothing about a loss.
// That is what a timeout's go-back-N produces (the receiver held most of
// what is resent), and counted as duplicate ACKs those echoes started a
// spurious fast retransmit, whose partial-ACK retransmissions were copies
// again, and so on to the end of the flow (issue 10's storm; RFC 6582
// §4.1 describes the problem, whose recover check misses it once the
// cumulative ACK has passed recover before the copies arrive). On a FIFO
// path every copy arrives before anything sent after it, so an ACK above
// the sndNxt at which echoes were last expected means they all came back
// (or were lost): the count then expires.
func (c *Conn) renoEchoes(isDup, advanced bool, ack, retransAcked uint32) bool {
	if advanced {
		if c.echoes > 0 && seqGT(ack, c.echoSeq) {
			c.echoes = 0
		}
		if retransAcked > 1 {
			c.echoes += retransAcked - 1
			c.echoSeq = c.sndNxt
		}
		return false
	}
	if isDup && c.echoes > 0 {
		c.echoes--
		return false
	}
	return isDup
}

func (c *Conn) limitRenoSacks() {
	holes := max(c.lostOut, 1)
	if po := c.packetsOut(); c.sackedOut+holes > po {
		if po >= holes {
			c.sackedOut = po - holes
		} else {
			c.sackedOut = 0
		}
	}
}

// isCwndLimited is Linux's tcp_is_cwnd_limited: in slow start, whether
// cwnd is below twice the most segments out in the current window (so it
// grows to twice what was used, not without bound); above it, whether the
// sender filled cwnd in the current window. The cc contract (CongAvoid
// only when cwnd-limited) rests on this: a flow limited by the receive
// window, by pacing or by the application does not grow its window past
// what it puts in flight.
func (c *Conn) isCwndLimited() bool {
	if c.cc.Cwnd < c.cc.Ssthresh {
		return c.cc.Cwnd < 2*c.maxPacketsOut
	}
	return c.cwndLimited
}

// cwndValidate is the tracking half of Linux's tcp_cwnd_validate, run
// after each transmission round: remember for the current window (until
// sndUna passes the sndNxt it began at) whether cwnd was filled, or else
// the most segments out.
func (c *Conn) cwndValidate(limited bool) {
	po := c.packetsOut()
	if !seqLT(c.sndUna, c.cwndUsageSeq) || limited || !c.cwndLimited && po > c.maxPacketsOut {
		c.cwndLimited = limited
		c.maxPacketsOut = po
		c.cwndUsageSeq = c.sndNxt
	}
}

// sackTag marks the records the SACK blocks cover (tcp_sacktag_write_queue).
func (c *Conn) sackTag(s *Segment, now int64) (newly uint32, rtt int64, orig bool) {
	rtt = -1
	for i := 0; i < s.NumSACK; i++ {
		b := s.SACK[i]
		if !seqLT(b.Left, b.Right) || seqLE(b.Right, c.sndUna) || seqGT(b.Right, c.sndNxt) {
			continue // empty, old or (D-SACK) below the cumulative ACK, or bogus
		}
		// The queue is in sequence order: find the first record ending
		// after Left by binary search.
		lo, hi := c.qHead, len(c.q)
		for lo < hi {
			m := (lo + hi) / 2
			if seqLE(c.q[m].end, b.Left) {
				lo = m + 1
			} else {
				hi = m
			}
		}
		for j := c.nextUnsacked(lo); j < len(c.q) && seqLE(c.q[j].end, b.Right); j = c.nextUnsacked(j + 1) {
			r := &c.q[j]
			if seqLT(r.seq, b.Left) {
				continue
			}
			r.state |= segSacked
			r.skip = 1
			c.sackedOut++
			newly++
			if j < c.lossW {
				c.lossBelow++
			}
			if r.state&segLost != 0 {
				r.state &^= segLost
				c.lostOut--
			}
			if r.state&segRetrans != 0 {
				r.state &^= segRetrans
				c.retransOut--
			}
			if r.state&segEverRetrans == 0 {
				orig = true
				rtt = now - r.sentAt
			}
			c.rateDelivered(r, now)
		}
	}
	return newly, rtt, orig
}

// nextUnsacked is the index of the first record at or after j that is not
// SACKed (len(c.q) if none). A block of an ACK during recovery covers
// everything received above a hole, tens of thousands of records at
// 10 Gbit/s, most of them SACKed by the ACKs before; stepping over them one
// by one cost O(window) per ACK. SACKed records instead point forward
// (skip, relative, so the queue's compaction keeps them) past runs of
// SACKed ones, and each lookup shortens the pointers it followed, as a
// union-find does: a record stays SACKed until it leaves the queue, so a
// pointer never skips a record that could need tagging.
func (c *Conn) nextUnsacked(j int) int {
	k := j
	for k < len(c.q) && c.q[k].state&segSacked != 0 {
		k += max(int(c.q[k].skip), 1)
	}
	for i := j; i < k; {
		next := i + max(int(c.q[i].skip), 1)
		c.q[i].skip = int32(k - i)
		i = next
	}
	return k
}

// markLosses marks segments lost: with SACK by RFC 6675's IsLost (at least
// DupThresh segments SACKed above it); without, the first unacknowledged
// segment once DupThresh duplicate ACKs arrived, and again after each
// partial ACK in recovery (RFC 6582).
func (c *Conn) markLosses(advanced bool) {
	dt := uint32(c.cfg.DupThresh)
	if !c.sackOK {
		if c.packetsOut() == 0 {
			return
		}
		if c.sackedOut >= dt || c.phase == cc.Recovery && advanced {
			c.markLost(c.qHead)
		}
		return
	}
	if c.sackedOut < dt {
		return
	}
	// A record qualifies while at least dt SACKed records lie above it:
	// sackedOut minus those at or below it. That count only falls going
	// up the queue, so the records that qualify are a prefix of it, and
	// the walk resumes where the last one stopped (Linux's lost_skb_hint
	// and lost_cnt_hint in tcp_mark_head_lost). Walking the whole queue
	// on every ACK instead cost O(window) per ACK, most of a large-window
	// SACK flow's time (experiments/highbdp's BBR at 10 Gbit/s). A judged
	// record needs no second look, because the SACKed records above it
	// only grow while it is queued; undo, the one change that makes a
	// judged record markable again, moves the watermark back to the head.
	w, below := c.lossW, uint32(c.lossBelow)
	for ; w < len(c.q); w++ {
		r := &c.q[w]
		sacked := r.state&segSacked != 0
		upto := below
		if sacked {
			upto++
		}
		if c.sackedOut < upto+dt {
			break
		}
		if !sacked && r.state&(segLost|segRetrans) == 0 {
			c.markLost(w)
		}
		below = upto
	}
	c.lossW, c.lossBelow = w, int(below)
}

func (c *Conn) markLost(j int) {
	r := &c.q[j]
	if r.state&(segLost|segSacked|segRetrans) != 0 {
		return
	}
	r.state |= segLost
	c.lostOut++
	c.lostTotal++
	c.hint = min(c.hint, j)
	c.lostTop = max(c.lostTop, j+1)
}

func (c *Conn) setPhase(p cc.Phase) {
	if c.phase == p {
		return
	}
	c.phase = p
	c.fillCC()
	c.alg.SetPhase(&c.cc, p)
}

// currentSsthresh is Linux's tcp_current_ssthresh, what undo restores.
func (c *Conn) currentSsthresh() uint32 {
	return max(c.cc.Ssthresh, c.cc.Cwnd*3/4)
}

func (c *Conn) startReduction() {
	c.highSeq = c.sndNxt
	c.reducedAt = c.sndNxt
	c.prrDelivered, c.prrOut, c.prrPrior = 0, 0, c.cc.Cwnd
	c.fillCC()
	c.cc.Ssthresh = c.alg.SSThresh(&c.cc)
}

func (c *Conn) enterRecovery() {
	if c.sackOK {
		c.stats.TCPSackRecovery++
	} else {
		c.stats.TCPRenoRecovery++
	}
	if c.phase != cc.CWR {
		c.priorSsthresh = c.currentSsthresh()
		c.startReduction()
	} else {
		c.highSeq = c.sndNxt
	}
	c.setPhase(cc.Recovery)
	if c.inflating() {
		c.renoEnter()
	}
}

// enterCWR reduces the window on ECE (RFC 3168 §6.1.2), at most once per
// window because CWR lasts until everything sent before it is acked.
func (c *Conn) enterCWR() {
	c.stats.TCPECNReductions++
	c.priorSsthresh = 0 // an ECN reduction is never undone
	c.startReduction()
	c.sendCWR = true
	c.setPhase(cc.CWR)
}

// enterLoss is tcp_enter_loss: on a timeout everything not SACKed is
// presumed lost and the window restarts from one segment.
func (c *Conn) enterLoss() {
	newEpisode := c.phase != cc.Loss
	// F-RTO only for a timeout outside loss recovery (Linux's
	// new_recovery; RFC 5682 §2: not with retransmissions outstanding).
	frto := c.cfg.FRTO && c.phase < cc.Recovery
	if newEpisode {
		c.priorSsthresh = c.currentSsthresh()
		c.fillCC()
		c.cc.Ssthresh = c.alg.SSThresh(&c.cc)
	}
	c.fillCC()
	c.alg.Event(&c.cc, cc.EventLoss)
	if !c.sackOK {
		c.sackedOut = 0
	}
	for j := c.qHead; j < len(c.q); j++ {
		r := &c.q[j]
		r.state &^= segRetrans
		if r.state&(segSacked|segLost) == 0 {
			r.state |= segLost
			c.lostOut++
			c.lostTotal++
		}
	}
	c.retransOut = 0
	c.hint, c.lostTop = c.qHead, len(c.q)
	c.cc.Cwnd = 1
	c.cc.CwndCnt = 0
	c.highSeq = c.sndNxt
	c.reducedAt = c.sndNxt
	c.echoes = 0
	if c.reno() {
		// ns-2's RenoTcpAgent::timeout: recover_ = maxseq_ (bugFix_),
		// so the go-back-N's duplicate ACKs start no fast retransmit.
		c.renoRecover, c.renoRecoverSet = c.sndNxt, true
	}
	c.frto = frto
	c.frtoNew = false
	c.retransTS = 0
	c.setPhase(cc.Loss)
}

// checkSpurious runs in Loss on every ACK: Eifel (the ACK echoes a
// timestamp older than the retransmission) and F-RTO (RFC 5682 as Linux's
// tcp_process_loss: after the retransmission is acked, send new data; if
// never-retransmitted data is then acked, the timeout was spurious).
func (c *Conn) checkSpurious(s *Segment, advanced, isDup bool, newlySacked uint32, origAcked bool) {
	if c.cfg.Eifel && c.tsOK && advanced && c.retransTS != 0 && s.HasTS && s.TSEcr != 0 && seqLT(s.TSEcr, c.retransTS) {
		c.undo(false)
		return
	}
	if !c.frto {
		return
	}
	if origAcked && (advanced || newlySacked > 0) {
		c.undo(true)
		return
	}
	if seqGT(c.sndNxt, c.highSeq) {
		if newlySacked > 0 || isDup {
			c.frto = false // RFC 5682 step 3a: the loss was real
		}
	} else if advanced && seqLT(c.sndUna, c.highSeq) {
		// Step 2b: the retransmission was acked; send new data next.
		c.highSeq = c.sndNxt
		if c.written > c.sent && seqLT(c.sndNxt, c.sndUna+c.sndWnd) {
			c.frtoNew = true
		} else {
			c.frto = false
		}
	}
}

// undo restores the window from before a reduction found spurious
// (tcp_undo_cwnd_reduction and tcp_try_undo_loss).
func (c *Conn) undo(frto bool) {
	for j := c.qHead; j < len(c.q); j++ {
		c.q[j].state &^= segLost
	}
	c.lostOut = 0
	c.lossW, c.lossBelow = c.qHead, 0 // the records judged lost are markable again
	c.fillCC()
	c.cc.Cwnd = c.alg.Undo(&c.cc)
	if c.priorSsthresh > c.cc.Ssthresh {
		c.cc.Ssthresh = c.priorSsthresh
	}
	c.stats.TCPLossUndo++
	if frto {
		c.stats.TCPSpuriousRTOs++
	}
	c.frto, c.frtoNew = false, false
	c.rtt.backoff = 0
	c.setPhase(cc.Open)
}

// endEpisode leaves CWR, Recovery or Loss once everything outstanding at
// its start is acknowledged (RFC 6582's full ACK).
func (c *Conn) endEpisode() {
	p := c.phase
	if (p == cc.CWR || p == cc.Recovery) && c.cc.Ssthresh < cc.InfiniteSsthresh && c.ctl == nil {
		c.cc.Cwnd = max(c.cc.Ssthresh, 1)
	}
	c.frto, c.frtoNew = false, false
	if !c.sackOK {
		// tcp_fastretrans_alert's tcp_reset_reno_sack on leaving
		// Recovery (and tcp_process_loss's in Loss): the duplicate
		// ACKs counted during the episode were its own. Kept, they
		// met the threshold at once and the next ACK started a new
		// recovery, whose partial-ACK retransmissions (copies the
		// receiver had) kept the count up again: back-to-back
		// spurious recoveries at cwnd 2 for the rest of the flow
		// (issue 10's storm in experiments/highbdp).
		c.sackedOut = 0
	}
	if c.sackedOut > 0 || c.lostOut > 0 {
		c.setPhase(cc.Disorder)
	} else {
		c.setPhase(cc.Open)
	}
	if p == cc.CWR || p == cc.Recovery {
		c.fillCC()
		c.alg.Event(&c.cc, cc.EventCompleteCWR)
	}
}

// prrReduce is Proportional Rate Reduction (RFC 6937) as Linux's
// tcp_cwnd_reduction: during Recovery and CWR the window is set so that
// sending follows delivery at ssthresh/prior-cwnd, and grows back to
// ssthresh (slow-start reduction bound) once the pipe is below it.
func (c *Conn) prrReduce(ackedSacked uint32, newlyLost, advanced bool) {
	if ackedSacked == 0 || c.prrPrior == 0 {
		return
	}
	c.prrDelivered += ackedSacked
	inf := c.inFlight()
	var sndcnt int64
	if delta := int64(c.cc.Ssthresh) - int64(inf); delta < 0 {
		sndcnt = (int64(c.cc.Ssthresh)*int64(c.prrDelivered)+int64(c.prrPrior)-1)/int64(c.prrPrior) - int64(c.prrOut)
	} else {
		sndcnt = max(int64(c.prrDelivered)-int64(c.prrOut), int64(ackedSacked))
		if advanced && !newlyLost {
			sndcnt++
		}
		sndcnt = min(delta, sndcnt)
	}
	if c.prrOut == 0 {
		sndcnt = max(sndcnt, 1) // the fast retransmit itself
	}
	c.cc.Cwnd = uint32(max(int64(inf)+sndcnt, 1))
}

// push sends what the windows allow: lost segments first, then new data
// (tcp_write_xmit and tcp_xmit_retransmit_queue in one loop).
func (c *Conn) push() {
	if c.state != Established || c.inPush {
		return
	}
	c.inPush = true
	sent, full := c.pushLoop()
	c.inPush = false
	// tcp_write_xmit: cwnd-limited if cwnd stopped sending or is full.
	full = full || c.inFlight() >= c.cc.Cwnd
	if sent || full {
		c.cwndValidate(full)
	}
}

// pushLoop sends until a window, the pacer or the application stops it;
// it reports whether it sent anything and whether cwnd stopped it.
func (c *Conn) pushLoop() (sent, cwndFull bool) {
	for {
		now := c.now()
		if c.cfg.Pacing && c.cc.PacingRate > 0 && now < c.nextSendAt {
			c.pace.armAt(c.nextSendAt)
			return
		}
		inf := c.inFlight()
		if inf >= c.cc.Cwnd {
			return sent, true
		}
		if !c.frtoNew {
			if j := c.nextLost(); j >= 0 {
				c.retransmit(j, now)
				sent = true
				continue
			}
		}
		avail := c.written - c.sent
		if avail == 0 {
			c.frtoNew = false
			if c.lostOut <= c.retransOut {
				c.appLimited = max(c.delivered+uint64(inf), 1)
			}
			return sent, false
		}
		n := uint32(min(avail, uint64(c.mss)))
		if seqGT(c.sndNxt+n, c.sndUna+c.sndWnd) {
			c.frtoNew = false
			return sent, false // receive window full
		}
		c.sendNew(n, now)
		sent = true
		if c.frtoNew && c.inFlight() >= c.cc.Cwnd {
			c.frtoNew = false
		}
	}
}

func (c *Conn) nextLost() int {
	if c.lostOut == 0 {
		return -1
	}
	// Between the two hints only: after the last record marked lost
	// there is none to find, and stepping on to the end of the queue
	// (all of it in flight or SACKed) cost O(window) on every ACK while
	// each ACK marked one more record lost.
	for j := max(c.hint, c.qHead); j < min(c.lostTop, len(c.q)); j++ {
		if c.q[j].state&(segLost|segRetrans|segSacked) == segLost {
			c.hint = j
			return j
		}
	}
	c.hint = len(c.q)
	return -1
}

func (c *Conn) sendNew(n uint32, now int64) {
	if c.packetsOut() == 0 {
		c.fillCC()
		c.alg.Event(&c.cc, cc.EventTxStart) // LastSend is still the previous send
	}
	c.q = append(c.q, txSeg{seq: c.sndNxt, end: c.sndNxt + n})
	j := len(c.q) - 1
	if k := j + 3; k < cap(c.q) {
		// The slot a later send will fill was last written a whole
		// window of records ago (c.q slides, then moves back to its
		// start): ask for it now, not when the send stalls on it.
		prefetch.Lines(unsafe.Pointer(&c.q[:k+1][k]), 1)
	}
	s := c.dataSeg(j, now)
	if c.ecnOK {
		s.ECN = ECNECT0
		if c.sendCWR {
			s.Flags |= FlagCWR
			c.sendCWR = false
		}
	}
	c.sndNxt += n
	c.sent += uint64(n)
	c.emitData(s, now)
}

func (c *Conn) retransmit(j int, now int64) {
	r := &c.q[j]
	r.state |= segRetrans | segEverRetrans
	c.retransOut++
	s := c.dataSeg(j, now)
	if c.retransTS == 0 && s.HasTS {
		c.retransTS = s.TSVal
	}
	c.stats.RetransSegs++
	c.stats.BytesRetrans += uint64(s.Len)
	if j == c.qHead && c.cfg.Profile.RTO.RestartOnRetransmit {
		c.rto.arm(c.rtt.rto())
	}
	switch c.phase {
	case cc.Recovery:
		c.stats.TCPFastRetrans++
	case cc.Loss:
		c.stats.TCPSlowStartRetrans++
	}
	c.emitData(s, now)
}

// dataSeg stamps record j as sent now and fills the output segment for it.
func (c *Conn) dataSeg(j int, now int64) *Segment {
	if c.packetsOut() == 1 && j == c.qHead {
		c.firstTxAt, c.deliveredAt = now, now // tcp_rate_skb_sent: restart after idle
	}
	r := &c.q[j]
	r.sentAt = now
	r.delivered, r.deliveredAt, r.firstTxAt = c.delivered, c.deliveredAt, c.firstTxAt
	r.appLimited = c.appLimited != 0
	r.state &^= segRated
	s := c.ackSeg()
	s.Seq = r.seq
	s.Len = int(r.end - r.seq)
	return s
}

func (c *Conn) emitData(s *Segment, now int64) {
	if c.phase == cc.Recovery || c.phase == cc.CWR {
		c.prrOut++
	}
	c.stats.BytesSent += uint64(s.Len)
	if c.cfg.Pacing && c.cc.PacingRate > 0 {
		// Linux's tcp_internal_pacing times skb->len: the TCP segment.
		gap := int64(float64(s.WireLen()-ipHeaderLen) * 1e9 / c.cc.PacingRate)
		c.nextSendAt = max(c.nextSendAt, now) + gap
	}
	c.ackSent()
	c.cc.LastSend = c.clockNow()
	c.emit(s)
	if !c.rto.armed() {
		c.rto.arm(c.rtt.rto())
	}
}

// rateDelivered is tcp_rate_skb_delivered.
func (c *Conn) rateDelivered(r *txSeg, now int64) {
	if r.state&segRated != 0 {
		return
	}
	r.state |= segRated
	c.delivered++
	c.deliveredAt = now
	if !c.rsValid || r.delivered > c.rs.PriorDelivered {
		c.rsValid = true
		c.rs.PriorDelivered = r.delivered
		c.rsPriorAt = r.deliveredAt
		c.rs.AppLimited = r.appLimited
		c.rsSendEl = r.sentAt - r.firstTxAt
		c.firstTxAt = r.sentAt
	}
}

// rateGen is tcp_rate_gen: the delivery rate over the longer of the send
// and ACK intervals of the most recently sent segment this ACK delivered.
// Interval is 0 when the sample is not usable (shorter than min RTT).
func (c *Conn) rateGen(ackedSacked uint32, rtt time.Duration, newlyLost uint32) {
	if c.appLimited != 0 && c.delivered > c.appLimited {
		c.appLimited = 0
	}
	c.rs.AckedSacked = ackedSacked
	c.rs.RTT = rtt
	c.rs.Losses = newlyLost
	if !c.rsValid {
		c.rs.Delivered, c.rs.Interval = -1, 0
		return
	}
	c.rs.Delivered = int64(c.delivered - c.rs.PriorDelivered)
	iv := max(c.rsSendEl, c.deliveredAt-c.rsPriorAt)
	c.rs.Interval = time.Duration(iv)
	if c.rs.Interval < c.minRTT {
		c.rs.Interval = 0
	}
}
