package cc

import "time"

// BIC is Binary Increase Congestion control as Linux's tcp_bic.c: after a
// loss at Wmax (cut to β = 819/1024) the window binary-searches towards
// Wmax, growing each RTT by the distance to it divided by B = 4, at most
// 16 segments (linear), at least a fifth of a segment near Wmax; past Wmax
// it probes slowly, then faster ("max probing"), then linearly. Fast
// convergence lowers Wmax when losses come before reaching it. Below 14
// segments it is Reno.
//
// The kernel's delayed-ACK ratio estimate (packets per ACK, EWMA 1/16)
// scales the per-ACK count as Linux does; it starts at 2.
type BIC struct {
	Base
	cnt          uint32
	lastMaxCwnd  uint32
	lastCwnd     uint32
	lastTime     time.Time
	epochStart   time.Time
	epochStarted bool
	delayedAck   uint32 // packets per ACK << 4
}

func init() { register("bic", func() Algorithm { return &BIC{} }) }

const (
	bicBetaScale     = 1024
	bicB             = 4 // binary search to (max+min)/B
	bicMaxIncrement  = 16
	bicLowWindow     = 14
	bicBeta          = 819
	bicSmoothPart    = 20
	bicAckRatioShift = 4
)

func (a *BIC) Name() string { return "bic" }

func (a *BIC) reset() {
	*a = BIC{Base: a.Base, delayedAck: 2 << bicAckRatioShift}
}

func (a *BIC) Init(*Conn) { a.reset() }

// update is bictcp_update: the per-ACK count for this window.
func (a *BIC) update(c *Conn) {
	cwnd := c.Cwnd
	if a.lastCwnd == cwnd && c.Now.Sub(a.lastTime) <= cubicSameCwndPeriod {
		return
	}
	a.lastCwnd = cwnd
	a.lastTime = c.Now
	if !a.epochStarted {
		a.epochStarted = true
		a.epochStart = c.Now
	}
	if cwnd <= bicLowWindow {
		a.cnt = cwnd
		return
	}
	if cwnd < a.lastMaxCwnd {
		dist := (a.lastMaxCwnd - cwnd) / bicB
		switch {
		case dist > bicMaxIncrement:
			a.cnt = cwnd / bicMaxIncrement // linear increase
		case dist <= 1:
			a.cnt = cwnd * bicSmoothPart / bicB // binary search, near Wmax
		default:
			a.cnt = cwnd / dist // binary search
		}
	} else {
		switch {
		case cwnd < a.lastMaxCwnd+bicB:
			a.cnt = cwnd * bicSmoothPart / bicB // slow start of max probing
		case cwnd < a.lastMaxCwnd+bicMaxIncrement*(bicB-1):
			a.cnt = cwnd * (bicB - 1) / (cwnd - a.lastMaxCwnd)
		default:
			a.cnt = cwnd / bicMaxIncrement // linear increase
		}
	}
	// In slow start or at very low utilisation: at least 5 % per RTT.
	if a.lastMaxCwnd == 0 && a.cnt > 20 {
		a.cnt = 20
	}
	a.cnt = (a.cnt << bicAckRatioShift) / a.delayedAck
	if a.cnt == 0 {
		a.cnt = 1
	}
}

// CongAvoid is bictcp_cong_avoid.
func (a *BIC) CongAvoid(c *Conn, acked uint32) {
	if c.InSlowStart() {
		if acked = c.SlowStart(acked); acked == 0 {
			return
		}
	}
	a.update(c)
	c.CongAvoidAI(a.cnt, acked)
}

// SSThresh is bictcp_recalc_ssthresh.
func (a *BIC) SSThresh(c *Conn) uint32 {
	a.Remember(c)
	a.epochStarted = false
	if c.Cwnd < a.lastMaxCwnd {
		a.lastMaxCwnd = c.Cwnd * (bicBetaScale + bicBeta) / (2 * bicBetaScale)
	} else {
		a.lastMaxCwnd = c.Cwnd
	}
	if c.Cwnd <= bicLowWindow {
		return max(c.Cwnd>>1, 2)
	}
	return max(c.Cwnd*bicBeta/bicBetaScale, 2)
}

// SetPhase resets on an RTO (bictcp_state).
func (a *BIC) SetPhase(_ *Conn, p Phase) {
	if p == Loss {
		a.reset()
	}
}

// PktsAcked tracks the packets-per-ACK ratio while Open (bictcp_acked).
func (a *BIC) PktsAcked(c *Conn, s AckSample) {
	if c.Phase == Open {
		a.delayedAck += s.Acked - (a.delayedAck >> bicAckRatioShift)
	}
}
