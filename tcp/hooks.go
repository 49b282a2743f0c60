package tcp

// Accessors for a layer that schedules data over several connections
// (package mptcp's subflows): what it needs to know about a subflow's
// sender before it hands it more bytes.

// Unsent is the bytes written and not yet sent once.
func (c *Conn) Unsent() uint64 { return c.written - c.sent }

// SendSpace is the number of new full segments the congestion window
// admits now (cwnd minus in flight minus segments already queued
// unsent); zero when not established.
func (c *Conn) SendSpace() int {
	if c.state != Established || c.mss == 0 {
		return 0
	}
	queued := int((c.written - c.sent + uint64(c.mss) - 1) / uint64(c.mss))
	return max(int(c.cc.Cwnd)-int(c.inFlight())-queued, 0)
}

// LostSegments counts segments the sender has marked lost so far.
func (c *Conn) LostSegments() uint64 { return c.lostTotal }

// SentSegments counts new data segments sent (retransmissions excluded).
func (c *Conn) SentSegments() uint64 {
	if c.mss == 0 {
		return 0
	}
	return (c.sent + uint64(c.mss) - 1) / uint64(c.mss)
}

// ISS is the configured initial send sequence number.
func (c *Conn) ISS() uint32 { return c.iss }

// IRS is the peer's initial sequence number (valid once the SYN arrived).
func (c *Conn) IRS() uint32 { return c.irs }
