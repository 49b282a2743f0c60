package cc

// HighSpeed is RFC 3649 HighSpeed TCP as Linux's tcp_highspeed.c: above
// ssthresh the window grows a(w) segments per RTT and a loss cuts it by
// b(w), both read from RFC 3649 Appendix B's table (b scaled by 256).
// Between table points the kernel uses the next point up, a step
// function: a(w) = i+1 for table[i−1].cwnd < w ≤ table[i].cwnd.
//
// As in Linux the increase is per ACK (cnt += a(w), one segment per
// cwnd of it), not per acked segment, so stretch ACKs slow it.
type HighSpeed struct {
	Base
	ai int // index into hstcpAIMD
}

func init() { register("highspeed", func() Algorithm { return &HighSpeed{} }) }

// hstcpAIMD is RFC 3649 Appendix B: the window up to which a(w) = i+1,
// and b(w) × 256.
var hstcpAIMD = [...]struct{ cwnd, md uint32 }{
	{38, 128}, {118, 112}, {221, 104}, {347, 98}, {495, 93}, {663, 89},
	{851, 86}, {1058, 83}, {1284, 81}, {1529, 78}, {1793, 76}, {2076, 74},
	{2378, 72}, {2699, 71}, {3039, 69}, {3399, 68}, {3778, 66}, {4177, 65},
	{4596, 64}, {5036, 62}, {5497, 61}, {5979, 60}, {6483, 59}, {7009, 58},
	{7558, 57}, {8130, 56}, {8726, 55}, {9346, 54}, {9991, 53}, {10661, 52},
	{11358, 52}, {12082, 51}, {12834, 50}, {13614, 49}, {14424, 48}, {15265, 48},
	{16137, 47}, {17042, 46}, {17981, 45}, {18955, 45}, {19965, 44}, {21013, 43},
	{22101, 43}, {23230, 42}, {24402, 41}, {25618, 41}, {26881, 40}, {28193, 39},
	{29557, 39}, {30975, 38}, {32450, 38}, {33986, 37}, {35586, 36}, {37253, 36},
	{38992, 35}, {40808, 35}, {42707, 34}, {44694, 33}, {46776, 33}, {48961, 32},
	{51258, 32}, {53677, 31}, {56230, 30}, {58932, 30}, {61799, 29}, {64851, 28},
	{68113, 28}, {71617, 27}, {75401, 26}, {79517, 26}, {84035, 25}, {89053, 24},
}

func (a *HighSpeed) Name() string { return "highspeed" }

// Init clamps the window so that the MD arithmetic cannot overflow.
func (a *HighSpeed) Init(c *Conn) {
	a.ai = 0
	c.CwndClamp = min(c.CwndClamp, 0xffffffff/128)
}

// CongAvoid is hstcp_cong_avoid.
func (a *HighSpeed) CongAvoid(c *Conn, acked uint32) {
	if c.InSlowStart() {
		c.SlowStart(acked)
		return
	}
	a.index(c.Cwnd)
	if c.Cwnd < c.CwndClamp {
		// cwnd += a(w) / cwnd
		c.CwndCnt += uint32(a.ai) + 1
		if c.CwndCnt >= c.Cwnd {
			c.CwndCnt -= c.Cwnd
			c.Cwnd++
		}
	}
}

// index keeps table[ai−1].cwnd < cwnd ≤ table[ai].cwnd.
func (a *HighSpeed) index(cwnd uint32) {
	if cwnd > hstcpAIMD[a.ai].cwnd {
		for cwnd > hstcpAIMD[a.ai].cwnd && a.ai < len(hstcpAIMD)-1 {
			a.ai++
		}
	} else {
		for a.ai > 0 && cwnd <= hstcpAIMD[a.ai-1].cwnd {
			a.ai--
		}
	}
}

// SSThresh cuts by b(w) (hstcp_ssthresh).
func (a *HighSpeed) SSThresh(c *Conn) uint32 {
	a.Remember(c)
	return max(c.Cwnd-((c.Cwnd*hstcpAIMD[a.ai].md)>>8), 2)
}
