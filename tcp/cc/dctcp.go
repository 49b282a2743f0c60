package cc

// DCTCP is Linux's tcp_dctcp.c: Reno's growth, but on ECE the window is
// cut by alpha/2, where alpha is an EWMA (g = 1/16) of the fraction of
// segments acknowledged with ECE per window of data; a loss still halves
// it. Alpha starts at 1 (dctcp_alpha_on_init = 1024/1024), as Linux.
//
// How the endpoint must feed it:
//   - Init after the handshake, with Conn.ECN saying whether ECN was
//     negotiated; without it DCTCP is Reno (Linux's dctcp_reno fallback).
//   - Sender: PktsAcked on every ACK with Acked (segments newly acked or
//     SACKed) and ECE; SndUna/SndNxt current (a window ends when SndUna
//     reaches the SndNxt recorded at its start). Alpha is updated inside
//     PktsAcked, after this ACK's segments are counted (Linux ≥ 6.10 order,
//     in_ack_event after clean_rtx_queue). On ECE the sender enters CWR at
//     most once per window as RFC 3168 says and takes SSThresh.
//   - Receiver: DCTCP implements ECNOwner. For every data segment the
//     receiver fills Conn.Ack.RcvNxt (after the segment) and .Pending,
//     raises EventECNIsCE or EventECNNoCE, and follows Conn.Ack (see
//     AckControl): when the CE state flips, a pending delayed ACK goes out
//     first with the old state, then the segment is ACKed at once; every
//     ACK's ECE echoes the last segment's CE (no RFC 3168 latch until CWR).
//
// Deviation from Linux: no PLB (protective load balancing; it rehashes
// the flow label, which our network does not route on).
type DCTCP struct {
	Base
	reno bool // ECN not negotiated: plain Reno

	alpha          uint32 // ×1024
	delivered      uint64
	deliveredCE    uint64
	oldDelivered   uint64
	oldDeliveredCE uint64
	nextSeq        uint32
	lossCwnd       uint32
	phase          Phase

	// Receiver side (tcp_dctcp.h).
	priorRcvNxt uint32
	ceState     bool
}

const (
	dctcpMaxAlpha = 1024
	dctcpShiftG   = 4 // g = 1/16
)

func init() { register("dctcp", func() Algorithm { return &DCTCP{} }) }

func (a *DCTCP) Name() string { return "dctcp" }

// NeedsECN: DCTCP needs ECN and owns the receiver's echo.
func (a *DCTCP) NeedsECN() bool { return true }

// Alpha reports alpha as a fraction.
func (a *DCTCP) Alpha() float64 { return float64(a.alpha) / dctcpMaxAlpha }

func (a *DCTCP) Init(c *Conn) {
	*a = DCTCP{}
	if !c.ECN {
		a.reno = true
		return
	}
	a.priorRcvNxt = c.Ack.RcvNxt
	a.alpha = dctcpMaxAlpha
	a.resetWindow(c)
}

func (a *DCTCP) resetWindow(c *Conn) {
	a.nextSeq = c.SndNxt
	a.oldDelivered = a.delivered
	a.oldDeliveredCE = a.deliveredCE
}

// SSThresh is dctcp_ssthresh: cwnd × (1 − alpha/2) on ECE; on a loss
// (Recovery or RTO) Linux overwrites it with half the window, which we
// return directly so the result does not depend on whether the sender
// reports the phase before or after asking.
func (a *DCTCP) SSThresh(c *Conn) uint32 {
	a.Remember(c)
	if a.reno || a.phase >= Recovery || c.Phase >= Recovery {
		a.lossCwnd = c.Cwnd
		return max(c.Cwnd>>1, 2)
	}
	a.lossCwnd = c.Cwnd
	return max(c.Cwnd-((c.Cwnd*a.alpha)>>11), 2)
}

// CongAvoid is Reno's.
func (a *DCTCP) CongAvoid(c *Conn, acked uint32) {
	if c.InSlowStart() {
		if acked = c.SlowStart(acked); acked == 0 {
			return
		}
	}
	c.CongAvoidAI(c.Cwnd, acked)
}

// PktsAcked counts delivered and ECE-delivered segments and, once a
// window of data is acknowledged, folds its CE fraction into alpha
// (dctcp_update_alpha).
func (a *DCTCP) PktsAcked(c *Conn, s AckSample) {
	if a.reno {
		return
	}
	a.delivered += uint64(s.Acked)
	if s.ECE {
		a.deliveredCE += uint64(s.Acked)
	}
	if SeqBefore(c.SndUna, a.nextSeq) {
		return
	}
	delivered := a.delivered - a.oldDelivered
	ce := a.deliveredCE - a.oldDeliveredCE
	alpha := a.alpha
	// alpha = (1 − g)·alpha + g·F
	if dec := alpha >> dctcpShiftG; dec != 0 {
		alpha -= dec
	} else {
		alpha = 0 // min_not_zero(alpha, alpha >> g)
	}
	if ce > 0 {
		ce <<= 10 - dctcpShiftG
		ce /= max(1, delivered)
		alpha = uint32(min(uint64(alpha)+ce, dctcpMaxAlpha))
	}
	a.alpha = alpha
	a.resetWindow(c)
}

// SetPhase halves the threshold on entering Recovery (dctcp_state).
func (a *DCTCP) SetPhase(c *Conn, p Phase) {
	if !a.reno && p == Recovery && a.phase != Recovery {
		a.lossCwnd = c.Cwnd
		c.Ssthresh = max(c.Cwnd>>1, 2)
	}
	a.phase = p
}

// Event: an RTO halves the threshold; ECN events run the receiver's CE
// state machine (dctcp_ece_ack_update).
func (a *DCTCP) Event(c *Conn, e Event) {
	if a.reno {
		return
	}
	switch e {
	case EventLoss:
		a.lossCwnd = c.Cwnd
		c.Ssthresh = max(c.Cwnd>>1, 2)
	case EventECNIsCE, EventECNNoCE:
		ce := e == EventECNIsCE
		ack := &c.Ack
		ack.FlushAck, ack.Now = false, false
		if a.ceState != ce {
			// The CE state changed: ACK at once to reflect it, after
			// sending any delayed ACK with the previous state.
			if ack.Pending {
				ack.FlushAck = true
				ack.FlushSeq = a.priorRcvNxt
				ack.FlushECE = a.ceState
			}
			ack.Now = true
		}
		a.priorRcvNxt = ack.RcvNxt
		a.ceState = ce
		ack.ECE = ce
	}
}

// Undo restores the window before the last reduction (dctcp_cwnd_undo).
func (a *DCTCP) Undo(c *Conn) uint32 {
	if a.reno {
		return a.Base.Undo(c)
	}
	return max(c.Cwnd, a.lossCwnd)
}
