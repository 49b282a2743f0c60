package tcp

import "github.com/pseudocong/pseudocong/tcp/cc"

// onData is the receiver's half of an arriving data segment.
func (c *Conn) onData(s *Segment) {
	seq, end := s.Seq, s.Seq+uint32(s.Len)
	now := false // ACK at once
	ce := c.ecnOK && s.ECN == ECNCE
	if ce {
		c.stats.SegsCE++
	}
	if c.ecnOK && !c.ecnOwner {
		// RFC 3168 §6.1.3: latch ECE from a CE until the sender's CWR.
		if s.Flags&FlagCWR != 0 {
			c.eceLatch = false
		}
		if ce {
			if !c.eceLatch {
				now = true // Linux's quick ACK on a new CE
			}
			c.eceLatch = true
		}
	}
	if seqLE(end, c.rcvNxt) {
		c.sendAck() // a duplicate: tell the sender where we are
		return
	}
	if !seqLT(seq, c.rcvRight()) {
		c.sendAck() // beyond the window
		return
	}
	if seqLE(seq, c.rcvNxt) {
		adv := end - c.rcvNxt
		c.rcvNxt = end
		hadOOO := len(c.ooo) > 0
		for len(c.ooo) > 0 && seqLE(c.ooo[0].Left, c.rcvNxt) {
			b := c.ooo[0]
			if seqGT(b.Right, c.rcvNxt) {
				adv += b.Right - c.rcvNxt
				c.rcvNxt = b.Right
			}
			c.oooBytes -= int(b.Right - b.Left)
			c.ooo = c.ooo[:copy(c.ooo, c.ooo[1:])]
		}
		c.stats.BytesReceived += uint64(adv)
		if c.h.Received != nil {
			c.h.Received(int(adv))
		}
		now = c.ecnEvent(ce) || now
		c.unacked++
		switch {
		case hadOOO || now:
			c.sendAck()
		case c.quick > 0:
			c.quick--
			c.sendAck()
		case c.unacked >= c.cfg.Profile.DelAckCount:
			c.sendAck()
		default:
			if !c.delack.armed() {
				c.delack.arm(c.cfg.Profile.DelAckTimeout)
			}
		}
		return
	}
	c.insertOOO(seq, end)
	c.ecnEvent(ce)
	c.unacked++
	c.sendAck() // RFC 5681 §4.2: out-of-order data is ACKed at once
}

// ecnEvent hands the segment's CE state to an algorithm that owns the
// receiver's echo (cc.ECNOwner, DCTCP) and follows its cc.AckControl; it
// reports whether to ACK at once.
func (c *Conn) ecnEvent(ce bool) bool {
	if !c.ecnOK || !c.ecnOwner {
		return false
	}
	a := &c.cc.Ack
	*a = cc.AckControl{RcvNxt: c.rcvNxt, Pending: c.unacked > 0, ECE: c.ceState}
	ev := cc.EventECNNoCE
	if ce {
		ev = cc.EventECNIsCE
	}
	c.fillCC()
	c.alg.Event(&c.cc, ev)
	if a.FlushAck {
		s := c.ackSeg()
		s.Seq = c.sndNxt
		s.Ack = a.FlushSeq
		s.Flags &^= FlagECE
		if a.FlushECE {
			s.Flags |= FlagECE
		}
		c.ackSent()
		c.emit(s)
	}
	c.ceState = a.ECE
	return a.Now
}

// insertOOO adds [seq, end) to the out-of-order blocks, merging.
func (c *Conn) insertOOO(seq, end uint32) {
	i := c.oooFrom(seq)
	nb := SACKBlock{Left: seq, Right: end}
	j := i
	for j < len(c.ooo) && seqLE(c.ooo[j].Left, end) {
		if seqLT(c.ooo[j].Left, nb.Left) {
			nb.Left = c.ooo[j].Left
		}
		if seqGT(c.ooo[j].Right, nb.Right) {
			nb.Right = c.ooo[j].Right
		}
		c.oooBytes -= int(c.ooo[j].Right - c.ooo[j].Left)
		j++
	}
	c.oooBytes += int(nb.Right - nb.Left)
	switch {
	case j == i:
		c.ooo = append(c.ooo, SACKBlock{})
		copy(c.ooo[i+1:], c.ooo[i:])
	case j > i+1:
		c.ooo = append(c.ooo[:i+1], c.ooo[j:]...)
	}
	c.ooo[i] = nb
	// Remember the arrival for SACK's "most recent first" (RFC 2018 §4).
	k := 0
	for k < c.nRecent && c.recent[k] != seq {
		k++
	}
	if k == c.nRecent && c.nRecent < len(c.recent) {
		c.nRecent++
	}
	k = min(k, len(c.recent)-1)
	copy(c.recent[1:k+1], c.recent[:k])
	c.recent[0] = seq
}

// rcvWindow is the window field to advertise: the free buffer, but never
// moving the right edge back (RFC 9293 §3.8.6: do not shrink the window),
// which also keeps the window of duplicate ACKs unchanged, as RFC 5681's
// definition of a duplicate ACK needs.
func (c *Conn) rcvWindow() uint16 {
	w := uint32(c.rcvFree())
	if seqGT(c.rcvEdge, c.rcvNxt+w) {
		w = c.rcvEdge - c.rcvNxt
	}
	f := min(w>>c.rcvScale, 0xffff)
	c.rcvEdge = c.rcvNxt + f<<c.rcvScale
	return uint16(f)
}

// rcvRight is the right edge of the window the receiver accepts data
// below: what it advertised (rcvEdge), which never moves back, or the free
// buffer if that is further (as Linux's tcp_data_queue checks against
// tcp_receive_window). Out-of-order data always lies inside the edge
// advertised, so what is held stays below RcvBuf; checking against the
// free space alone (RcvBuf less what is held) would drop segments the
// window admitted: with half a window held out of order, the far half of
// the window the sender was given is discarded, the holes come back
// consecutive, NewReno repairs them one per RTT and the RTO's go-back-N
// hits the same drops again (issue 10's no-SACK retransmission storm).
func (c *Conn) rcvRight() uint32 {
	r := c.rcvNxt + uint32(c.rcvFree())
	if seqGT(c.rcvEdge, r) {
		return c.rcvEdge
	}
	return r
}

// rcvFree is the receive buffer's free space, what the window offers.
func (c *Conn) rcvFree() int { return max(c.cfg.RcvBuf-c.oooBytes, 0) }

func (c *Conn) sendAck() {
	s := c.ackSeg()
	s.Seq = c.sndNxt
	c.ackSent()
	c.emit(s)
}

// ackSent: whatever just left carries our latest ACK.
func (c *Conn) ackSent() {
	c.unacked = 0
	c.delack.stop()
}

// ackSeg fills the output segment with the fields every segment after the
// handshake carries: ACK, window, ECE, SACK blocks, timestamps.
func (c *Conn) ackSeg() *Segment {
	s := c.newSeg()
	s.Flags = FlagACK
	s.Ack = c.rcvNxt
	s.Window = c.rcvWindow()
	if c.ecnOK && (c.ecnOwner && c.ceState || !c.ecnOwner && c.eceLatch) {
		s.Flags |= FlagECE
	}
	if c.tsOK {
		s.HasTS, s.TSVal, s.TSEcr = true, c.tsNow(), c.tsRecent
	}
	if c.sackOK && len(c.ooo) > 0 {
		c.fillSACK(s)
	}
	return s
}

// oooFrom is the index of the first out-of-order block whose right edge
// is at or above seq (len(c.ooo) if none). The blocks are disjoint and in
// sequence order, so their right edges ascend: a binary search, because a
// receiver behind many losses holds hundreds of blocks and looks one up
// for every arrival and every ACK.
func (c *Conn) oooFrom(seq uint32) int {
	lo, hi := 0, len(c.ooo)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if seqLT(c.ooo[m].Right, seq) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// fillSACK reports the blocks holding the latest arrivals first, then
// the others from the highest down (RFC 2018 §4); 3 fit beside timestamps.
func (c *Conn) fillSACK(s *Segment) {
	maxB := 4
	if s.HasTS {
		maxB = 3
	}
	has := func(b SACKBlock) bool {
		for i := 0; i < s.NumSACK; i++ {
			if s.SACK[i] == b {
				return true
			}
		}
		return false
	}
	add := func(b SACKBlock) {
		if s.NumSACK < maxB && !has(b) {
			s.SACK[s.NumSACK] = b
			s.NumSACK++
		}
	}
	for k := 0; k < c.nRecent; k++ {
		seq := c.recent[k]
		if i := c.oooFrom(seq + 1); i < len(c.ooo) && seqLE(c.ooo[i].Left, seq) {
			add(c.ooo[i])
		}
	}
	for i := len(c.ooo) - 1; i >= 0 && s.NumSACK < maxB; i-- {
		add(c.ooo[i])
	}
}
