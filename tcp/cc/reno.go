package cc

// Reno is RFC 5681's AIMD, Linux's tcp_reno_ssthresh and
// tcp_reno_cong_avoid: slow start below ssthresh, one segment per window
// above it, halve on loss. "newreno" is the same window rule: RFC 6582
// changes recovery, which the sender owns (tcp.Config.Recovery), not the
// window arithmetic — the same split ns-3 makes between TcpNewReno and
// its recovery classes.
type Reno struct {
	Base
	name string
}

func init() {
	register("reno", func() Algorithm { return &Reno{name: "reno"} })
	register("newreno", func() Algorithm { return &Reno{name: "newreno"} })
}

func (r *Reno) Name() string { return r.name }

// SSThresh halves the window, never below two segments.
func (r *Reno) SSThresh(c *Conn) uint32 {
	r.Remember(c)
	return max(c.Cwnd>>1, 2)
}

// CongAvoid is tcp_reno_cong_avoid.
func (r *Reno) CongAvoid(c *Conn, acked uint32) {
	if c.InSlowStart() {
		acked = c.SlowStart(acked)
		if acked == 0 {
			return
		}
	}
	c.CongAvoidAI(c.Cwnd, acked)
}
