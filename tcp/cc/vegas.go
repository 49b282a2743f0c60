package cc

import "time"

// Vegas is TCP Vegas as Linux's tcp_vegas.c: once per RTT (when the ACK
// passes the SndNxt recorded at the start of the round) it compares the
// window with the window the base RTT would need for the same rate:
// diff = cwnd·(rtt − baseRTT)/baseRTT segments queued in the network,
// with rtt the round's minimum RTT sample. Above ssthresh it adds a
// segment when diff < alpha (2), removes one when diff > beta (4), else
// holds; in slow start it leaves slow start, setting the window to the
// rate-matched one, when diff > gamma (1). Fewer than 3 RTT samples in a
// round (delayed ACKs only) fall back to Reno. RTTs in µs, plus 1, as
// the kernel.
type Vegas struct {
	Base
	vegasState
	// Params select a variant; the zero value is Linux's. Set them on an
	// instance before Init (tcp.Config.Algorithm).
	Params VegasParams
}

// VegasParams choose between Linux's tcp_vegas.c and ns-3 3.37's
// TcpVegas where the two differ by design.
type VegasParams struct {
	// NS3 computes as ns-3 3.37's tcp-vegas.cc, for comparisons with ns-3
	// only: diff = cwnd − ⌊cwnd·baseRTT/rtt⌋ (the queue over the round's
	// RTT, not over baseRTT), and every reduction of the threshold,
	// including a loss's (TcpVegas::GetSsThresh), is to
	// max(min(ssthresh, cwnd−1), 2) rather than Reno's half. ns-3 also
	// grows per ACK in slow start (TcpNewReno::SlowStart): that is the
	// sender's tcp.Config.CountACKs, set alongside.
	NS3 bool
}

// vegasState is the part YeAH shares (Linux's struct vegas).
type vegasState struct {
	doingVegasNow bool
	begSndNxt     uint32 // right edge at the start of this round
	begSndUna     uint32 // left edge at the start of this round (YeAH)
	begSndCwnd    uint32 // cwnd at the start of this round (YeAH)
	cntRTT        uint32 // RTT samples this round
	minRTT        uint32 // smallest RTT this round, µs
	baseRTT       uint32 // smallest RTT ever, µs
}

const (
	vegasAlpha = 2
	vegasBeta  = 4
	vegasGamma = 1
	vegasNoRTT = 0x7fffffff
)

func init() { register("vegas", func() Algorithm { return &Vegas{} }) }

func (a *Vegas) Name() string { return "vegas" }

func (v *vegasState) enable(c *Conn) {
	v.doingVegasNow = true
	v.begSndNxt = c.SndNxt
	v.cntRTT = 0
	v.minRTT = vegasNoRTT
}

func (v *vegasState) init(c *Conn) {
	v.baseRTT = vegasNoRTT
	v.enable(c)
}

// pktsAcked min-filters RTT samples per round and forever (baseRTT).
func (v *vegasState) pktsAcked(s AckSample) {
	if s.RTT <= 0 {
		return
	}
	vrtt := uint32(min(s.RTT/time.Microsecond, vegasNoRTT-1)) + 1
	v.baseRTT = min(v.baseRTT, vrtt)
	v.minRTT = min(v.minRTT, vrtt)
	v.cntRTT++
}

// setPhase re-arms Vegas when the sender returns to Open.
func (v *vegasState) setPhase(c *Conn, p Phase) {
	if p == Open {
		v.enable(c)
	} else {
		v.doingVegasNow = false
	}
}

// event restarts Vegas after idle: wait for fresh samples.
func (v *vegasState) event(c *Conn, e Event) {
	if e == EventCwndRestart || e == EventTxStart {
		v.init(c)
	}
}

func (a *Vegas) Init(c *Conn)                   { a.init(c) }
func (a *Vegas) PktsAcked(_ *Conn, s AckSample) { a.pktsAcked(s) }
func (a *Vegas) SetPhase(c *Conn, p Phase)      { a.setPhase(c, p) }
func (a *Vegas) Event(c *Conn, e Event)         { a.event(c, e) }

// SSThresh is Reno's.
func (a *Vegas) SSThresh(c *Conn) uint32 {
	a.Remember(c)
	if a.Params.NS3 {
		return ns3VegasSsthresh(c)
	}
	return max(c.Cwnd>>1, 2)
}

// ns3VegasSsthresh is TcpVegas::GetSsThresh: one segment below cwnd, or
// the current threshold if lower.
func ns3VegasSsthresh(c *Conn) uint32 {
	return max(min(c.Ssthresh, c.Cwnd-1), 2)
}

func renoCongAvoid(c *Conn, acked uint32) {
	if c.InSlowStart() {
		if acked = c.SlowStart(acked); acked == 0 {
			return
		}
	}
	c.CongAvoidAI(c.Cwnd, acked)
}

// CongAvoid is tcp_vegas_cong_avoid; the ACK number is Conn.SndUna.
func (a *Vegas) CongAvoid(c *Conn, acked uint32) {
	if !a.doingVegasNow {
		renoCongAvoid(c, acked)
		return
	}
	if !SeqAfter(c.SndUna, a.begSndNxt) {
		if c.InSlowStart() {
			c.SlowStart(acked)
		}
		return
	}
	// Once per RTT.
	a.begSndNxt = c.SndNxt
	if a.cntRTT <= 2 {
		renoCongAvoid(c, acked) // too few samples: likely delayed ACKs
	} else {
		rtt := uint64(a.minRTT)
		target := uint64(c.Cwnd) * uint64(a.baseRTT) / rtt
		diff := uint64(c.Cwnd) * (rtt - uint64(a.baseRTT)) / uint64(a.baseRTT)
		if a.Params.NS3 {
			diff = uint64(c.Cwnd) - target
		}
		switch {
		case diff > vegasGamma && c.InSlowStart():
			// Going too fast: match the actual rate and stop slow start.
			c.Cwnd = min(c.Cwnd, uint32(target)+1)
			c.Ssthresh = a.lowerSsthresh(c)
		case c.InSlowStart():
			c.SlowStart(acked)
		case diff > vegasBeta:
			c.Cwnd--
			c.Ssthresh = a.lowerSsthresh(c)
		case diff < vegasAlpha:
			c.Cwnd++
		}
		c.Cwnd = max(min(c.Cwnd, c.CwndClamp), 2)
		c.Ssthresh = c.CurrentSsthresh()
	}
	a.cntRTT = 0
	a.minRTT = vegasNoRTT
}

// BaseRTT reports the propagation-delay estimate (smallest RTT + 1 µs).
func (a *Vegas) BaseRTT() time.Duration { return time.Duration(a.baseRTT) * time.Microsecond }

// lowerSsthresh is the threshold after Vegas slows down: at most cwnd
// (Linux), or ns-3's GetSsThresh.
func (a *Vegas) lowerSsthresh(c *Conn) uint32 {
	if a.Params.NS3 {
		return ns3VegasSsthresh(c)
	}
	return min(c.Ssthresh, c.Cwnd)
}
