package highbdp

import (
	"time"

	"github.com/pseudocong/pseudocong/tcp"
	"github.com/pseudocong/pseudocong/tcp/cc"
)

// ns2Reno is ns-2's Agent/TCP/Newreno window rule, which paper 002's
// numbers come from: per ACK (not per segment acknowledged) slow start
// adds one segment (c = 1 MSS) and congestion avoidance adds 1/cwnd (a =
// 1 MSS per window of ACKs), loss halves (b = 0.5). Counting ACKs rather
// than acknowledged segments is what makes delayed ACKs halve the growth
// (the paper's 24.35 s predicted vs 48.54 s measured); Linux's Reno
// (cc.Reno) counts segments and does not slow down.
type ns2Reno struct {
	cc.Reno
	name string // NS2Reno, NS2RenoReno or NS2NewRenoInflation (the same window rule)
}

func (r *ns2Reno) Name() string { return r.name }

// CongAvoid treats every call as one ACK.
func (r *ns2Reno) CongAvoid(c *cc.Conn, _ uint32) {
	if c.InSlowStart() {
		c.SlowStart(1)
		return
	}
	c.CongAvoidAI(c.Cwnd, 1)
}

// withSsthresh wraps an algorithm so that a new connection starts with a
// finite slow-start threshold (ns-2's default 65 535 B, the paper's) and
// records when slow start ends (the window reaches ssthresh or the first
// reduction, whichever comes first).
type withSsthresh struct {
	cc.Algorithm
	ssthresh uint32 // segments; 0: leave the algorithm's
	ssEnd    time.Time
	onSSEnd  func(t time.Time)
}

func (w *withSsthresh) Init(c *cc.Conn) {
	w.Algorithm.Init(c)
	if w.ssthresh > 0 {
		c.Ssthresh = w.ssthresh
	}
}

func (w *withSsthresh) endSS(c *cc.Conn) {
	if w.ssEnd.IsZero() {
		w.ssEnd = c.Now
		if w.onSSEnd != nil {
			w.onSSEnd(c.Now)
		}
	}
}

func (w *withSsthresh) CongAvoid(c *cc.Conn, acked uint32) {
	w.Algorithm.CongAvoid(c, acked)
	if c.Cwnd >= c.Ssthresh {
		w.endSS(c)
	}
}

func (w *withSsthresh) SSThresh(c *cc.Conn) uint32 {
	w.endSS(c)
	return w.Algorithm.SSThresh(c)
}

// ctlSsthresh is withSsthresh for a rate-based algorithm (BBR): the
// sender must still see its Controller.
type ctlSsthresh struct {
	*withSsthresh
	ctl cc.Controller
}

func (w ctlSsthresh) Control(c *cc.Conn, rs *cc.RateSample) { w.ctl.Control(c, rs) }

// newAlgorithm builds the named algorithm ("ns2-newreno" or any cc name)
// with the initial threshold (segments, 0: the algorithm's own).
func newAlgorithm(name string, ssthresh uint32, onSSEnd func(time.Time)) (cc.Algorithm, error) {
	var a cc.Algorithm
	if name == NS2Reno || name == NS2RenoReno || name == NS2NewRenoInflation {
		a = &ns2Reno{name: name}
	} else {
		var err error
		if a, err = cc.New(name); err != nil {
			return nil, err
		}
	}
	w := &withSsthresh{Algorithm: a, ssthresh: ssthresh, onSSEnd: onSSEnd}
	if ctl, ok := a.(cc.Controller); ok {
		return ctlSsthresh{w, ctl}, nil
	}
	return w, nil
}

// NS2Reno names ns-2's NewReno window rule (per-ACK growth).
const NS2Reno = "ns2-newreno"

// NS2RenoReno names ns-2's Agent/TCP/Reno: the same per-ACK window rule
// as NS2Reno with classic Reno fast recovery (tcp.RecoveryReno: window
// inflation, recovery ends on the first new ACK, the bugFix_ guard)
// instead of NewReno's, for docs/high-bdp.md's question whether ns-2's
// recovery explains paper 002's remaining points.
const NS2RenoReno = "ns2-reno"

// NS2NewRenoInflation names ns-2's Agent/TCP/Newreno with its window
// during recovery too: NS2Reno's rule and recovery, but RFC 6582's window
// inflation and partial deflation (tcp.RecoveryNewRenoInflation) where
// NS2Reno uses PRR.
const NS2NewRenoInflation = "ns2-newreno-inflate"

// recoveryFor is the sender's fast-recovery rule for an algorithm name.
func recoveryFor(name string) tcp.Recovery {
	switch name {
	case NS2RenoReno:
		return tcp.RecoveryReno
	case NS2NewRenoInflation:
		return tcp.RecoveryNewRenoInflation
	}
	return tcp.RecoveryNewReno
}
