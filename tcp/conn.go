package tcp

import (
	"errors"
	"fmt"
	"time"

	"github.com/pseudocong/pseudocong/internal/clock"
	"github.com/pseudocong/pseudocong/tcp/cc"
)

// State is the connection's state (the part of RFC 793's diagram this
// endpoint has: no teardown).
type State uint8

const (
	Closed State = iota
	Listen
	SynSent
	SynRcvd
	Established
	Failed // the handshake or a retransmission gave up
)

func (s State) String() string {
	switch s {
	case Closed:
		return "closed"
	case Listen:
		return "listen"
	case SynSent:
		return "syn-sent"
	case SynRcvd:
		return "syn-rcvd"
	case Established:
		return "established"
	case Failed:
		return "failed"
	}
	return fmt.Sprintf("state(%d)", uint8(s))
}

// Handlers are the application's callbacks; any may be nil. They run
// inside the endpoint's event (on the virtual clock: the scheduler loop)
// and may call Write.
type Handlers struct {
	Established func()
	// Writable reports that acknowledged data freed send-buffer space.
	Writable func()
	// Acked reports the total payload bytes acknowledged so far.
	Acked func(total uint64)
	// Received reports n new in-order payload bytes (the application
	// consumes them at once: the receive buffer holds only out-of-order
	// data).
	Received func(n int)
	// Failed reports that the connection gave up.
	Failed func(err error)
	// Timeout reports a retransmission timeout of data, after the sender
	// entered Loss and retransmitted (package mptcp's policies hook here).
	Timeout func()
}

// ErrHandshakeTimeout and ErrRetransmitTimeout are how a connection fails.
var (
	ErrHandshakeTimeout  = errors.New("tcp: handshake timed out")
	ErrRetransmitTimeout = errors.New("tcp: too many retransmission timeouts")
)

// txSeg is one sent segment in the retransmission queue (Linux's skb with
// its scoreboard bits and tcp_rate.c's snapshot).
type txSeg struct {
	seq, end    uint32
	sentAt      int64 // last transmission, ns since base
	state       uint8
	appLimited  bool
	skip        int32  // if SACKed: records from here to one that may not be (nextUnsacked)
	delivered   uint64 // Conn.delivered when sent
	deliveredAt int64
	firstTxAt   int64
}

const (
	segSacked      uint8 = 1 << iota
	segLost              // marked lost, not yet (or again not) acknowledged
	segRetrans           // a retransmission of it is in flight
	segEverRetrans       // retransmitted at least once (Karn's rule)
	segRated             // its delivery has been counted (tcp_rate.c)
)

// Conn is one TCP endpoint (both halves of a connection).
type Conn struct {
	cfg  Config
	clk  clock.Clock
	base time.Time
	mono clock.Mono // now() in ns since base
	// nowT is the clock's time at nowAt (ns since base), for the
	// algorithm's view: an ACK fills it up to three times and every
	// segment sent stamps it, all at one instant (see clockNow).
	nowT  time.Time
	nowAt int64
	state State
	stats Stats
	h     Handlers
	alg   cc.Algorithm
	ctl   cc.Controller
	cc    cc.Conn
	out   Segment // output scratch

	// Negotiated on the SYN.
	mss                       int // payload bytes per segment we send
	sackOK, tsOK, ecnOK, wsOK bool
	sndScale, rcvScale        uint8

	// Handshake.
	synTx            int
	synSentAt        int64
	synRetransmitted bool

	// Send half.
	iss, sndUna, sndNxt            uint32
	sndWnd                         uint32
	written, sent, acked           uint64 // stream offsets, bytes
	q                              []txSeg
	qHead                          int
	hint                           int // no lost-and-unsent record before q[hint]
	lostTop                        int // nor at or after q[lostTop]
	lossW, lossBelow               int // markLosses' watermark: the records before q[lossW] are judged, lossBelow of them SACKed
	sackedOut, lostOut, retransOut uint32
	phase                          cc.Phase
	highSeq                        uint32
	echoes                         uint32 // without SACK: duplicate ACKs expected from copies the receiver already had
	echoSeq                        uint32 // sndNxt when echoes were last added
	renoRecover                    uint32 // RecoveryReno: sndNxt at the last fast retransmit or timeout (ns-2's recover_)
	renoRecoverSet, renoRtx        bool
	reducedAt                      uint32 // sndNxt at the last reduction: ECE for data before it is the same congestion (RFC 3168 §6.1.2)
	priorSsthresh                  uint32
	prrDelivered, prrOut, prrPrior uint32
	frto, frtoNew                  bool
	retransTS                      uint32
	sendCWR                        bool
	cwndLimited                    bool   // tcp_cwnd_validate's is_cwnd_limited for the current window
	maxPacketsOut                  uint32 // most segments out in the current window (max_packets_out)
	cwndUsageSeq                   uint32 // sndNxt when that window began (cwnd_usage_seq)
	rtt                            rttEstimator
	minRTT                         time.Duration
	rtoRetries                     int
	rto                            lazyTimer
	pace                           lazyTimer
	nextSendAt                     int64
	inPush                         bool
	lostTotal                      uint64

	// tcp_rate.c state.
	delivered              uint64
	deliveredAt, firstTxAt int64
	appLimited             uint64
	rs                     cc.RateSample
	rsValid                bool
	rsPriorAt, rsSendEl    int64

	// Receive half.
	irs, rcvNxt uint32
	rcvEdge     uint32 // right edge of the window last advertised
	peerMSS     int
	ooo         []SACKBlock // out-of-order data held, in sequence order
	oooBytes    int
	recent      [4]uint32 // seqs of the latest out-of-order arrivals, newest first
	nRecent     int
	unacked     int
	quick       int
	eceLatch    bool
	ceState     bool // ECE on our ACKs, when the algorithm owns the echo
	ecnOwner    bool // the algorithm drives the receiver's ECN echo (DCTCP)
	tsRecent    uint32
	delack      lazyTimer
}

// New makes an endpoint in state Closed; call Connect or Listen.
func New(cfg Config) (*Conn, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	alg := cfg.Algorithm
	if alg == nil {
		alg, _ = cc.New(cfg.CC)
	}
	c := &Conn{cfg: cfg, clk: cfg.Clock, base: cfg.Clock.Now(), alg: alg}
	c.mono = clock.NewMono(c.clk, c.base)
	c.ctl, _ = alg.(cc.Controller)
	if o, ok := alg.(cc.ECNOwner); ok && o.NeedsECN() {
		c.ecnOwner = true
		c.cfg.ECN = true // as Linux's TCP_CONG_NEEDS_ECN: whatever the sysctl says
	}
	c.rtt = newRTTEstimator(cfg.Profile.RTO)
	c.rto.init(c.clk, c.base, c.onRTO)
	c.pace.init(c.clk, c.base, c.onPace)
	c.delack.init(c.clk, c.base, c.onDelack)
	c.iss = cfg.ISS
	c.sndUna, c.sndNxt = c.iss, c.iss
	c.quick = cfg.Profile.QuickAcks
	if cfg.WindowScaling {
		for c.rcvScale < 14 && cfg.RcvBuf>>c.rcvScale > 0xffff {
			c.rcvScale++
		}
	}
	return c, nil
}

// Handle sets the application's callbacks.
func (c *Conn) Handle(h Handlers) { c.h = h }

// now is ns since base; on the virtual clock it reads the Sim's own
// nanoseconds (clock.Mono), not time.Time arithmetic.
func (c *Conn) now() int64 { return c.mono.Now() }

// clockNow is the clock's Now(). On the virtual clock it is base plus
// now() (exactly the Sim's Now(): a time.Time without a monotonic reading
// adds exactly), built once per instant instead of on every call.
func (c *Conn) clockNow() time.Time {
	if c.mono.Sim() == nil {
		return c.clk.Now()
	}
	if ns := c.now(); ns != c.nowAt || c.nowT.IsZero() {
		c.nowT, c.nowAt = c.base.Add(time.Duration(ns)), ns
	}
	return c.nowT
}

// State is the connection's state.
func (c *Conn) State() State { return c.state }

// Stats returns the counters so far.
func (c *Conn) Stats() Stats { return c.stats }

// Algorithm is the connection's congestion control.
func (c *Conn) Algorithm() cc.Algorithm { return c.alg }

// MSS is the payload size of a full segment this end sends.
func (c *Conn) MSS() int { return c.mss }

// Connect starts an active open: the SYN goes out now.
func (c *Conn) Connect() error {
	if c.state != Closed {
		return fmt.Errorf("tcp: connect in state %v", c.state)
	}
	c.state = SynSent
	c.stats.ActiveOpens++
	c.sendSYN()
	return nil
}

// Listen makes the endpoint wait for a SYN (a passive open).
func (c *Conn) Listen() error {
	if c.state != Closed {
		return fmt.Errorf("tcp: listen in state %v", c.state)
	}
	c.state = Listen
	return nil
}

// Write offers n more bytes of application data and returns how many the
// send buffer took.
func (c *Conn) Write(n int) int {
	if n <= 0 || c.state == Failed {
		return 0
	}
	free := int64(c.cfg.SndBuf) - int64(c.written-c.acked)
	n = int(min(int64(n), max(free, 0)))
	c.written += uint64(n)
	if c.state == Established {
		c.push()
	}
	return n
}

// SendBufferFree is the room left in the send buffer.
func (c *Conn) SendBufferFree() int { return c.cfg.SndBuf - int(c.written-c.acked) }

// Unacked is the bytes written and not yet acknowledged.
func (c *Conn) Unacked() uint64 { return c.written - c.acked }

// synTimers is the schedule of our SYN (active) or SYN-ACK (passive).
func (c *Conn) synTimers() SYNTimers {
	if c.state == SynRcvd {
		return c.cfg.Profile.SYNACK
	}
	return c.cfg.Profile.SYN
}

func (c *Conn) sendSYN() {
	s := c.buildSYN()
	if c.synTx == 0 {
		c.synSentAt = c.now()
	} else {
		c.synRetransmitted = true
		c.stats.TCPSynRetrans++
		c.stats.RetransSegs++
	}
	d, _ := c.synTimers().Interval(c.synTx)
	c.synTx++
	c.sndNxt = c.iss + 1
	c.emit(s)
	c.rto.arm(d)
}

// buildSYN fills the output segment with our SYN or SYN-ACK.
func (c *Conn) buildSYN() *Segment {
	s := c.newSeg()
	s.Seq = c.iss
	s.Flags = FlagSYN
	if c.state == SynRcvd {
		s.Flags |= FlagACK
		s.Ack = c.rcvNxt
		if c.ecnOK {
			s.Flags |= FlagECE
		}
	} else if c.cfg.ECN {
		s.Flags |= FlagECE | FlagCWR
	}
	s.MSS = uint16(c.cfg.MSS)
	if c.cfg.WindowScaling && (c.state == SynSent || c.wsOK) {
		s.WScale = int8(c.rcvScale)
	}
	s.SACKPermitted = c.cfg.SACK && (c.state == SynSent || c.sackOK)
	if c.cfg.Timestamps && (c.state == SynSent || c.tsOK) {
		s.HasTS, s.TSVal, s.TSEcr = true, c.tsNow(), c.tsRecent
	}
	s.Window = uint16(min(c.cfg.RcvBuf, 0xffff))
	return s
}

// tsNow is the timestamp clock: milliseconds, never 0.
func (c *Conn) tsNow() uint32 { return uint32(c.now()/int64(time.Millisecond)) + 1 }

// newSeg clears the output scratch segment.
func (c *Conn) newSeg() *Segment {
	c.out = Segment{SrcPort: c.cfg.LocalPort, DstPort: c.cfg.RemotePort, WScale: -1}
	return &c.out
}

func (c *Conn) emit(s *Segment) {
	c.stats.OutSegs++
	c.cfg.Output(s)
}

// Input hands the endpoint one arriving segment.
func (c *Conn) Input(s *Segment) {
	c.stats.InSegs++
	switch c.state {
	case Listen:
		if s.Flags&(FlagSYN|FlagACK|FlagRST) == FlagSYN {
			c.acceptSYN(s)
		}
		return
	case SynSent:
		if s.Flags&(FlagSYN|FlagACK) == FlagSYN|FlagACK && s.Ack == c.iss+1 {
			c.acceptSYNACK(s)
		}
		return
	case SynRcvd:
		if s.Flags&FlagSYN != 0 {
			if s.Flags&FlagACK == 0 && s.Seq == c.irs {
				// Our SYN-ACK was lost or is late: answer the duplicate
				// SYN with the SYN-ACK again (what Linux and BSD do).
				// The timer keeps its schedule.
				c.stats.TCPSynRetrans++
				c.stats.RetransSegs++
				c.emit(c.buildSYN())
			}
			return
		}
		if s.Flags&FlagACK == 0 || s.Ack != c.iss+1 {
			return
		}
		if !c.synRetransmitted {
			c.rtt.sample(time.Duration(c.now() - c.synSentAt))
			c.updateMinRTT(time.Duration(c.now() - c.synSentAt))
		}
		c.sndUna = c.iss + 1
		c.sndWnd = uint32(s.Window) << c.sndScale
		c.establish()
	case Established:
		if s.Flags&FlagSYN != 0 {
			c.sendAck() // the peer did not get our handshake ACK
			return
		}
	default:
		return
	}
	if c.tsOK && s.HasTS && seqLE(s.Seq, c.rcvNxt) && seqGE(s.TSVal, c.tsRecent) {
		c.tsRecent = s.TSVal
	}
	if s.Flags&FlagACK != 0 {
		c.onAck(s)
	}
	if s.Len > 0 {
		c.onData(s)
	}
}

// negotiate takes the peer's SYN options.
func (c *Conn) negotiate(s *Segment) {
	c.peerMSS = int(s.MSS)
	if c.peerMSS == 0 {
		c.peerMSS = 536 // RFC 9293 §3.7.1 default
	}
	c.sackOK = c.cfg.SACK && s.SACKPermitted
	c.tsOK = c.cfg.Timestamps && s.HasTS
	c.wsOK = c.cfg.WindowScaling && s.WScale >= 0
	if c.wsOK {
		c.sndScale = uint8(min(s.WScale, 14))
	} else {
		c.rcvScale = 0
	}
	c.irs = s.Seq
	c.rcvNxt = s.Seq + 1
	c.rcvEdge = c.rcvNxt
	if s.HasTS {
		c.tsRecent = s.TSVal
	}
	c.sndWnd = uint32(s.Window) // never scaled on a SYN
}

func (c *Conn) acceptSYN(s *Segment) {
	c.negotiate(s)
	c.ecnOK = c.cfg.ECN && s.Flags&(FlagECE|FlagCWR) == FlagECE|FlagCWR
	c.state = SynRcvd
	c.stats.PassiveOpens++
	c.sendSYN()
}

func (c *Conn) acceptSYNACK(s *Segment) {
	c.negotiate(s)
	c.ecnOK = c.cfg.ECN && s.Flags&(FlagECE|FlagCWR) == FlagECE
	if !c.synRetransmitted {
		r := time.Duration(c.now() - c.synSentAt)
		c.rtt.sample(r)
		c.updateMinRTT(r)
	}
	c.sndUna = c.iss + 1
	c.establish()
	c.sendAck()
}

func (c *Conn) establish() {
	c.state = Established
	c.rto.stop()
	c.sndUna, c.sndNxt = c.iss+1, c.iss+1
	c.reducedAt = c.sndNxt
	c.mss = min(c.cfg.MSS, c.peerMSS)
	if c.tsOK {
		c.mss -= 12 // the timestamp option rides on every segment (Linux's mss_cache)
	}
	c.mss = max(c.mss, 1)
	p := &c.cfg.Profile
	c.cc = cc.Conn{Cwnd: p.InitialCwnd, Ssthresh: cc.InfiniteSsthresh, CwndClamp: 1 << 30, MSS: c.mss, ECN: c.ecnOK, Seed: c.cfg.Seed}
	c.cc.Ack.RcvNxt = c.rcvNxt
	if c.synRetransmitted && p.IW1AfterSYNLoss {
		c.cc.Cwnd = 1
	}
	if c.synRetransmitted && !c.rtt.sampled && p.RTO.AfterSYNLoss > 0 {
		c.rtt.base = p.RTO.AfterSYNLoss
	}
	c.fillCC()
	c.alg.Init(&c.cc)
	if c.h.Established != nil {
		c.h.Established()
	}
	c.push()
}

func (c *Conn) updateMinRTT(r time.Duration) {
	if r > 0 && (c.minRTT == 0 || r < c.minRTT) {
		c.minRTT = r
	}
}

func (c *Conn) onRTO() {
	switch c.state {
	case SynSent, SynRcvd:
		c.stats.TCPTimeouts++
		if _, again := c.synTimers().Interval(c.synTx - 1); !again {
			c.fail(ErrHandshakeTimeout)
			return
		}
		c.sendSYN()
		return
	case Established:
	default:
		return
	}
	if c.packetsOut() == 0 {
		return
	}
	c.stats.TCPTimeouts++
	c.rtoRetries++
	if c.rtoRetries > c.cfg.Profile.RTO.Retries {
		c.stats.TCPAbortOnTimeout++
		c.fail(ErrRetransmitTimeout)
		return
	}
	c.enterLoss()
	c.rtt.backOff()
	c.push()
	c.rto.arm(c.rtt.rto())
	if c.h.Timeout != nil {
		c.h.Timeout()
	}
}

func (c *Conn) fail(err error) {
	c.state = Failed
	c.rto.stop()
	c.delack.stop()
	c.pace.stop()
	if c.h.Failed != nil {
		c.h.Failed(err)
	}
}

func (c *Conn) onPace() { c.push() }

func (c *Conn) onDelack() {
	if c.state == Established && c.unacked > 0 {
		c.stats.DelayedACKs++
		c.sendAck()
	}
}

// fillCC refreshes the algorithm's read-only view.
func (c *Conn) fillCC() {
	c.cc.Now = c.clockNow()
	c.cc.MSS = c.mss
	c.cc.InFlight = c.inFlight()
	c.cc.SRTT = c.rtt.srtt
	c.cc.MinRTT = c.minRTT
	c.cc.Delivered = c.delivered
	c.cc.Phase = c.phase
	c.cc.ECN = c.ecnOK
	c.cc.AppLimited = c.appLimited != 0
	c.cc.SndUna, c.cc.SndNxt = c.sndUna, c.sndNxt
	c.cc.Lost = c.lostTotal
}

// Info is a snapshot of the sender's state, for traces.
type Info struct {
	State         State
	Phase         cc.Phase
	Cwnd          uint32 // segments
	Ssthresh      uint32
	MSS           int
	SRTT, RTO     time.Duration
	MinRTT        time.Duration
	InFlight      uint32 // segments
	BytesInFlight uint64
	Delivered     uint64 // segments
	PacingRate    float64
}

// Info returns the sender's state now.
func (c *Conn) Info() Info {
	inf := c.inFlight()
	return Info{
		State: c.state, Phase: c.phase, Cwnd: c.cc.Cwnd, Ssthresh: c.cc.Ssthresh, MSS: c.mss,
		SRTT: c.rtt.srtt, RTO: c.rtt.rto(), MinRTT: c.minRTT, InFlight: inf,
		BytesInFlight: uint64(inf) * uint64(c.mss), Delivered: c.delivered, PacingRate: c.cc.PacingRate,
	}
}
