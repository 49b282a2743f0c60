package cc

import (
	"math/rand/v2"
	"time"
)

// BBR is BBR v1 as Linux's tcp_bbr.c runs it: a model of the path (the
// windowed maximum delivery rate over 10 round trips, the minimum RTT
// over 10 s) sets the pacing rate (pacing_gain × bw) and the window
// (cwnd_gain × BDP plus the kernel's quantization budget and ACK
// aggregation allowance). The state machine is STARTUP (gain 2/ln2 ≈
// 2.885) until the bandwidth grows less than 25 % for 3 rounds, DRAIN
// (gain 1/2.885) until inflight falls to one BDP, PROBE_BW cycling
// pacing gains 1.25, 0.75, 1×6 (each phase about one min RTT, starting
// at a random phase other than 0.75), and PROBE_RTT (cwnd 4 for at least
// 200 ms and one round) when the min RTT was not refreshed for 10 s. The
// long-term sampler detects token-bucket policers: two consecutive
// intervals of 4–16 rounds with ≥ 20 % loss and delivery rates within
// 1/8 (or 4 kbit/s) of each other make BBR use their average (lt_bw) at
// gain 1 for 48 rounds.
//
// Fixed point as the kernel: bandwidth in segments per µs << 24, gains
// << 8, min RTT in µs; pacing 1 % below the model (pacing margin).
//
// Deviations from Linux: our sender has no TSO or earliest-departure-
// time queue, so bbr_packets_in_net_at_edt is the in-flight count (plus
// the TSO goal when probing up, as the kernel adds), and the TSO goal is
// the kernel's function of the pacing rate with sk_pacing_shift 10 and a
// 64 KB cap, kept so that BBR's cwnd matches a Linux sender's; the
// rate sample has no is_ack_delayed, taken as false; the random first
// phase comes from Conn.Seed, not the kernel's entropy.
type BBR struct {
	// Params switch parts off for comparisons; the zero value is Linux's
	// BBR. Set them on an instance before Init (tcp.Config.Algorithm).
	Params BBRParams

	minRTTUs           uint32 // min RTT in the 10 s window, µs (^0 = none)
	minRTTStamp        time.Time
	probeRTTDoneStamp  time.Time // zero: not yet at the PROBE_RTT floor
	bw                 minmax    // max delivery rate, by round
	rttCnt             uint32    // packet-timed rounds elapsed
	nextRTTDelivered   uint64
	cycleStamp         time.Time
	mode               BBRMode
	prevPhase          Phase
	packetConservation bool
	roundStart         bool
	idleRestart        bool
	probeRTTRoundDone  bool
	ltIsSampling       bool
	ltRTTCnt           uint32
	ltUseBW            bool
	ltBW               uint64
	ltLastDelivered    uint64
	ltLastStamp        time.Time
	ltLastLost         uint64
	pacingGain         uint32
	cwndGain           uint32
	fullBWReached      bool
	fullBWCnt          uint32
	cycleIdx           int
	hasSeenRTT         bool
	priorCwnd          uint32
	fullBW             uint64

	ackEpochStamp    time.Time
	extraAcked       [2]uint32
	ackEpochAcked    uint32
	extraAckedWinRTT uint32
	extraAckedWinIdx int

	// Delivery bookkeeping the kernel reads from tcp_sock.
	deliveredStamp time.Time // tp->delivered_mstamp
	lastDelivered  uint64

	rng *rand.Rand
}

// BBRParams are switches that Linux does not have (tcp_bbr.c's tunables
// are constants), for comparing with implementations that lack a part:
// ns-3 3.37's TcpBbr has no long-term (policer) sampler.
type BBRParams struct {
	NoLongTermBW bool // never sample or use lt_bw
}

// BBRMode is BBR's state.
type BBRMode uint8

const (
	BBRStartup BBRMode = iota
	BBRDrain
	BBRProbeBW
	BBRProbeRTT
)

func (m BBRMode) String() string {
	return [...]string{"startup", "drain", "probe_bw", "probe_rtt"}[m]
}

func init() { register("bbr", func() Algorithm { return &BBR{} }) }

// tcp_bbr.c constants.
const (
	bwScale             = 24
	bwUnit              = 1 << bwScale
	bbrScale            = 8
	bbrUnit             = 1 << bbrScale
	bbrCycleLen         = 8
	bbrBWRTTs           = bbrCycleLen + 2
	bbrMinRTTWin        = 10 * time.Second
	bbrProbeRTTMode     = 200 * time.Millisecond
	bbrMinTSORate       = 1200000 // bit/s
	bbrPacingMargin     = 1       // percent
	bbrHighGain         = bbrUnit*2885/1000 + 1
	bbrDrainGain        = bbrUnit * 1000 / 2885
	bbrCwndGain         = bbrUnit * 2
	bbrCycleRand        = 7
	bbrCwndMinTarget    = 4
	bbrFullBWThresh     = bbrUnit * 5 / 4
	bbrFullBWCnt        = 3
	bbrLtIntvlMinRTTs   = 4
	bbrLtLossThresh     = 50 // /256: 20 %
	bbrLtBWRatio        = bbrUnit / 8
	bbrLtBWDiff         = 4000 / 8 // bytes/s
	bbrLtBWMaxRTTs      = 48
	bbrExtraAckedGain   = bbrUnit
	bbrExtraAckedWin    = 5
	bbrAckEpochResetThr = 1 << 20
	bbrExtraAckedMaxUs  = 100 * 1000
	tcpInitCwnd         = 10
	// tcp_tso_autosize's cap: GSO_LEGACY_MAX_SIZE − 1 − MAX_TCP_HEADER.
	bbrTSOMaxBytes = 65536 - 1 - 320
)

var bbrPacingGain = [bbrCycleLen]uint32{
	bbrUnit * 5 / 4, bbrUnit * 3 / 4,
	bbrUnit, bbrUnit, bbrUnit, bbrUnit, bbrUnit, bbrUnit,
}

func (b *BBR) Name() string { return "bbr" }

// Mode reports the current state (for traces and tests).
func (b *BBR) Mode() BBRMode { return b.mode }

// PacingGain and CwndGain report the current gains, ×256 (BBR_UNIT).
func (b *BBR) PacingGain() uint32 { return b.pacingGain }
func (b *BBR) CwndGain() uint32   { return b.cwndGain }

// Bandwidth reports the model's bandwidth in bytes per second, and
// whether it is the long-term (policer) estimate.
func (b *BBR) Bandwidth(mss int) (float64, bool) {
	return float64(b.curBW()) * float64(mss) * 1e6 / bwUnit, b.ltUseBW
}

// MinRTT reports the model's minimum RTT.
func (b *BBR) MinRTT() time.Duration {
	if b.minRTTUs == ^uint32(0) {
		return 0
	}
	return time.Duration(b.minRTTUs) * time.Microsecond
}

// Init is bbr_init.
func (b *BBR) Init(c *Conn) {
	*b = BBR{Params: b.Params}
	b.rng = rand.New(rand.NewPCG(c.Seed, 0x6262725f6379636c)) // "bbr_cycl"
	c.Ssthresh = InfiniteSsthresh
	b.nextRTTDelivered = c.Delivered
	b.prevPhase = Open
	b.minRTTUs = ^uint32(0)
	if c.MinRTT > 0 {
		b.minRTTUs = durUs(c.MinRTT)
	}
	b.minRTTStamp = c.Now
	b.deliveredStamp = c.Now
	b.lastDelivered = c.Delivered
	b.bw.reset(0, 0)
	b.initPacingRateFromRTT(c)
	b.resetLtBWSampling(c)
	b.mode = BBRStartup
	b.pacingGain, b.cwndGain = bbrHighGain, bbrHighGain
	b.ackEpochStamp = c.Now
}

func durUs(d time.Duration) uint32 { return uint32(max(d/time.Microsecond, 0)) }

func (b *BBR) maxBW() uint64 { return b.bw.get() }

func (b *BBR) curBW() uint64 {
	if b.ltUseBW {
		return b.ltBW
	}
	return b.maxBW()
}

func (b *BBR) extraAckedMax() uint32 { return max(b.extraAcked[0], b.extraAcked[1]) }

// rateBytesPerSec is bbr_rate_bytes_per_sec: rate × mss × gain, less the
// pacing margin.
func rateBytesPerSec(c *Conn, rate uint64, gain uint32) uint64 {
	rate *= uint64(c.MSS)
	rate *= uint64(gain)
	rate >>= bbrScale
	rate *= 1000000 / 100 * (100 - bbrPacingMargin)
	return rate >> bwScale
}

func (b *BBR) initPacingRateFromRTT(c *Conn) {
	rttUs := uint64(1000) // nominal 1 ms before any sample
	if c.SRTT > 0 {
		rttUs = max(uint64(durUs(c.SRTT)), 1)
		b.hasSeenRTT = true
	}
	bw := uint64(c.Cwnd) * bwUnit / rttUs
	c.PacingRate = float64(rateBytesPerSec(c, bw, bbrHighGain))
}

func (b *BBR) setPacingRate(c *Conn, bw uint64, gain uint32) {
	rate := rateBytesPerSec(c, bw, gain)
	if !b.hasSeenRTT && c.SRTT > 0 {
		b.initPacingRateFromRTT(c)
	}
	if b.fullBWReached || float64(rate) > c.PacingRate {
		c.PacingRate = float64(rate)
	}
}

func (b *BBR) minTSOSegs(c *Conn) uint32 {
	if c.PacingRate < bbrMinTSORate/8 {
		return 1
	}
	return 2
}

func (b *BBR) tsoSegsGoal(c *Conn) uint32 {
	bytes := min(uint64(c.PacingRate)>>10, bbrTSOMaxBytes)
	segs := max(uint32(bytes/uint64(c.MSS)), b.minTSOSegs(c))
	return min(segs, 0x7f)
}

// saveCwnd keeps the last known good window (bbr_save_cwnd).
func (b *BBR) saveCwnd(c *Conn) {
	if b.prevPhase < Recovery && b.mode != BBRProbeRTT {
		b.priorCwnd = c.Cwnd
	} else {
		b.priorCwnd = max(b.priorCwnd, c.Cwnd)
	}
}

// Event is bbr_cwnd_event: restarting from idle while app-limited.
func (b *BBR) Event(c *Conn, e Event) {
	if e != EventTxStart || !c.AppLimited {
		return
	}
	b.idleRestart = true
	b.ackEpochStamp = c.Now
	b.ackEpochAcked = 0
	switch b.mode {
	case BBRProbeBW:
		b.setPacingRate(c, b.curBW(), bbrUnit)
	case BBRProbeRTT:
		b.checkProbeRTTDone(c)
	}
}

// bdp is ceil(bw × min_rtt × gain), or the initial window before any
// RTT sample.
func (b *BBR) bdp(bw uint64, gain uint32) uint32 {
	if b.minRTTUs == ^uint32(0) {
		return tcpInitCwnd
	}
	w := bw * uint64(b.minRTTUs)
	return uint32(((w*uint64(gain))>>bbrScale + bwUnit - 1) / bwUnit)
}

func (b *BBR) quantizationBudget(c *Conn, cwnd uint32) uint32 {
	cwnd += 3 * b.tsoSegsGoal(c)
	cwnd = (cwnd + 1) &^ 1
	if b.mode == BBRProbeBW && b.cycleIdx == 0 {
		cwnd += 2
	}
	return cwnd
}

func (b *BBR) inflight(c *Conn, bw uint64, gain uint32) uint32 {
	return b.quantizationBudget(c, b.bdp(bw, gain))
}

// inNetAtEDT is bbr_packets_in_net_at_edt without an EDT queue.
func (b *BBR) inNetAtEDT(c *Conn, inflightNow uint32) uint32 {
	if b.pacingGain > bbrUnit {
		return inflightNow + b.tsoSegsGoal(c)
	}
	return inflightNow
}

func (b *BBR) ackAggregationCwnd(c *Conn) uint32 {
	if !b.fullBWReached {
		return 0
	}
	maxAggr := uint32(b.curBW() * bbrExtraAckedMaxUs / bwUnit)
	aggr := (bbrExtraAckedGain * b.extraAckedMax()) >> bbrScale
	return min(aggr, maxAggr)
}

// recoverOrRestore is bbr_set_cwnd_to_recover_or_restore: packet
// conservation in the first round of recovery, the saved window after.
func (b *BBR) recoverOrRestore(c *Conn, rs *RateSample, acked uint32) (uint32, bool) {
	prev, state := b.prevPhase, c.Phase
	cwnd := c.Cwnd
	if rs.Losses > 0 {
		cwnd = uint32(max(int64(cwnd)-int64(rs.Losses), 1))
	}
	if state == Recovery && prev != Recovery {
		b.packetConservation = true
		b.nextRTTDelivered = c.Delivered
		cwnd = c.InFlight + acked
	} else if prev >= Recovery && state < Recovery {
		cwnd = max(cwnd, b.priorCwnd)
		b.packetConservation = false
	}
	b.prevPhase = state
	if b.packetConservation {
		return max(cwnd, c.InFlight+acked), true
	}
	return cwnd, false
}

func (b *BBR) setCwnd(c *Conn, rs *RateSample, acked uint32, bw uint64, gain uint32) {
	cwnd := c.Cwnd
	if acked > 0 {
		var done bool
		if cwnd, done = b.recoverOrRestore(c, rs, acked); !done {
			target := b.bdp(bw, gain)
			target += b.ackAggregationCwnd(c)
			target = b.quantizationBudget(c, target)
			if b.fullBWReached {
				cwnd = min(cwnd+acked, target)
			} else if cwnd < target || c.Delivered < tcpInitCwnd {
				cwnd += acked
			}
			cwnd = max(cwnd, bbrCwndMinTarget)
		}
	}
	c.Cwnd = max(min(cwnd, c.CwndClamp), 1)
	if b.mode == BBRProbeRTT {
		c.Cwnd = min(c.Cwnd, bbrCwndMinTarget)
	}
}

func (b *BBR) isNextCyclePhase(c *Conn, rs *RateSample) bool {
	fullLength := b.deliveredStamp.Sub(b.cycleStamp) > time.Duration(b.minRTTUs)*time.Microsecond
	if b.pacingGain == bbrUnit {
		return fullLength
	}
	inflight := b.inNetAtEDT(c, rs.PriorInFlight)
	bw := b.maxBW()
	if b.pacingGain > bbrUnit {
		return fullLength && (rs.Losses > 0 || inflight >= b.inflight(c, bw, b.pacingGain))
	}
	return fullLength || inflight <= b.inflight(c, bw, bbrUnit)
}

func (b *BBR) advanceCyclePhase() {
	b.cycleIdx = (b.cycleIdx + 1) & (bbrCycleLen - 1)
	b.cycleStamp = b.deliveredStamp
}

func (b *BBR) resetProbeBWMode() {
	b.mode = BBRProbeBW
	b.cycleIdx = bbrCycleLen - 1 - int(b.rng.Uint32N(bbrCycleRand))
	b.advanceCyclePhase()
}

func (b *BBR) resetMode() {
	if !b.fullBWReached {
		b.mode = BBRStartup
	} else {
		b.resetProbeBWMode()
	}
}

func (b *BBR) resetLtBWSamplingInterval(c *Conn) {
	b.ltLastStamp = b.deliveredStamp
	b.ltLastDelivered = c.Delivered
	b.ltLastLost = c.Lost
	b.ltRTTCnt = 0
}

func (b *BBR) resetLtBWSampling(c *Conn) {
	b.ltBW = 0
	b.ltUseBW = false
	b.ltIsSampling = false
	b.resetLtBWSamplingInterval(c)
}

func (b *BBR) ltBWIntervalDone(c *Conn, bw uint64) {
	if b.ltBW != 0 {
		diff := bw - b.ltBW
		if bw < b.ltBW {
			diff = b.ltBW - bw
		}
		if diff*bbrUnit <= bbrLtBWRatio*b.ltBW || rateBytesPerSec(c, diff, bbrUnit) <= bbrLtBWDiff {
			// Two consistent lossy intervals: we are policed.
			b.ltBW = (bw + b.ltBW) >> 1
			b.ltUseBW = true
			b.pacingGain = bbrUnit
			b.ltRTTCnt = 0
			return
		}
	}
	b.ltBW = bw
	b.resetLtBWSamplingInterval(c)
}

// ltBWSampling is bbr_lt_bw_sampling, the token-bucket policer detector.
func (b *BBR) ltBWSampling(c *Conn, rs *RateSample) {
	if b.Params.NoLongTermBW {
		return
	}
	if b.ltUseBW {
		if b.mode == BBRProbeBW && b.roundStart {
			b.ltRTTCnt++
			if b.ltRTTCnt >= bbrLtBWMaxRTTs {
				b.resetLtBWSampling(c)
				b.resetProbeBWMode()
			}
		}
		return
	}
	// Start at the first loss: the policer has used up its burst.
	if !b.ltIsSampling {
		if rs.Losses == 0 {
			return
		}
		b.resetLtBWSamplingInterval(c)
		b.ltIsSampling = true
	}
	if rs.AppLimited {
		b.resetLtBWSampling(c)
		return
	}
	if b.roundStart {
		b.ltRTTCnt++
	}
	if b.ltRTTCnt < bbrLtIntvlMinRTTs {
		return
	}
	if b.ltRTTCnt > 4*bbrLtIntvlMinRTTs {
		b.resetLtBWSampling(c)
		return
	}
	// End the interval at a loss, when the tokens are exhausted.
	if rs.Losses == 0 {
		return
	}
	lost := c.Lost - b.ltLastLost
	delivered := c.Delivered - b.ltLastDelivered
	if delivered == 0 || lost<<bbrScale < bbrLtLossThresh*delivered {
		return
	}
	t := b.deliveredStamp.Sub(b.ltLastStamp) / time.Millisecond
	if t < 1 {
		return
	}
	if t >= time.Duration(^uint32(0)/1000) {
		b.resetLtBWSampling(c)
		return
	}
	bw := delivered * bwUnit / (uint64(t) * 1000)
	b.ltBWIntervalDone(c, bw)
}

func (b *BBR) updateBW(c *Conn, rs *RateSample) {
	b.roundStart = false
	if rs.Delivered < 0 || rs.Interval <= 0 {
		return
	}
	if rs.PriorDelivered >= b.nextRTTDelivered {
		b.nextRTTDelivered = c.Delivered
		b.rttCnt++
		b.roundStart = true
		b.packetConservation = false
	}
	b.ltBWSampling(c, rs)
	intervalUs := max(uint64(rs.Interval/time.Microsecond), 1)
	bw := uint64(rs.Delivered) * bwUnit / intervalUs
	if !rs.AppLimited || bw >= b.maxBW() {
		b.bw.runningMax(bbrBWRTTs, b.rttCnt, bw)
	}
}

func (b *BBR) updateAckAggregation(c *Conn, rs *RateSample) {
	if rs.AckedSacked == 0 || rs.Delivered < 0 || rs.Interval <= 0 {
		return
	}
	if b.roundStart {
		b.extraAckedWinRTT = min(0x1f, b.extraAckedWinRTT+1)
		if b.extraAckedWinRTT >= bbrExtraAckedWin {
			b.extraAckedWinRTT = 0
			b.extraAckedWinIdx ^= 1
			b.extraAcked[b.extraAckedWinIdx] = 0
		}
	}
	epochUs := uint64(max(b.deliveredStamp.Sub(b.ackEpochStamp)/time.Microsecond, 0))
	expected := b.curBW() * epochUs / bwUnit
	if uint64(b.ackEpochAcked) <= expected || b.ackEpochAcked+rs.AckedSacked >= bbrAckEpochResetThr {
		b.ackEpochAcked = 0
		b.ackEpochStamp = b.deliveredStamp
		expected = 0
	}
	b.ackEpochAcked = min(0xfffff, b.ackEpochAcked+rs.AckedSacked)
	extra := min(uint32(uint64(b.ackEpochAcked)-expected), c.Cwnd)
	if extra > b.extraAcked[b.extraAckedWinIdx] {
		b.extraAcked[b.extraAckedWinIdx] = extra
	}
}

// checkFullBWReached: STARTUP filled the pipe when the bandwidth grew
// less than 25 % in 3 non-app-limited rounds.
func (b *BBR) checkFullBWReached(rs *RateSample) {
	if b.fullBWReached || !b.roundStart || rs.AppLimited {
		return
	}
	thresh := b.fullBW * bbrFullBWThresh >> bbrScale
	if b.maxBW() >= thresh {
		b.fullBW = b.maxBW()
		b.fullBWCnt = 0
		return
	}
	b.fullBWCnt++
	b.fullBWReached = b.fullBWCnt >= bbrFullBWCnt
}

func (b *BBR) checkDrain(c *Conn) {
	if b.mode == BBRStartup && b.fullBWReached {
		b.mode = BBRDrain
		c.Ssthresh = b.inflight(c, b.maxBW(), bbrUnit)
	}
	if b.mode == BBRDrain && b.inNetAtEDT(c, c.InFlight) <= b.inflight(c, b.maxBW(), bbrUnit) {
		b.resetProbeBWMode()
	}
}

func (b *BBR) checkProbeRTTDone(c *Conn) {
	if b.probeRTTDoneStamp.IsZero() || !c.Now.After(b.probeRTTDoneStamp) {
		return
	}
	b.minRTTStamp = c.Now // wait a while until the next PROBE_RTT
	c.Cwnd = max(c.Cwnd, b.priorCwnd)
	b.resetMode()
}

func (b *BBR) updateMinRTT(c *Conn, rs *RateSample) {
	expired := c.Now.After(b.minRTTStamp.Add(bbrMinRTTWin))
	if rs.RTT > 0 {
		if us := durUs(rs.RTT); us < b.minRTTUs || expired {
			b.minRTTUs = us
			b.minRTTStamp = c.Now
		}
	}
	if expired && !b.idleRestart && b.mode != BBRProbeRTT {
		b.mode = BBRProbeRTT
		b.saveCwnd(c)
		b.probeRTTDoneStamp = time.Time{}
	}
	if b.mode == BBRProbeRTT {
		// Ignore low-rate samples while the window is at the floor.
		c.AppLimitedMark = max(c.Delivered+uint64(c.InFlight), 1)
		if b.probeRTTDoneStamp.IsZero() && c.InFlight <= bbrCwndMinTarget {
			b.probeRTTDoneStamp = c.Now.Add(bbrProbeRTTMode)
			b.probeRTTRoundDone = false
			b.nextRTTDelivered = c.Delivered
		} else if !b.probeRTTDoneStamp.IsZero() {
			if b.roundStart {
				b.probeRTTRoundDone = true
			}
			if b.probeRTTRoundDone {
				b.checkProbeRTTDone(c)
			}
		}
	}
	if rs.Delivered > 0 {
		b.idleRestart = false
	}
}

func (b *BBR) updateGains() {
	switch b.mode {
	case BBRStartup:
		b.pacingGain, b.cwndGain = bbrHighGain, bbrHighGain
	case BBRDrain:
		b.pacingGain, b.cwndGain = bbrDrainGain, bbrHighGain
	case BBRProbeBW:
		b.pacingGain = bbrPacingGain[b.cycleIdx]
		if b.ltUseBW {
			b.pacingGain = bbrUnit
		}
		b.cwndGain = bbrCwndGain
	case BBRProbeRTT:
		b.pacingGain, b.cwndGain = bbrUnit, bbrUnit
	}
}

// Control is bbr_main, called by the sender on every ACK.
func (b *BBR) Control(c *Conn, rs *RateSample) {
	if c.Delivered != b.lastDelivered {
		b.lastDelivered = c.Delivered
		b.deliveredStamp = c.Now
	}
	b.updateBW(c, rs)
	b.updateAckAggregation(c, rs)
	if b.mode == BBRProbeBW && b.isNextCyclePhase(c, rs) {
		b.advanceCyclePhase()
	}
	b.checkFullBWReached(rs)
	b.checkDrain(c)
	b.updateMinRTT(c, rs)
	b.updateGains()

	bw := b.curBW()
	b.setPacingRate(c, bw, b.pacingGain)
	b.setCwnd(c, rs, rs.AckedSacked, bw, b.cwndGain)
}

// CongAvoid is never called for a Controller; if a sender does call it,
// BBR leaves the window to Control.
func (b *BBR) CongAvoid(*Conn, uint32) {}

// PktsAcked: BBR takes its samples from the RateSample in Control.
func (b *BBR) PktsAcked(*Conn, AckSample) {}

// SSThresh saves the window for recovery and leaves ssthresh alone
// (bbr_ssthresh).
func (b *BBR) SSThresh(c *Conn) uint32 {
	b.saveCwnd(c)
	return c.Ssthresh
}

// Undo resets full-pipe detection and the policer sampler: the slow-down
// was spurious (bbr_undo_cwnd).
func (b *BBR) Undo(c *Conn) uint32 {
	b.fullBW = 0
	b.fullBWCnt = 0
	b.resetLtBWSampling(c)
	return c.Cwnd
}

// SetPhase is bbr_set_state: an RTO ends a round and counts as a loss
// for the policer detector.
func (b *BBR) SetPhase(c *Conn, p Phase) {
	if p != Loss {
		return
	}
	b.prevPhase = Loss
	b.fullBW = 0
	b.roundStart = true
	b.ltBWSampling(c, &RateSample{Losses: 1})
}

// minmax is Kathleen Nichols' windowed max filter (Linux lib/win_minmax.c):
// the best, second and third best samples, widely spread in the window.
type minmax struct{ s [3]mmSample }

type mmSample struct {
	t uint32
	v uint64
}

func (m *minmax) get() uint64 { return m.s[0].v }

func (m *minmax) reset(t uint32, v uint64) uint64 {
	m.s[0] = mmSample{t, v}
	m.s[1], m.s[2] = m.s[0], m.s[0]
	return v
}

func (m *minmax) runningMax(win, t uint32, v uint64) uint64 {
	val := mmSample{t, v}
	if v >= m.s[0].v || t-m.s[2].t > win {
		return m.reset(t, v)
	}
	if v >= m.s[1].v {
		m.s[1], m.s[2] = val, val
	} else if v >= m.s[2].v {
		m.s[2] = val
	}
	dt := t - m.s[0].t
	switch {
	case dt > win:
		m.s[0], m.s[1], m.s[2] = m.s[1], m.s[2], val
		if t-m.s[0].t > win {
			m.s[0], m.s[1], m.s[2] = m.s[1], m.s[2], val
		}
	case m.s[1].t == m.s[0].t && dt > win/4:
		m.s[1], m.s[2] = val, val
	case m.s[2].t == m.s[1].t && dt > win/2:
		m.s[2] = val
	}
	return m.s[0].v
}
