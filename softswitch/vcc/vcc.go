package vcc

import (
	"encoding/binary"
	"fmt"
	"sync"
	"time"

	"github.com/pseudocong/pseudocong/internal/clock"
	"github.com/pseudocong/pseudocong/packet"
)

// Defaults of Config.
const (
	DefaultMaxFlows    = 4096
	DefaultIdleTimeout = 60 * time.Second
	// defaultMSS is RFC 9293's default send MSS, used when the peer's
	// SYN-ACK carries no MSS option.
	defaultMSS = 536
	// initialRTT stands in for the smoothed RTT until the handshake gives a
	// sample (only when the SYN-ACK was not timed: a retransmitted SYN).
	initialRTT = time.Millisecond
	// maxWindow caps the vCC window (the largest window TCP can express,
	// 0xffff << 14).
	maxWindow = 0xffff << 14
)

// Config configures a Translator. The zero value is usable.
type Config struct {
	// MaxFlows bounds the flow table. A new flow that finds it full (after
	// idle flows have been expired) passes through untranslated, counted
	// as pass-through "table_full". Default DefaultMaxFlows.
	MaxFlows int
	// IdleTimeout: a flow that has seen no frame for this long is removed
	// (counted as evicted "idle"). Default DefaultIdleTimeout.
	IdleTimeout time.Duration
	// React is how often a flow's window may be cut: ReactPerRTT (the
	// default, the rule) or ReactPerWindow.
	React React
	// Metrics: nil disables metrics.
	Metrics *Metrics
}

// React is the rule that spaces a flow's window cuts.
type React uint8

const (
	// ReactPerRTT cuts at most once per smoothed RTT of the flow, timed
	// from the last cut (the reading of the authors' patch).
	ReactPerRTT React = iota
	// ReactPerWindow cuts at most once per window of data: ECE on ACKs
	// of data sent before the last cut is ignored, as Linux's ECN sender
	// does (CWR state until snd_una passes high_seq, RFC 3168 §6.1.2).
	ReactPerWindow
)

// ParseReact parses "rtt" or "window".
func ParseReact(s string) (React, error) {
	switch s {
	case "rtt":
		return ReactPerRTT, nil
	case "window":
		return ReactPerWindow, nil
	}
	return 0, fmt.Errorf("vcc: react %q: want rtt or window", s)
}

func (r React) String() string {
	if r == ReactPerWindow {
		return "window"
	}
	return "rtt"
}

// Translator is the vCC translation of a set of tenant ports. It is safe
// for concurrent use (one mutex); the switch core calls it under its own
// lock, so the mutex is never contended there.
type Translator struct {
	clk clock.Clock
	cfg Config
	met *Metrics

	mu    sync.Mutex
	pkt   packet.Packet
	flows map[flowKey]*flow
	// lru is a circular doubly linked list through flow.prev/next with a
	// sentinel: most recently used at lru.next, least at lru.prev.
	lru  flow
	free []*flow
	// stats mirrors the counters for tests and callers without Prometheus.
	stats Stats
}

// Stats are the Translator's counters.
type Stats struct {
	TranslatedSYNs  uint64 // non-ECN SYNs rewritten to ask for ECN
	StrippedSYNACKs uint64 // ECE removed from the peer's SYN-ACK
	ECTMarked       uint64 // tenant data segments marked ECT(0)
	ECESeen         uint64 // ACKs to a translated tenant with ECE
	ECEHidden       uint64 // ECE (or CWR) bits cleared before the tenant saw them
	Reductions      uint64 // window reductions (at most one per smoothed RTT)
	WindowRewrites  uint64 // ACKs whose window field was lowered
	CWRSet          uint64 // tenant data segments given CWR after a reduction
	CEEchoed        uint64 // tenant ACKs given ECE for CE marks on the peer's data
	Evicted         map[string]uint64
	PassThrough     map[string]uint64
}

// Pass-through reasons: why a TCP flow or frame is left untouched.
const (
	PassECNTenant = "ecn_tenant" // the tenant's SYN already asks for ECN: never translated twice
	PassTableFull = "table_full" // no room in the flow table
	PassPeerNoECN = "peer_no_ecn"
	PassUntracked = "untracked" // a TCP frame of a flow with no state (opened before, or from the far side)
)

// Removal reasons.
const (
	EvictIdle     = "idle"
	EvictFIN      = "fin"
	EvictRST      = "rst"
	EvictReplaced = "replaced" // a new SYN on the tuple of a tracked flow
)

// New returns a Translator on clk.
func New(clk clock.Clock, cfg Config) *Translator {
	if cfg.MaxFlows <= 0 {
		cfg.MaxFlows = DefaultMaxFlows
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	t := &Translator{clk: clk, cfg: cfg, met: cfg.Metrics, flows: make(map[flowKey]*flow, cfg.MaxFlows)}
	t.lru.next, t.lru.prev = &t.lru, &t.lru
	t.stats.Evicted = map[string]uint64{}
	t.stats.PassThrough = map[string]uint64{}
	return t
}

// Stats returns a copy of the counters.
func (t *Translator) Stats() Stats {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.stats
	s.Evicted, s.PassThrough = map[string]uint64{}, map[string]uint64{}
	for k, v := range t.stats.Evicted {
		s.Evicted[k] = v
	}
	for k, v := range t.stats.PassThrough {
		s.PassThrough[k] = v
	}
	return s
}

// Flows is the number of flows in the table.
func (t *Translator) Flows() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.flows)
}

// flowKey names a flow from the tenant's side.
type flowKey struct {
	tenantIP, remoteIP     [4]byte
	tenantPort, remotePort uint16
}

// flow is one translated connection. Sequence numbers are the tenant's
// (its data), compared with wrap-around arithmetic.
type flow struct {
	key        flowKey
	prev, next *flow
	lastSeen   time.Time

	established bool // the peer agreed to ECN in its SYN-ACK
	synAt       time.Time
	synTimed    bool // the first SYN's time is a valid RTT start

	sndUna, sndNxt uint32 // tenant's oldest unacked, next new byte
	mss            uint32 // the peer's announced MSS
	tenantWS       bool   // the tenant's SYN offered window scaling
	scale          uint8  // shift of the window field in ACKs to the tenant

	srtt     time.Duration
	timing   bool // a segment is being timed for an RTT sample
	timedEnd uint32
	timedAt  time.Time

	throttling bool
	window     uint32 // vCC window in bytes (valid while throttling)
	target     uint32
	growAcc    uint32 // acked bytes towards the next MSS of growth
	lastCut    time.Time
	cutSeq     uint32 // sndNxt at the last cut (ReactPerWindow)
	cwrPending bool   // set CWR on the tenant's next data segment

	ceEcho bool // the peer's data was CE-marked: echo ECE on the tenant's ACKs until the peer sends CWR

	finTenant, finRemote bool
}

// frame offsets of the headers rewritten, found after a decode.
type offsets struct{ ip, tcp int }

// decode parses frame into t.pkt and reports whether it is an unfragmented
// IPv4 TCP segment, with the offsets of its IPv4 and TCP headers.
func (t *Translator) decode(frame []byte) (offsets, bool) {
	if err := t.pkt.DecodeFromBytes(frame); err != nil || !t.pkt.Layers.Has(packet.LayerTCP) || t.pkt.Truncated {
		return offsets{}, false
	}
	ip := packet.EthernetLen
	if t.pkt.Layers.Has(packet.LayerDot1Q) {
		ip += packet.Dot1QLen
	}
	return offsets{ip: ip, tcp: ip + int(t.pkt.IPv4.IHL)*4}, true
}

// FromTenant handles a frame a tenant port received (tenant → fabric). It
// may rewrite frame in place; its length never changes.
func (t *Translator) FromTenant(frame []byte) {
	if !isIPv4TCP(frame) {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	off, ok := t.decode(frame)
	if !ok {
		return
	}
	now := t.clk.Now()
	p := &t.pkt
	key := flowKey{tenantIP: p.IPv4.Src, remoteIP: p.IPv4.Dst, tenantPort: p.TCP.SrcPort, remotePort: p.TCP.DstPort}
	flags := p.TCP.Flags
	if flags&(packet.TCPFlagSYN|packet.TCPFlagACK) == packet.TCPFlagSYN {
		t.tenantSYN(frame, off, key, now)
		return
	}
	f := t.lookup(key, now)
	if f == nil {
		t.pass(PassUntracked)
		return
	}
	if flags&packet.TCPFlagRST != 0 {
		t.remove(f, EvictRST)
		return
	}
	if !f.established {
		return
	}
	seq := p.TCP.Seq
	n := uint32(len(p.Payload))
	if flags&packet.TCPFlagFIN != 0 {
		n++ // FIN takes a sequence number
		f.finTenant = true
	}
	var setFlags, clearFlags packet.TCPFlags
	if len(p.Payload) > 0 {
		end := seq + n
		// New data leaves ECT(0); a retransmission stays Not-ECT, as RFC
		// 3168 §6.1.5 has an ECN sender do (so a vECN flow is no more
		// robust to loss than a native ECN one).
		fresh := !before(seq, f.sndNxt)
		if after(end, f.sndNxt) {
			if !f.timing && !before(seq, f.sndNxt) {
				f.timing, f.timedEnd, f.timedAt = true, end, now
			}
			f.sndNxt = end
		} else if f.timing && before(seq, f.timedEnd) {
			f.timing = false // a retransmission: Karn, no sample from it
		}
		if fresh && p.IPv4.ECN() == packet.ECNNotECT {
			setECN(frame, off, packet.ECNECT0)
			t.stats.ECTMarked++
			t.met.inc(cEctMarked)
		}
		if f.cwrPending {
			f.cwrPending = false
			setFlags |= packet.TCPFlagCWR
			t.stats.CWRSet++
			t.met.inc(cCwrSet)
		}
	} else if flags&packet.TCPFlagFIN != 0 && after(seq+n, f.sndNxt) {
		f.sndNxt = seq + n
	}
	if f.ceEcho && flags&packet.TCPFlagACK != 0 {
		setFlags |= packet.TCPFlagECE
		t.stats.CEEchoed++
		t.met.inc(cCeEchoed)
	}
	// A non-ECN tenant sets neither bit; if it does, the vCC keeps the
	// fabric's view consistent: ECE only from the echo above.
	if flags&packet.TCPFlagECE != 0 && !f.ceEcho {
		clearFlags |= packet.TCPFlagECE
	}
	if setFlags|clearFlags != 0 {
		rewriteFlags(frame, off, flags, flags&^clearFlags|setFlags)
	}
	if f.finTenant && f.finRemote {
		t.remove(f, EvictFIN)
	}
}

// tenantSYN starts translating a non-ECN SYN, or lets an ECN one pass.
func (t *Translator) tenantSYN(frame []byte, off offsets, key flowKey, now time.Time) {
	p := &t.pkt
	if p.TCP.Flags&(packet.TCPFlagECE|packet.TCPFlagCWR) != 0 {
		// An ECN setup SYN (or one a vCC upstream already translated):
		// the tenant speaks ECN itself. Forget any stale state.
		if f := t.flows[key]; f != nil {
			t.remove(f, EvictReplaced)
		}
		t.pass(PassECNTenant)
		return
	}
	f := t.flows[key]
	switch {
	case f != nil && f.established:
		t.remove(f, EvictReplaced) // a new connection on the same tuple
		f = nil
	case f != nil:
		// A retransmitted SYN: translate it again; its SYN-ACK cannot be
		// told from the first one's, so the RTT of the handshake is void.
		f.synTimed = false
		t.touch(f, now)
	}
	if f == nil {
		if f = t.insert(key, now); f == nil {
			t.pass(PassTableFull)
			return
		}
		f.synAt, f.synTimed = now, true
		f.tenantWS = p.TCP.Options.HasWindowScale
		f.sndUna, f.sndNxt = p.TCP.Seq+1, p.TCP.Seq+1
	}
	rewriteFlags(frame, off, p.TCP.Flags, p.TCP.Flags|packet.TCPFlagECE|packet.TCPFlagCWR)
	t.stats.TranslatedSYNs++
	t.met.inc(cTranslatedSYNs)
}

// ToTenant handles a frame the switch transmits on a tenant port (fabric →
// tenant). It may rewrite frame in place; its length never changes.
func (t *Translator) ToTenant(frame []byte) {
	if !isIPv4TCP(frame) {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	off, ok := t.decode(frame)
	if !ok {
		return
	}
	now := t.clk.Now()
	p := &t.pkt
	key := flowKey{tenantIP: p.IPv4.Dst, remoteIP: p.IPv4.Src, tenantPort: p.TCP.DstPort, remotePort: p.TCP.SrcPort}
	f := t.lookup(key, now)
	if f == nil {
		t.pass(PassUntracked)
		return
	}
	flags := p.TCP.Flags
	if flags&packet.TCPFlagRST != 0 {
		t.remove(f, EvictRST)
		return
	}
	if flags&packet.TCPFlagSYN != 0 {
		t.peerSYNACK(frame, off, f, now)
		return
	}
	if !f.established {
		return
	}
	if flags&packet.TCPFlagFIN != 0 {
		f.finRemote = true
	}
	// The peer's own data, ECN-capable because we negotiated ECN: the
	// tenant cannot echo its CE marks, so the vCC does (RFC 3168 §6.1.3
	// receiver behaviour) until the peer's CWR.
	if len(p.Payload) > 0 {
		if flags&packet.TCPFlagCWR != 0 {
			f.ceEcho = false
		}
		if p.IPv4.ECN() == packet.ECNCE {
			f.ceEcho = true
		}
	}
	newFlags := flags &^ (packet.TCPFlagECE | packet.TCPFlagCWR)
	if flags&packet.TCPFlagACK != 0 {
		t.peerACK(frame, off, f, now)
	}
	if newFlags != flags {
		rewriteFlags(frame, off, flags, newFlags)
		t.stats.ECEHidden++
		t.met.inc(cEceHidden)
	}
	if f.finTenant && f.finRemote {
		t.remove(f, EvictFIN)
	}
}

// peerSYNACK ends the handshake of a translated flow: the peer agreed to
// ECN (ECE without CWR) or not.
func (t *Translator) peerSYNACK(frame []byte, off offsets, f *flow, now time.Time) {
	p := &t.pkt
	flags := p.TCP.Flags
	if flags&packet.TCPFlagACK == 0 {
		return // a simultaneous open: not translated further
	}
	if flags&(packet.TCPFlagECE|packet.TCPFlagCWR) != packet.TCPFlagECE {
		// The peer does not do ECN: the flow stays plain non-ECN TCP.
		if !f.established {
			t.remove(f, PassPeerNoECN)
			t.pass(PassPeerNoECN)
		}
		return
	}
	if !f.established {
		f.established = true
		f.mss = defaultMSS
		if p.TCP.Options.HasMSS && p.TCP.Options.MSS > 0 {
			f.mss = uint32(p.TCP.Options.MSS)
		}
		if f.tenantWS && p.TCP.Options.HasWindowScale {
			f.scale = min(p.TCP.Options.WindowScale, 14) // RFC 7323 caps it at 14
		}
		f.srtt = initialRTT
		if f.synTimed {
			f.srtt = max(now.Sub(f.synAt), time.Microsecond)
		}
	}
	rewriteFlags(frame, off, flags, flags&^packet.TCPFlagECE)
	t.stats.StrippedSYNACKs++
	t.met.inc(cStrippedSYNACKs)
}

// peerACK is the window throttling of one ACK towards the tenant.
func (t *Translator) peerACK(frame []byte, off offsets, f *flow, now time.Time) {
	p := &t.pkt
	ack := p.TCP.Ack
	inFlight := f.sndNxt - f.sndUna
	var acked uint32
	if after(ack, f.sndUna) && !after(ack, f.sndNxt) {
		acked = ack - f.sndUna
		f.sndUna = ack
		if f.timing && !before(ack, f.timedEnd) {
			f.timing = false
			sample := now.Sub(f.timedAt)
			f.srtt += (sample - f.srtt) / 8 // RFC 6298's alpha = 1/8
			f.srtt = max(f.srtt, time.Microsecond)
		}
	}
	if p.TCP.Flags&packet.TCPFlagECE != 0 {
		t.stats.ECESeen++
		t.met.inc(cEceSeen)
		var again bool
		if t.cfg.React == ReactPerWindow {
			again = after(ack, f.cutSeq)
		} else {
			again = now.Sub(f.lastCut) >= f.srtt
		}
		if f.lastCut.IsZero() || again {
			base := inFlight
			if f.throttling {
				base = f.target
			}
			f.target = max(base/2, 2*f.mss)
			if !f.throttling || f.window > inFlight {
				// Start the shrink from what the tenant has in flight.
				f.window = max(inFlight, f.target)
			}
			f.throttling, f.lastCut, f.cutSeq, f.cwrPending, f.growAcc = true, now, f.sndNxt, true, 0
			t.stats.Reductions++
			t.met.inc(cReductions)
		}
	}
	if !f.throttling {
		return
	}
	if f.window > f.target {
		// Shrinking: let nothing new out until the flight is down to the
		// target; never reopen what was already closed.
		f.window = min(f.window, max(f.sndNxt-f.sndUna, f.target))
	} else if acked > 0 {
		// At the target: Reno-style additive increase, about one MSS per
		// RTT (acked bytes counted against the window).
		f.growAcc += acked
		if f.growAcc >= f.window {
			f.growAcc -= f.window
			f.window = min(f.window+f.mss, maxWindow)
		}
		f.target = f.window
	}
	// The window field counts from the ACK number in units of 1<<scale.
	// Round up so that a small window never becomes zero (a zero window
	// would stall the tenant into persist probing).
	unit := uint32(1) << f.scale
	field := (f.window + unit - 1) >> f.scale
	if field < uint32(p.TCP.Window) {
		setWindow(frame, off, p.TCP.Window, uint16(field))
		t.stats.WindowRewrites++
		t.met.inc(cWindowRewrites)
	}
}

// Flow table.

func (t *Translator) lookup(key flowKey, now time.Time) *flow {
	t.expire(now, 2)
	f := t.flows[key]
	if f != nil {
		t.touch(f, now)
	}
	return f
}

// expire removes up to n flows idle past the timeout, oldest first (n < 0:
// all of them).
func (t *Translator) expire(now time.Time, n int) {
	for ; n != 0; n-- {
		old := t.lru.prev
		if old == &t.lru || now.Sub(old.lastSeen) < t.cfg.IdleTimeout {
			return
		}
		t.remove(old, EvictIdle)
	}
}

func (t *Translator) insert(key flowKey, now time.Time) *flow {
	if len(t.flows) >= t.cfg.MaxFlows {
		t.expire(now, -1)
		if len(t.flows) >= t.cfg.MaxFlows {
			return nil
		}
	}
	var f *flow
	if n := len(t.free); n > 0 {
		f, t.free = t.free[n-1], t.free[:n-1]
		*f = flow{}
	} else {
		f = &flow{}
	}
	f.key, f.lastSeen = key, now
	t.flows[key] = f
	f.next, f.prev = t.lru.next, &t.lru
	t.lru.next.prev = f
	t.lru.next = f
	t.met.setFlows(len(t.flows))
	return f
}

func (t *Translator) touch(f *flow, now time.Time) {
	f.lastSeen = now
	if t.lru.next == f {
		return
	}
	f.prev.next, f.next.prev = f.next, f.prev
	f.next, f.prev = t.lru.next, &t.lru
	t.lru.next.prev = f
	t.lru.next = f
}

func (t *Translator) remove(f *flow, reason string) {
	delete(t.flows, f.key)
	f.prev.next, f.next.prev = f.next, f.prev
	f.prev, f.next = nil, nil
	t.free = append(t.free, f)
	t.stats.Evicted[reason]++
	t.met.evicted(reason)
	t.met.setFlows(len(t.flows))
}

func (t *Translator) pass(reason string) {
	t.stats.PassThrough[reason]++
	t.met.passed(reason)
}

// Frame rewriting. Each rewrite updates the checksums that cover the
// changed 16-bit word incrementally (RFC 1624), so a segment's checksum
// stays exactly as right as it was.

// isIPv4TCP is the cheap pre-filter: an untagged or single-tagged IPv4
// frame carrying TCP.
func isIPv4TCP(frame []byte) bool {
	if len(frame) < packet.EthernetLen+packet.IPv4MinLen+packet.TCPMinLen {
		return false
	}
	typ, l3 := binary.BigEndian.Uint16(frame[12:]), packet.EthernetLen
	if typ == uint16(packet.EtherTypeVLAN) {
		typ, l3 = binary.BigEndian.Uint16(frame[16:]), l3+packet.Dot1QLen
	}
	return typ == uint16(packet.EtherTypeIPv4) && len(frame) > l3+9 && frame[l3+9] == uint8(packet.IPProtocolTCP)
}

// setECN writes the IPv4 ECN field; the header checksum covers it.
func setECN(frame []byte, off offsets, e packet.ECN) {
	w := frame[off.ip : off.ip+2]
	old := binary.BigEndian.Uint16(w)
	w[1] = w[1]&^3 | uint8(e)
	csum := frame[off.ip+10 : off.ip+12]
	binary.BigEndian.PutUint16(csum, packet.UpdateChecksum16(binary.BigEndian.Uint16(csum), old, binary.BigEndian.Uint16(w)))
}

// rewriteFlags writes the TCP flags (data offset, NS and the eight flags
// share one 16-bit word).
func rewriteFlags(frame []byte, off offsets, old, new packet.TCPFlags) {
	if old == new {
		return
	}
	w := frame[off.tcp+12 : off.tcp+14]
	was := binary.BigEndian.Uint16(w)
	w[0] = w[0]&^1 | uint8(new>>8&1)
	w[1] = uint8(new)
	updateTCPChecksum(frame, off, was, binary.BigEndian.Uint16(w))
}

func setWindow(frame []byte, off offsets, old, new uint16) {
	binary.BigEndian.PutUint16(frame[off.tcp+14:], new)
	updateTCPChecksum(frame, off, old, new)
}

func updateTCPChecksum(frame []byte, off offsets, old, new uint16) {
	csum := frame[off.tcp+16 : off.tcp+18]
	binary.BigEndian.PutUint16(csum, packet.UpdateChecksum16(binary.BigEndian.Uint16(csum), old, new))
}

// Sequence-number comparison modulo 2^32.
func before(a, b uint32) bool { return int32(a-b) < 0 }
func after(a, b uint32) bool  { return int32(a-b) > 0 }

// PortFilter adapts a Translator to softswitch.PortFilter: frames a
// tenant port receives come from the tenant, frames it transmits go to it.
type PortFilter struct{ T *Translator }

// FromPort implements softswitch.PortFilter.
func (p PortFilter) FromPort(frame []byte) { p.T.FromTenant(frame) }

// ToPort implements softswitch.PortFilter.
func (p PortFilter) ToPort(frame []byte) { p.T.ToTenant(frame) }
