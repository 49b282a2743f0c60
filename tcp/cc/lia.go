package cc

import "time"

// LIA is the Linked Increases Algorithm of RFC 6356, MPTCP's coupled
// congestion control. The subflows of one MPTCP connection share a
// LIAGroup; each subflow's instance (LIAGroup.New) reads the others'
// windows and RTTs from it. In congestion avoidance a subflow grows by
// min(α/cwnd_total, 1/cwnd_i) segments per segment acked, with
//
//	α = cwnd_total · max_i(cwnd_i/rtt_i²) / (Σ_i cwnd_i/rtt_i)²
//
// (RFC 6356 §3, in segments); slow start and the halving on loss are
// Reno's, per subflow. The increase is applied through CongAvoidAI with
// w = max(cwnd_i, cwnd_total/α), the additive-increase divisor the min
// amounts to (Linux's out-of-tree mptcp_coupled.c scales the same way).
// A group of one is Reno: α = 1.
type LIAGroup struct {
	members []*lia
}

// NewLIAGroup returns an empty coupling group.
func NewLIAGroup() *LIAGroup { return &LIAGroup{} }

// New returns a fresh LIA instance coupled with the group's others.
func (g *LIAGroup) New() Algorithm {
	a := &lia{g: g}
	g.members = append(g.members, a)
	return a
}

// Alpha is RFC 6356's α over the members' last seen windows and RTTs
// (members without an RTT sample yet are left out; 1 if none has one).
func (g *LIAGroup) Alpha() float64 {
	var total, best, sum float64
	for _, m := range g.members {
		total += float64(m.cwnd)
	}
	for _, m := range g.members {
		if m.srtt <= 0 {
			continue
		}
		r := m.srtt.Seconds()
		best = max(best, float64(m.cwnd)/(r*r))
		sum += float64(m.cwnd) / r
	}
	if sum == 0 {
		return 1
	}
	return total * best / (sum * sum)
}

// TotalCwnd is the sum of the members' windows.
func (g *LIAGroup) TotalCwnd() uint32 {
	var t uint32
	for _, m := range g.members {
		t += m.cwnd
	}
	return t
}

type lia struct {
	Base
	g    *LIAGroup
	cwnd uint32
	srtt time.Duration
}

func init() {
	// A lone "lia" (not made through a group) is a group of one: Reno.
	register("lia", func() Algorithm { return NewLIAGroup().New() })
}

func (a *lia) Name() string { return "lia" }

func (a *lia) note(c *Conn) {
	a.cwnd = c.Cwnd
	if c.SRTT > 0 {
		a.srtt = c.SRTT
	}
}

func (a *lia) Init(c *Conn) { a.note(c) }

func (a *lia) PktsAcked(c *Conn, _ AckSample) { a.note(c) }

func (a *lia) SetPhase(c *Conn, _ Phase) { a.note(c) }

func (a *lia) SSThresh(c *Conn) uint32 {
	a.Remember(c)
	s := max(c.Cwnd>>1, 2)
	a.cwnd = s // the group sees the reduction at once
	return s
}

func (a *lia) CongAvoid(c *Conn, acked uint32) {
	a.note(c)
	if c.InSlowStart() {
		acked = c.SlowStart(acked)
		a.cwnd = c.Cwnd
		if acked == 0 {
			return
		}
	}
	alpha := a.g.Alpha()
	w := c.Cwnd
	if alpha > 0 {
		if d := uint32(float64(a.g.TotalCwnd())/alpha + 0.5); d > w {
			w = d
		}
	}
	c.CongAvoidAI(w, acked)
	a.cwnd = c.Cwnd
}
