package cc

import (
	"math/bits"
	"time"
)

// Cubic is RFC 9438 CUBIC as Linux's tcp_cubic.c computes it: the window
// follows W(t) = C·(t−K)³ + Wmax with C = 0.4 (bic_scale 41/1024 × 10),
// β = 717/1024, fast convergence and the Reno-friendly estimate, in the
// kernel's fixed-point arithmetic (time in 1/1024 s, K by the kernel's
// table-and-Newton cube root), so traces line up with a Linux sender's.
//
// HyStart is Linux's: per round (until SndUna passes the SndNxt recorded
// at the round's start) it ends slow start, setting Ssthresh to Cwnd,
// when ACKs spaced at most 2 ms apart span more than half the minimum
// delay (ACK train), or when the round's minimum RTT over its first 8
// samples exceeds the minimum delay by clamp(delay/8, 4 ms, 16 ms)
// (delay increase); only from a window of 16 segments.
//
// Deviations from Linux, all of time resolution: the kernel keeps the
// epoch in jiffies and delays in microseconds; we keep time.Time and
// time.Duration, treat a jiffy as 1 ms (HZ=1000) for the "once per
// jiffy" rule, and convert to 1/1024 s from nanoseconds rather than via
// jiffies. HyStart's TSO/GRO cushion (hystart_ack_delay) assumes a
// 64 KB GSO size, and the unpaced socket's pacing rate Linux would
// compute (2·cwnd·mss/srtt in slow start).
type Cubic struct {
	Base
	// Params are Linux's module parameters; the zero value is Linux's
	// defaults. Set them on an instance before Init (tcp.Config.Algorithm).
	Params CubicParams

	cnt          uint32 // increase cwnd by 1 after cnt segments acked
	lastMaxCwnd  uint32 // Wmax
	lastCwnd     uint32
	lastTime     time.Time
	originPoint  uint32
	k            uint64        // time to the origin point, 1/1024 s
	delayMin     time.Duration // smallest RTT seen (outside recovery)
	epochStart   time.Time
	epochStarted bool
	ackCnt       uint32 // segments acked in this epoch, for the Reno estimate
	tcpCwnd      uint32 // Reno-friendly window estimate

	// HyStart.
	found      bool
	roundStart time.Time
	lastAck    time.Time
	endSeq     uint32
	currRTT    time.Duration
	sampleCnt  uint8
}

// CubicParams are tcp_cubic.c's module parameters that change behaviour,
// each as "off" so that the zero value is Linux's default. ns-3 3.37's
// TcpCubic has no Reno-friendly region: NoRenoFriendly reproduces it;
// NS3HyStart reproduces its HyStart.
type CubicParams struct {
	NoFastConvergence bool  // fast_convergence=0
	NoRenoFriendly    bool  // tcp_friendliness=0
	NoHyStart         bool  // hystart=0
	HyStartDetect     uint8 // hystart_detect: 1 ACK train, 2 delay; 0 = both (Linux's 3)
	// NS3HyStart runs HyStart with ns-3 3.37's thresholds (tcp-cubic.cc
	// HystartUpdate, HystartDelayThresh, PktsAcked), for comparisons with
	// ns-3 only: the ACK train must span the whole minimum delay (Linux:
	// half of it, plus the TSO/GRO cushion), the round's RTT must exceed
	// the minimum by clamp(delay_min, 4 ms, 1 s) (Linux: delay_min/8
	// clamped to [4, 16] ms), so in effect double; and delay samples are
	// discarded for CubicDelta = 10 ms after an epoch starts (Linux: 1 s).
	NS3HyStart bool
}

// ns-3 3.37 TcpCubic's defaults (HyStartDelayMax, CubicDelta).
const (
	ns3HyStartDelayMax = time.Second
	ns3CubicDelta      = 10 * time.Millisecond
)

func init() { register("cubic", func() Algorithm { return &Cubic{} }) }

// Linux tcp_cubic.c parameters.
const (
	cubicBetaScale      = 1024
	cubicBeta           = 717 // β = 717/1024 ≈ 0.7
	cubicBicScale       = 41
	cubicHZ             = 10                                                                  // time unit 2^-10 s
	cubicBetaRenoScale  = 8 * (cubicBetaScale + cubicBeta) / 3 / (cubicBetaScale - cubicBeta) // = 15
	cubicRTTScale       = cubicBicScale * 10                                                  // 1024·C = 410
	hystartAckTrain     = 1
	hystartDelay        = 2
	hystartLowWindow    = 16
	hystartAckDelta     = 2 * time.Millisecond
	hystartMinSamples   = 8
	hystartDelayMin     = 4 * time.Millisecond
	hystartDelayMax     = 16 * time.Millisecond
	cubicJiffy          = time.Millisecond
	cubicSameCwndPeriod = 31 * time.Millisecond // HZ/32 jiffies at HZ=1000
)

// cubicFactor is 2^(10+3·10) / (bic_scale·10): multiplying (Wmax − cwnd)
// by it and taking the cube root gives K in 1/1024 s.
const cubicFactor = (uint64(1) << (10 + 3*cubicHZ)) / (cubicBicScale * 10)

func (a *Cubic) Name() string { return "cubic" }

func (a *Cubic) reset() {
	*a = Cubic{Base: a.Base, Params: a.Params}
}

func (a *Cubic) hystartReset(c *Conn) {
	a.roundStart = c.Now
	a.lastAck = c.Now
	a.endSeq = c.SndNxt
	a.currRTT = time.Duration(1<<63 - 1)
	a.sampleCnt = 0
}

// Init is cubictcp_init (HyStart on, no initial_ssthresh).
func (a *Cubic) Init(c *Conn) {
	a.reset()
	a.hystartReset(c)
}

// Event shifts the epoch over an idle period (CA_EVENT_TX_START), so the
// cubic curve resumes where it left off rather than jumping ahead.
func (a *Cubic) Event(c *Conn, e Event) {
	if e != EventTxStart || !a.epochStarted || c.LastSend.IsZero() {
		return
	}
	if idle := c.Now.Sub(c.LastSend); idle > 0 {
		a.epochStart = a.epochStart.Add(idle)
		if a.epochStart.After(c.Now) {
			a.epochStart = c.Now
		}
	}
}

// SetPhase resets everything on an RTO, as cubictcp_state does.
func (a *Cubic) SetPhase(c *Conn, p Phase) {
	if p == Loss {
		a.reset()
		a.hystartReset(c)
	}
}

// SSThresh is cubictcp_recalc_ssthresh: end the epoch, remember Wmax
// (lowered by fast convergence when the window shrank since the last
// loss), cut to β·cwnd.
func (a *Cubic) SSThresh(c *Conn) uint32 {
	a.Remember(c)
	a.epochStarted = false
	if c.Cwnd < a.lastMaxCwnd && !a.Params.NoFastConvergence {
		a.lastMaxCwnd = c.Cwnd * (cubicBetaScale + cubicBeta) / (2 * cubicBetaScale)
	} else {
		a.lastMaxCwnd = c.Cwnd
	}
	return max(c.Cwnd*cubicBeta/cubicBetaScale, 2)
}

// CongAvoid is cubictcp_cong_avoid.
func (a *Cubic) CongAvoid(c *Conn, acked uint32) {
	if c.InSlowStart() {
		acked = c.SlowStart(acked)
		if acked == 0 {
			return
		}
	}
	a.update(c, acked)
	c.CongAvoidAI(a.cnt, acked)
}

// update is bictcp_update: recompute cnt, the number of segments acked
// per one-segment increase, so that cwnd reaches the cubic target one
// RTT (delay_min) ahead, but never slower than the Reno estimate.
func (a *Cubic) update(c *Conn, acked uint32) {
	cwnd := c.Cwnd
	a.ackCnt += acked
	if a.lastCwnd == cwnd && c.Now.Sub(a.lastTime) <= cubicSameCwndPeriod {
		return
	}
	// The cubic function updates cnt at most once per jiffy.
	if !(a.epochStarted && c.Now.Sub(a.lastTime) < cubicJiffy) {
		a.lastCwnd = cwnd
		a.lastTime = c.Now
		if !a.epochStarted {
			a.epochStarted = true
			a.epochStart = c.Now
			a.ackCnt = acked
			a.tcpCwnd = cwnd
			if a.lastMaxCwnd <= cwnd {
				a.k = 0
				a.originPoint = cwnd
			} else {
				a.k = uint64(cubicRoot(cubicFactor * uint64(a.lastMaxCwnd-cwnd)))
				a.originPoint = a.lastMaxCwnd
			}
		}
		// t = now − epoch + delay_min, in 1/1024 s.
		el := c.Now.Sub(a.epochStart) + a.delayMin
		t := uint64(0)
		if el > 0 {
			t = uint64(el) << cubicHZ / uint64(time.Second)
		}
		var offs uint64
		if t < a.k {
			offs = a.k - t
		} else {
			offs = t - a.k
		}
		delta := uint32((cubicRTTScale * offs * offs * offs) >> (10 + 3*cubicHZ))
		var target uint32
		if t < a.k {
			target = a.originPoint - delta
		} else {
			target = a.originPoint + delta
		}
		if target > cwnd {
			a.cnt = cwnd / (target - cwnd)
		} else {
			a.cnt = 100 * cwnd // very small increment
		}
		// Be less conservative while the path's capacity is unknown.
		if a.lastMaxCwnd == 0 && a.cnt > 20 {
			a.cnt = 20
		}
	}
	// TCP friendliness: a Reno window grows 3(1−β)/(1+β) per RTT.
	if a.Params.NoRenoFriendly {
		a.cnt = max(a.cnt, 2)
		return
	}
	delta := (cwnd * cubicBetaRenoScale) >> 3
	if delta == 0 {
		delta = 1
	}
	for a.ackCnt > delta {
		a.ackCnt -= delta
		a.tcpCwnd++
	}
	if a.tcpCwnd > cwnd {
		if maxCnt := cwnd / (a.tcpCwnd - cwnd); a.cnt > maxCnt {
			a.cnt = maxCnt
		}
	}
	// At most one segment per two acked: 1.5× per RTT.
	a.cnt = max(a.cnt, 2)
}

// PktsAcked tracks the minimum delay and runs HyStart (cubictcp_acked).
func (a *Cubic) PktsAcked(c *Conn, s AckSample) {
	if s.RTT <= 0 {
		return // Karn: no sample
	}
	// Discard delay samples right after a reduction.
	discard := time.Second
	if a.Params.NS3HyStart {
		discard = ns3CubicDelta
	}
	if a.epochStarted && c.Now.Sub(a.epochStart) < discard {
		return
	}
	delay := max(s.RTT, time.Microsecond)
	if a.delayMin == 0 || a.delayMin > delay {
		a.delayMin = delay
	}
	if !a.found && c.InSlowStart() && !a.Params.NoHyStart {
		a.hystartUpdate(c, delay)
	}
}

func (a *Cubic) hystartUpdate(c *Conn, delay time.Duration) {
	if SeqAfter(c.SndUna, a.endSeq) {
		a.hystartReset(c)
	}
	if c.Cwnd < hystartLowWindow {
		return
	}
	detect := a.Params.HyStartDetect
	if detect == 0 {
		detect = hystartAckTrain | hystartDelay
	}
	// ACK train: closely spaced ACKs spanning half the minimum delay.
	if detect&hystartAckTrain != 0 && c.Now.Sub(a.lastAck) <= hystartAckDelta {
		a.lastAck = c.Now
		threshold := a.delayMin + hystartAckDelay(c)
		// Pacing may delay packets up to RTT/2 in slow start; without
		// pacing the train must span only half the minimum delay.
		if c.PacingRate == 0 {
			threshold /= 2
		}
		if a.Params.NS3HyStart {
			threshold = a.delayMin
		}
		if c.Now.Sub(a.roundStart) > threshold {
			a.found = true
			c.Ssthresh = c.Cwnd
		}
	}
	// Delay increase: the round's minimum RTT over its first samples.
	if detect&hystartDelay == 0 {
		return
	}
	// ns-3 takes the minimum over the first samples only; Linux over all.
	if a.currRTT > delay && (!a.Params.NS3HyStart || a.sampleCnt < hystartMinSamples) {
		a.currRTT = delay
	}
	thresh := min(max(a.delayMin/8, hystartDelayMin), hystartDelayMax)
	if a.Params.NS3HyStart {
		thresh = min(max(a.delayMin, hystartDelayMin), ns3HyStartDelayMax)
	}
	if a.sampleCnt < hystartMinSamples {
		a.sampleCnt++
	} else if a.currRTT > a.delayMin+thresh {
		a.found = true
		c.Ssthresh = c.Cwnd
	}
}

// hystartAckDelay is Linux's hystart_ack_delay, the TSO/GRO cushion:
// the time to send four 64 KB GSO packets at the socket's pacing rate,
// at most 1 ms. Linux sets sk_pacing_rate for every flow, paced or not
// (tcp_update_pacing_rate: 2·cwnd·mss/srtt in slow start), so we compute
// that rate here when the sender does not pace.
func hystartAckDelay(c *Conn) time.Duration {
	rate := c.PacingRate
	if rate == 0 {
		if c.SRTT <= 0 {
			return 0
		}
		rate = 2 * float64(c.Cwnd) * float64(c.MSS) / c.SRTT.Seconds()
	}
	if rate <= 0 {
		return 0
	}
	return min(time.Millisecond, time.Duration(4*65536/rate*float64(time.Second)))
}

// cubicRoot is the kernel's cubic_root: a table lookup on the top bits,
// then one Newton–Raphson step (average error about 0.2 %).
func cubicRoot(a uint64) uint32 {
	// For x in [0..63], v = cbrt(x << 18) − 1; cbrt(x) = (v[x] + 10) >> 6.
	v := [64]uint8{
		0, 54, 54, 54, 118, 118, 118, 118,
		123, 129, 134, 138, 143, 147, 151, 156,
		157, 161, 164, 168, 170, 173, 176, 179,
		181, 185, 187, 190, 192, 194, 197, 199,
		200, 202, 204, 206, 209, 211, 213, 215,
		217, 219, 221, 222, 224, 225, 227, 229,
		231, 232, 234, 236, 237, 239, 240, 242,
		244, 245, 246, 248, 250, 251, 252, 254,
	}
	b := uint32(bits.Len64(a))
	if b < 7 {
		return (uint32(v[a]) + 35) >> 6
	}
	b = ((b * 84) >> 8) - 1
	shift := a >> (b * 3)
	x := ((uint32(v[shift]) + 10) << b) >> 6
	x = 2*x + uint32(a/(uint64(x)*uint64(x-1)))
	return (x * 341) >> 10
}
