// Package cc is the congestion-control seam of package tcp: one interface,
// one file per algorithm, the way Linux splits tcp_input.c from its
// tcp_congestion_ops modules. The sender (package tcp) owns loss detection,
// recovery and retransmission; an algorithm only decides the congestion
// window, the slow-start threshold and (for rate-based algorithms) the
// pacing rate, from the events the sender reports.
//
// Units follow Linux: windows are in segments (of Conn.MSS bytes), with a
// per-connection counter for fractional growth (Linux's snd_cwnd_cnt), so
// the kernel's algorithms can be read side by side with ours. Times come
// from the sender's clock.Clock (Conn.Now), never from the wall clock, so
// every algorithm is deterministic on the virtual clock.
//
// Contract (what the sender guarantees, what an algorithm may do):
//   - Init is called once, before the first segment is sent, with Cwnd set
//     to the initial window and Ssthresh to InfiniteSsthresh.
//   - CongAvoid is called on every ACK that newly acknowledges data
//     (cumulatively or by SACK) while Phase is Open or Disorder, and only
//     when the sender was cwnd-limited (Linux's tcp_is_cwnd_limited); the
//     algorithm grows Cwnd (slow start below Ssthresh, its own increase
//     above it). It must not shrink Cwnd below 1 nor above CwndClamp.
//     Package tcp also calls it in Loss, as Linux's tcp_cong_control does
//     (the window slow-starts back after an RTO), with Acked counting the
//     segments newly acknowledged cumulatively; in Recovery and CWR it
//     sets Cwnd itself by PRR (RFC 6937), as Linux's tcp_cwnd_reduction.
//   - SSThresh is called once when the sender enters Recovery (fast
//     retransmit), CWR (an ECE) or Loss (RTO); it returns the new
//     threshold. The sender then sets Cwnd itself: to the threshold on
//     leaving Recovery/CWR (RFC 6582/3168), to 1 on Loss (RFC 5681).
//   - PktsAcked delivers every ACK's sample (RTT per Karn: zero when the
//     ACK covers a retransmission) before CongAvoid.
//   - SetPhase and Event report state changes; algorithms that do not care
//     embed Base.
//   - Undo returns the window to restore when the sender decides a
//     reduction was spurious (F-RTO, Eifel, DSACK); Base restores
//     max(Cwnd, the window before the reduction) as Linux's
//     tcp_reno_undo_cwnd does with prior_cwnd.
//   - An algorithm that also implements Controller (BBR) takes over: the
//     sender calls Control on every ACK with a RateSample (the Linux
//     tcp_rate.c sample) instead of CongAvoid, and uses Cwnd and PacingRate
//     as set; SSThresh is still called on Recovery/Loss for bookkeeping.
//     As in Linux (tcp_end_cwnd_reduction and PRR skip cong_control
//     algorithms) the sender then does not set Cwnd to the threshold on
//     leaving Recovery/CWR and runs no PRR; on an RTO it still sets Cwnd
//     to 1 (tcp_enter_loss). Control must also see Phase and InFlight as
//     they are after the ACK, and the sender applies AppLimitedMark.
package cc

import (
	"fmt"
	"sort"
	"time"
)

// InfiniteSsthresh is the slow-start threshold of a new connection
// (Linux's TCP_INFINITE_SSTHRESH).
const InfiniteSsthresh = 0x7fffffff

// Phase is the sender's congestion state, Linux's tcp_ca_state.
type Phase uint8

const (
	Open     Phase = iota // no loss suspected
	Disorder              // duplicate ACKs or SACKs seen, not yet a loss
	CWR                   // window reduced on ECE (RFC 3168)
	Recovery              // fast retransmit / fast recovery
	Loss                  // retransmission timeout
)

func (p Phase) String() string {
	switch p {
	case Open:
		return "open"
	case Disorder:
		return "disorder"
	case CWR:
		return "cwr"
	case Recovery:
		return "recovery"
	case Loss:
		return "loss"
	}
	return fmt.Sprintf("phase(%d)", uint8(p))
}

// Event is a congestion-window event, Linux's tcp_ca_event.
type Event uint8

const (
	EventTxStart     Event = iota // first transmission when nothing is in flight
	EventCwndRestart              // restart after idle (RFC 2861)
	EventCompleteCWR              // the CWR or Recovery phase ended
	EventLoss                     // an RTO fired
	EventECNNoCE                  // a data segment arrived without CE (receiver side, DCTCP)
	EventECNIsCE                  // a data segment arrived with CE (receiver side, DCTCP)
)

// Conn is the algorithm's view of one connection: the sender fills the
// read-only fields before every call; the algorithm writes Cwnd, CwndCnt,
// Ssthresh and PacingRate.
type Conn struct {
	// Written by the algorithm (and by the sender where the contract says).
	Cwnd       uint32  // congestion window, segments
	CwndCnt    uint32  // fractional growth counter (Linux snd_cwnd_cnt)
	Ssthresh   uint32  // slow-start threshold, segments
	CwndClamp  uint32  // upper bound on Cwnd (receive buffer / route)
	PacingRate float64 // bytes per second; 0 means the sender does not pace

	// Read-only for the algorithm.
	Now       time.Time
	MSS       int           // bytes per segment
	InFlight  uint32        // segments sent and not yet acked or lost
	SRTT      time.Duration // smoothed RTT, zero before the first sample
	MinRTT    time.Duration // smallest RTT seen (windowed by the sender)
	Delivered uint64        // segments delivered so far (tcp_rate.c)
	Phase     Phase
	// ECN reports whether the connection negotiated ECN (RFC 3168).
	ECN bool
	// AppLimited reports that the application, not cwnd, limits sending.
	AppLimited bool

	// SndUna and SndNxt are the sender's byte sequence numbers (oldest
	// unacknowledged, next to send), for algorithms that time rounds by
	// sequence as Linux does (Vegas's beg_snd_nxt, HyStart's end_seq,
	// DCTCP's next_seq). Compared with wrap-around arithmetic.
	SndUna, SndNxt uint32
	// Lost counts segments the sender has marked lost so far, by
	// recovery or by RTO (Linux tp->lost; BBR's long-term sampler).
	Lost uint64
	// LastSend is when the sender last transmitted data (Linux
	// lsndtime); at EventTxStart it is still the previous transmission's
	// time, so Now-LastSend is the idle period (CUBIC shifts its epoch).
	LastSend time.Time
	// Seed is a per-connection seed from the sender's seeded source, for
	// the algorithms that randomise (BBR's first gain-cycle phase); the
	// same seed gives the same run.
	Seed uint64
	// AppLimitedMark is written by a Controller (BBR in PROBE_RTT) to ask
	// the sender's rate sampler to treat the samples of segments sent
	// from now until Delivered passes this value as app-limited (Linux
	// sets tp->app_limited). The sender applies it after Control returns
	// and zeroes it; zero means no request.
	AppLimitedMark uint64

	// Ack is the receiver-side ACK control an algorithm may drive when the
	// receiver reports EventECNIsCE / EventECNNoCE (DCTCP).
	Ack AckControl
}

// AckControl is the receiver-side seam for algorithms whose receivers
// echo congestion differently from RFC 3168 (DCTCP, Linux tcp_dctcp.h).
// For an algorithm that implements ECNOwner, the receiver, on every data
// segment of an ECN connection, fills RcvNxt and Pending, calls Event with
// EventECNIsCE or EventECNNoCE, then acts on the outputs: first, if
// FlushAck, it sends one ACK of FlushSeq carrying ECE = FlushECE (the
// delayed ACK for the earlier segments, with their CE state), cancelling
// the delayed-ACK timer; then, if Now, it ACKs at once instead of
// delaying; and every ACK it sends carries ECE = ECE (DCTCP echoes each
// segment's CE state instead of latching ECE until CWR).
type AckControl struct {
	// Filled by the receiver before the event.
	RcvNxt  uint32 // next sequence expected, after the segment that raised the event
	Pending bool   // a delayed ACK is pending (Linux ICSK_ACK_TIMER)

	// Written by the algorithm.
	FlushAck bool   // send the pending delayed ACK first ...
	FlushSeq uint32 // ... acknowledging this sequence ...
	FlushECE bool   // ... with this ECE
	Now      bool   // ACK immediately (Linux ICSK_ACK_NOW)
	ECE      bool   // ECE on ACKs from now on (Linux TCP_ECN_DEMAND_CWR)
}

// ECNOwner is implemented by algorithms that need ECN and own the
// receiver's echo (Linux TCP_CONG_NEEDS_ECN): the receiver raises
// EventECNIsCE/EventECNNoCE and follows Conn.Ack, see AckControl. When
// the connection did not negotiate ECN such an algorithm falls back to
// Reno, as Linux's dctcp_reno does.
type ECNOwner interface {
	NeedsECN() bool
}

// SeqAfter reports a > b in 32-bit sequence space (Linux after()).
func SeqAfter(a, b uint32) bool { return int32(a-b) > 0 }

// SeqBefore reports a < b in 32-bit sequence space (Linux before()).
func SeqBefore(a, b uint32) bool { return int32(a-b) < 0 }

// CurrentSsthresh is Linux's tcp_current_ssthresh: in CWR or Recovery the
// threshold itself, otherwise at least three quarters of the window.
func (c *Conn) CurrentSsthresh() uint32 {
	if c.Phase == CWR || c.Phase == Recovery {
		return c.Ssthresh
	}
	return max(c.Ssthresh, (c.Cwnd>>1)+(c.Cwnd>>2))
}

// InSlowStart reports Linux's tcp_in_slow_start.
func (c *Conn) InSlowStart() bool { return c.Cwnd < c.Ssthresh }

// SlowStart grows Cwnd by acked segments up to Ssthresh and returns the
// acked segments left over (Linux's tcp_slow_start).
func (c *Conn) SlowStart(acked uint32) uint32 {
	cwnd := min(c.Cwnd+acked, c.Ssthresh)
	acked -= cwnd - c.Cwnd
	c.Cwnd = min(cwnd, c.CwndClamp)
	return acked
}

// CongAvoidAI grows Cwnd by one segment per w segments acked (Linux's
// tcp_cong_avoid_ai): Reno's additive increase when w == Cwnd.
func (c *Conn) CongAvoidAI(w, acked uint32) {
	if w == 0 {
		w = 1
	}
	if c.CwndCnt >= w {
		c.CwndCnt = 0
		c.Cwnd++
	}
	c.CwndCnt += acked
	if c.CwndCnt >= w {
		delta := c.CwndCnt / w
		c.CwndCnt -= delta * w
		c.Cwnd += delta
	}
	c.Cwnd = min(c.Cwnd, c.CwndClamp)
}

// AckSample is what one ACK tells the algorithm.
type AckSample struct {
	Acked    uint32        // segments newly acknowledged (cumulative + SACKed)
	RTT      time.Duration // zero when Karn's rule forbids a sample
	ECE      bool          // the ACK carried ECE
	InFlight uint32        // segments in flight before this ACK
}

// RateSample is the delivery-rate sample of one ACK (Linux tcp_rate.c),
// what BBR's model is built from.
type RateSample struct {
	Delivered      int64         // segments delivered over Interval (-1: no sample)
	Interval       time.Duration // the longer of the send and ACK intervals
	PriorDelivered uint64        // Conn.Delivered when the sampled segment was sent
	RTT            time.Duration // RTT of the most recently sent segment acked; zero if none
	Losses         uint32        // segments newly marked lost by this ACK
	AckedSacked    uint32        // segments newly acked or SACKed by this ACK
	PriorInFlight  uint32        // in flight before this ACK
	AppLimited     bool          // the sample was taken while app-limited
}

// Algorithm is one congestion-control algorithm instance (one per
// connection: algorithms keep per-connection state).
type Algorithm interface {
	Name() string
	Init(c *Conn)
	SSThresh(c *Conn) uint32
	CongAvoid(c *Conn, acked uint32)
	PktsAcked(c *Conn, s AckSample)
	SetPhase(c *Conn, p Phase)
	Event(c *Conn, e Event)
	Undo(c *Conn) uint32
}

// Controller is implemented by algorithms that set Cwnd and PacingRate
// themselves from delivery-rate samples (Linux's cong_control hook).
type Controller interface {
	Control(c *Conn, rs *RateSample)
}

// Base gives the no-op hooks and Reno's undo; algorithms embed it.
type Base struct {
	// PriorCwnd is Cwnd before the last reduction, for Undo (Linux's
	// prior_cwnd). An algorithm's SSThresh calls Remember first.
	PriorCwnd uint32
}

func (b *Base) Init(*Conn)                 {}
func (b *Base) PktsAcked(*Conn, AckSample) {}
func (b *Base) SetPhase(*Conn, Phase)      {}
func (b *Base) Event(*Conn, Event)         {}

// Remember records the window before a reduction, for Undo.
func (b *Base) Remember(c *Conn) { b.PriorCwnd = c.Cwnd }

// Undo is Linux's tcp_reno_undo_cwnd: max(cwnd, prior cwnd).
func (b *Base) Undo(c *Conn) uint32 { return max(c.Cwnd, b.PriorCwnd) }

// registry maps a name (as Linux's net.ipv4.tcp_congestion_control names
// it) to a constructor.
var registry = map[string]func() Algorithm{}

// register is called from each algorithm's file.
func register(name string, f func() Algorithm) {
	if _, dup := registry[name]; dup {
		panic("cc: " + name + " registered twice")
	}
	registry[name] = f
}

// New returns a fresh instance of the named algorithm.
func New(name string) (Algorithm, error) {
	f, ok := registry[name]
	if !ok {
		return nil, fmt.Errorf("cc: unknown congestion control %q (have %v)", name, Names())
	}
	return f(), nil
}

// Names lists the registered algorithms, sorted.
func Names() []string {
	out := make([]string, 0, len(registry))
	for n := range registry {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
