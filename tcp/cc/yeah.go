package cc

// YeAH is YeAH-TCP as Linux's tcp_yeah.c: a Vegas-style queue estimate
// per RTT, Q = cwnd·(rtt − baseRTT)/rtt, picks the mode. While Q ≤ 80
// segments and the RTT is within baseRTT/8 of the base ("fast" mode) the
// window grows as Scalable TCP, 1 % per RTT (one segment per
// min(cwnd, 100) acked); otherwise ("slow" mode) as Reno, and when Q > 80
// it decongests at once by Q (at most half the window, never below the
// Reno-competition estimate reno_count), setting ssthresh there. On loss
// in fast mode it removes the queue, between cwnd/8 and cwnd/2; after 16
// slow rounds in a row (competing with Reno) it halves.
type YeAH struct {
	Base
	vegasState
	lastQ        uint32
	doingRenoNow uint32
	renoCount    uint32
	fastCount    uint32
}

const (
	yeahAlpha   = 80 // segments queued at the bottleneck
	yeahGamma   = 1  // fraction of the queue removed per RTT
	yeahDelta   = 3  // log2 of the least fraction of cwnd removed on loss
	yeahEpsilon = 1  // log2 of the most fraction removed on decongestion
	yeahPhy     = 8  // largest RTT excess over base, as base/PHY
	yeahRho     = 16 // slow rounds before treating competition as Reno
	yeahZeta    = 50 // fast rounds before resetting reno_count
	scalableAI  = 100
)

func init() { register("yeah", func() Algorithm { return &YeAH{} }) }

func (a *YeAH) Name() string { return "yeah" }

// Fast reports whether YeAH is in its fast (Scalable) mode.
func (a *YeAH) Fast() bool { return a.doingRenoNow == 0 }

func (a *YeAH) Init(c *Conn) {
	a.init(c)
	a.doingRenoNow = 0
	a.lastQ = 0
	a.renoCount = 2
	a.fastCount = 0
	c.CwndClamp = min(c.CwndClamp, 0xffffffff/128)
}

func (a *YeAH) PktsAcked(_ *Conn, s AckSample) { a.pktsAcked(s) }
func (a *YeAH) SetPhase(c *Conn, p Phase)      { a.setPhase(c, p) }
func (a *YeAH) Event(c *Conn, e Event)         { a.event(c, e) }

// CongAvoid is tcp_yeah_cong_avoid; the ACK number is Conn.SndUna.
func (a *YeAH) CongAvoid(c *Conn, acked uint32) {
	if c.InSlowStart() {
		acked = c.SlowStart(acked)
	}
	if acked > 0 {
		if a.doingRenoNow == 0 {
			c.CongAvoidAI(min(c.Cwnd, scalableAI), acked) // Scalable
		} else {
			c.CongAvoidAI(c.Cwnd, acked) // Reno
		}
	}
	if !SeqAfter(c.SndUna, a.begSndNxt) {
		return
	}
	// Once per RTT, with at least 3 samples (not only delayed ACKs).
	if a.cntRTT > 2 {
		rtt := uint64(a.minRTT)
		base := uint64(a.baseRTT)
		queue := uint32(uint64(c.Cwnd) * (rtt - base) / rtt)
		if queue > yeahAlpha || rtt-base > base/yeahPhy {
			if queue > yeahAlpha && c.Cwnd > a.renoCount {
				reduction := min(queue/yeahGamma, c.Cwnd>>yeahEpsilon)
				c.Cwnd = max(c.Cwnd-reduction, a.renoCount)
				c.Ssthresh = c.Cwnd
			}
			if a.renoCount <= 2 {
				a.renoCount = max(c.Cwnd>>1, 2)
			} else {
				a.renoCount++
			}
			a.doingRenoNow = min(a.doingRenoNow+1, 0xffffff)
		} else {
			a.fastCount++
			if a.fastCount > yeahZeta {
				a.renoCount = 2
				a.fastCount = 0
			}
			a.doingRenoNow = 0
		}
		a.lastQ = queue
	}
	a.begSndUna = a.begSndNxt
	a.begSndNxt = c.SndNxt
	a.begSndCwnd = c.Cwnd
	a.cntRTT = 0
	a.minRTT = vegasNoRTT
}

// SSThresh is tcp_yeah_ssthresh.
func (a *YeAH) SSThresh(c *Conn) uint32 {
	a.Remember(c)
	var reduction uint32
	if a.doingRenoNow < yeahRho {
		reduction = min(a.lastQ, max(c.Cwnd>>1, 2))
		reduction = max(reduction, c.Cwnd>>yeahDelta)
	} else {
		reduction = max(c.Cwnd>>1, 2)
	}
	a.fastCount = 0
	a.renoCount = max(a.renoCount>>1, 2)
	return uint32(max(int64(c.Cwnd)-int64(reduction), 2))
}
