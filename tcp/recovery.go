package tcp

import "github.com/pseudocong/pseudocong/tcp/cc"

// Recovery chooses the fast-recovery rule of a sender without SACK. With
// SACK negotiated it is ignored: losses are marked by RFC 6675 and the
// window follows PRR whatever it says.
//
// Contract: the zero value (RecoveryNewReno) is the sender every existing
// result was made with; another value changes only what happens between
// the third duplicate ACK and the end of the episode, never the window
// rule of the algorithm (cc.Algorithm) outside it.
type Recovery uint8

const (
	// RecoveryNewReno is RFC 6582 with PRR (RFC 6937): a partial ACK
	// retransmits the next hole and recovery lasts until everything sent
	// before it is acknowledged, so one window of losses costs one
	// halving.
	RecoveryNewReno Recovery = iota
	// RecoveryReno is classic Reno fast recovery (RFC 5681 §3.2) as
	// ns-2's Agent/TCP/Reno with its defaults (bugFix_ and
	// exitFastRetrans_ true): on the third duplicate ACK retransmit the
	// first unacknowledged segment and set cwnd to ssthresh inflated by
	// the duplicate ACKs; the first ACK that advances (partial or full)
	// deflates to ssthresh and ends recovery. A further loss in the same
	// window then draws duplicate ACKs that, by the bugfix guard, may not
	// start a second fast retransmit until an ACK passes the highest
	// segment sent when the last one started (ns-2's recover_): the hole
	// waits for the retransmission timer, which halves ssthresh again.
	// That is the "halved several times after multiple losses" of paper
	// 002, which NewReno does not do.
	RecoveryReno
	// RecoveryNewRenoInflation is RFC 6582 NewReno with the window
	// inflation and partial deflation of RFC 6582 §3.2 instead of PRR:
	// ns-2's Agent/TCP/Newreno with its defaults
	// (partial_window_deflation_ 1, exit_recovery_fix_ 0). Holes are
	// repaired as RecoveryNewReno does, one per partial ACK; only the
	// window during recovery differs.
	RecoveryNewRenoInflation
)

func (r Recovery) String() string {
	switch r {
	case RecoveryNewReno:
		return "newreno"
	case RecoveryReno:
		return "reno"
	case RecoveryNewRenoInflation:
		return "newreno-inflation"
	}
	return "recovery(?)"
}

// reno reports whether this sender runs RecoveryReno (which needs no SACK).
func (c *Conn) reno() bool { return c.cfg.Recovery == RecoveryReno && !c.sackOK }

// inflating reports whether the window in recovery is RFC 5681's
// inflated one (RecoveryReno, RecoveryNewRenoInflation) rather than PRR.
func (c *Conn) inflating() bool {
	return (c.cfg.Recovery == RecoveryReno || c.cfg.Recovery == RecoveryNewRenoInflation) && !c.sackOK
}

// renoGuarded is ns-2's bugfix check (RenoTcpAgent::dupack_action's
// recovered = highest_ack_ > recover_): outside recovery, while the
// cumulative ACK has not passed what was sent when the last fast
// retransmit or timeout began, duplicate ACKs are about losses in that
// same window and must not start another fast retransmit. Without the
// guard Reno would halve once per lost segment of the window, each
// halving on the duplicate ACKs of the previous hole's retransmission.
func (c *Conn) renoGuarded() bool {
	return c.reno() && c.renoRecoverSet && (c.phase == cc.Open || c.phase == cc.Disorder) &&
		!seqGT(c.sndUna, c.renoRecover)
}

// renoDup filters a duplicate ACK under the guard: the first DupThresh-1
// still count (limited transmit, RFC 3042, which ns-2's singledup_
// default also sends), the rest do not, so the loss is never marked and
// the window stays closed: ns-2 with exitFastRetrans_ inflates only
// while its last window action was a fast retransmit.
func (c *Conn) renoDup(isDup bool) bool {
	if isDup && c.renoGuarded() && c.sackedOut+1 >= uint32(c.cfg.DupThresh) {
		return false
	}
	return isDup
}

// renoEnter starts an inflating recovery: remember recover_ (Reno's
// guard), and fix the window at ssthresh. The inflation of RFC 5681 (ssthresh + 3, then one more per
// duplicate ACK) needs no arithmetic here: every duplicate ACK already
// counts as a segment that left the network (sackedOut), so inFlight is
// FlightSize minus the duplicate ACKs and a window of ssthresh against it
// is the inflated window against FlightSize. Full deflation is
// endEpisode's cwnd = ssthresh with the count reset; NewReno's partial
// deflation (take back what a partial ACK acknowledged, add one) is the
// reno-sack bookkeeping in onAck, which removes all but one of the newly
// acknowledged segments from the duplicate count.
func (c *Conn) renoEnter() {
	if c.reno() {
		c.renoRecover, c.renoRecoverSet = c.sndNxt, true
	}
	c.cc.Cwnd = max(c.cc.Ssthresh, 1)
	c.renoRtx = true
}

// renoFastRetransmit sends the fast retransmission whatever the window
// (RFC 5681 §3.2 step 2; ns-2's output(last_ack_ + 1)), and for NewReno
// the retransmission a partial ACK asks for (RFC 6582 §3.2 step 5, ns-2's
// partialnewack_helper): on entry the in-flight estimate is still above
// the halved window, and without this the retransmission would wait for
// half a window of duplicate ACKs.
func (c *Conn) renoFastRetransmit() {
	if !c.renoRtx {
		return
	}
	c.renoRtx = false
	if c.phase != cc.Recovery || c.state != Established {
		return
	}
	if j := c.nextLost(); j >= 0 {
		c.retransmit(j, c.now())
	}
}
