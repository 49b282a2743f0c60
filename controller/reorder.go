package controller

import (
	"encoding/binary"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/pseudocong/pseudocong/internal/clock"
	"github.com/pseudocong/pseudocong/openflow"
)

// ReorderConfig configures the Tango-style FLOW_MOD reorderer (Lazaris et
// al., "Tango: Simplifying SDN Control with Automatic Switch Property
// Inference, Abstraction, and Optimization", CoNEXT 2014; issue 11 item 3).
// A switch whose TCAM keeps entries highest priority first (paper 000's
// Pica8) shifts every lower entry when a higher one arrives, so a burst of
// ADDs in ascending priority moves the whole table per rule; the same
// burst sent in descending order moves nothing. The reorderer holds the
// ADDs of a burst for at most Window and sends them highest priority
// first. The zero value is off.
type ReorderConfig struct {
	// Window is how long the first buffered ADD may wait: a burst issued
	// within it is sent sorted. 0 turns the reorderer off.
	Window time.Duration
	// Limit bounds the buffer: when it holds Limit ADDs they are sent at
	// once (counted as an overflow flush). 0 means DefaultReorderLimit.
	Limit int
}

// Defaults of ReorderConfig: a window shorter than a TCAM write burst
// takes on the paper's switch (a FLOW_MOD costs ~1 ms there), and a
// bound that keeps the held bytes small (Limit × at most 64 KiB).
const (
	DefaultReorderWindow = time.Millisecond
	DefaultReorderLimit  = 256
)

// Enabled reports whether the config turns reordering on.
func (c ReorderConfig) Enabled() bool { return c.Window > 0 }

// Validate checks the config.
func (c ReorderConfig) Validate() error {
	if c.Window < 0 {
		return fmt.Errorf("reorder window %v is negative", c.Window)
	}
	if c.Limit < 0 {
		return fmt.Errorf("reorder limit %d is negative", c.Limit)
	}
	return nil
}

// Why a reorderer's buffer was flushed (label cause of
// reorder_flushes_total).
const (
	flushBarrier  = iota // a BARRIER_REQUEST: nothing crosses it
	flushTimer           // the window ran out
	flushFull            // the buffer reached Limit (an overflow)
	flushConflict        // a DELETE or MODIFY overlapping a held ADD
	flushOther           // any other message that may observe the table
	flushClose           // the switch disconnected: the held ADDs are dropped
	numFlushCauses
)

var flushCauseLabels = [numFlushCauses]string{
	flushBarrier: "barrier", flushTimer: "timer", flushFull: "full",
	flushConflict: "conflict", flushOther: "other", flushClose: "disconnect",
}

// reorderMetrics are the reorderer's counters (part of Metrics).
type reorderMetrics struct {
	held      prometheus.Counter
	reordered prometheus.Counter
	dropped   prometheus.Counter
	flushes   [numFlushCauses]prometheus.Counter
}

func newReorderMetrics(ns, sub string) (*reorderMetrics, []prometheus.Collector) {
	m := &reorderMetrics{
		held: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: ns, Subsystem: sub, Name: "reorder_held_total",
			Help: "FLOW_MOD ADDs the reorderer held to sort a burst (--reorder-window).",
		}),
		reordered: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: ns, Subsystem: sub, Name: "reorder_moved_total",
			Help: "Held FLOW_MOD ADDs sent at another position in their burst than the app issued them.",
		}),
		dropped: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: ns, Subsystem: sub, Name: "reorder_dropped_total",
			Help: "Held FLOW_MOD ADDs not sent because the switch disconnected or the send failed.",
		}),
	}
	flushes := prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: ns, Subsystem: sub, Name: "reorder_flushes_total",
		Help: "Reorder bursts sent, by cause: barrier, timer (window ran out), full (buffer limit: an overflow), conflict (overlapping DELETE/MODIFY), other (a message that may observe the table), disconnect (dropped).",
	}, []string{"cause"})
	for c, l := range flushCauseLabels {
		m.flushes[c] = flushes.WithLabelValues(l)
	}
	return m, []prometheus.Collector{m.held, m.reordered, m.dropped, flushes}
}

// heldAdd is one buffered ADD: its encoding in the arena and its sort
// key, small so that sorting moves little (its match, for the overlap
// check of a later DELETE or MODIFY, is reorderer.matches[seq]).
type heldAdd struct {
	key      uint32 // effective priority: exact matches above all
	seq      int32  // arrival position in the burst
	off, end int32  // its bytes in reorderer.arena
}

// reorderer sits between a Session and its transport: it holds FLOW_MOD
// ADDs and sends each burst in descending effective priority. Only ADDs
// move, and only among themselves: every other message is sent in
// program order relative to the ADDs that precede it, except a DELETE or
// MODIFY that overlaps none of them (its effect cannot depend on theirs)
// and a PACKET_OUT that does not consult the table. The sort is stable,
// so ADDs of one priority keep their order (an ADD replacing an earlier
// identical one still wins, CHECK_OVERLAP sees what it saw).
//
// The window's timer runs on the clock, on its own goroutine on the wall
// clock, so one mutex orders it against the app's Sends; the lock is held
// across the transport's Send so that a burst is never interleaved.
type reorderer struct {
	next    Switch
	clk     clock.Clock
	window  time.Duration
	limit   int
	metrics *reorderMetrics
	log     *slog.Logger

	mu      sync.Mutex
	held    []heldAdd
	matches []openflow.Match // by arrival position
	arena   []byte
	timer   clock.Timer
	gen     uint64 // bumped per flush: a stale timer's callback does nothing
	closed  bool
	out     encodedMsg
}

func newReorderer(next Switch, cfg ReorderConfig, clk clock.Clock, m *Metrics, log *slog.Logger) *reorderer {
	limit := cfg.Limit
	if limit <= 0 {
		limit = DefaultReorderLimit
	}
	r := &reorderer{next: next, clk: clk, window: cfg.Window, limit: limit, log: log}
	if m != nil {
		r.metrics = m.reorder
	}
	return r
}

func (r *reorderer) DPID() uint64                      { return r.next.DPID() }
func (r *reorderer) Features() *openflow.FeaturesReply { return r.next.Features() }

// Send holds an ADD or sends m, first flushing the held ADDs when m must
// not overtake them.
func (r *reorderer) Send(m openflow.Message) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return r.next.Send(m)
	}
	switch m.MsgType() {
	case openflow.TypeFlowMod:
		fm, ok := m.(*openflow.FlowMod)
		if !ok { // not ours to parse: keep program order
			return r.flushThen(flushOther, m)
		}
		if fm.Command == openflow.FlowModAdd {
			return r.hold(fm)
		}
		if r.overlapsHeld(&fm.Match) {
			return r.flushThen(flushConflict, m)
		}
		return r.next.Send(m)
	case openflow.TypeBarrierRequest:
		return r.flushThen(flushBarrier, m)
	case openflow.TypePacketOut:
		if po, ok := m.(*openflow.PacketOut); ok && !toTable(po.Actions) {
			return r.next.Send(m)
		}
		return r.flushThen(flushOther, m)
	}
	return r.flushThen(flushOther, m)
}

// hold appends fm to the burst, arming the window on the first one.
func (r *reorderer) hold(fm *openflow.FlowMod) error {
	off := len(r.arena)
	arena, err := fm.AppendBinary(r.arena)
	if err != nil {
		r.arena = arena[:off]
		return fmt.Errorf("reorder: encode FLOW_MOD: %w", err)
	}
	r.arena = arena
	r.held = append(r.held, heldAdd{key: effectivePriority(&fm.Match, fm.Priority), seq: int32(len(r.held)), off: int32(off), end: int32(len(arena))})
	r.matches = append(r.matches, fm.Match)
	if r.metrics != nil {
		r.metrics.held.Inc()
	}
	if len(r.held) >= r.limit {
		return r.flush(flushFull)
	}
	if len(r.held) == 1 {
		gen := r.gen
		r.timer = r.clk.AfterFunc(r.window, func() { r.expire(gen) })
	}
	return nil
}

// expire is the window's timer: it flushes the burst it was armed for.
func (r *reorderer) expire(gen uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.gen != gen || r.closed || len(r.held) == 0 {
		return
	}
	if err := r.flush(flushTimer); err != nil {
		r.log.Warn("reorder: burst not sent", "dpid", dpidString(r.next.DPID()), "err", err)
	}
}

func (r *reorderer) flushThen(cause int, m openflow.Message) error {
	if err := r.flush(cause); err != nil {
		return err
	}
	return r.next.Send(m)
}

// flush sends the held ADDs, highest effective priority first.
func (r *reorderer) flush(cause int) error {
	if len(r.held) == 0 {
		return nil
	}
	r.gen++
	if r.timer != nil {
		r.timer.Stop()
		r.timer = nil
	}
	held := r.held
	// Descending key, arrival order within a key: a stable sort, done as
	// an unstable one on (key, seq), which is a total order.
	slices.SortFunc(held, func(a, b heldAdd) int {
		switch {
		case a.key > b.key:
			return -1
		case a.key < b.key:
			return 1
		}
		return int(a.seq - b.seq)
	})
	var err error
	sent, moved := 0, 0
	for i := range held {
		if int(held[i].seq) != i {
			moved++
		}
		r.out.set(r.arena[held[i].off:held[i].end])
		if err = r.next.Send(&r.out); err != nil {
			break
		}
		sent++
	}
	if m := r.metrics; m != nil {
		m.flushes[cause].Inc()
		m.reordered.Add(float64(moved))
		if sent < len(held) {
			m.dropped.Add(float64(len(held) - sent))
		}
	}
	r.held = held[:0]
	r.matches = r.matches[:0]
	r.arena = r.arena[:0]
	r.out.raw = nil
	if err != nil {
		return fmt.Errorf("reorder: %d of %d held FLOW_MODs not sent: %w", len(held)-sent, len(held), err)
	}
	return nil
}

// close drops the held ADDs (the switch is gone) and stops the timer;
// later Sends go straight through.
func (r *reorderer) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	r.closed = true
	r.gen++
	if r.timer != nil {
		r.timer.Stop()
		r.timer = nil
	}
	if n := len(r.held); n > 0 && r.metrics != nil {
		r.metrics.flushes[flushClose].Inc()
		r.metrics.dropped.Add(float64(n))
	}
	r.held, r.matches, r.arena = nil, nil, nil
}

func (r *reorderer) overlapsHeld(m *openflow.Match) bool {
	for i := range r.matches {
		if matchesOverlap(&r.matches[i], m) {
			return true
		}
	}
	return false
}

// toTable reports whether a PACKET_OUT's actions run the flow table
// (OFPP_TABLE): such a packet must see the ADDs sent before it.
func toTable(actions []openflow.Action) bool {
	for _, a := range actions {
		if o, ok := a.(*openflow.ActionOutput); ok && o.Port == openflow.PortTable {
			return true
		}
	}
	return false
}

// effectivePriority is the order a switch ranks an ADD in: an OpenFlow
// 1.0 exact match (no wildcard bit set) sits above every wildcard entry
// whatever its priority. A match that only the switch's normalisation
// makes exact sorts by its priority field: a possible mis-order that
// costs TCAM moves, never correctness (ADDs of different priorities are
// independent entries).
func effectivePriority(m *openflow.Match, prio uint16) uint32 {
	if m.Wildcards&openflow.WildcardAll == 0 {
		return 1<<16 | uint32(prio)
	}
	return uint32(prio)
}

// Ethernet and IP numbers the overlap check needs: which fields a switch
// compares depends on dl_type and nw_proto (OpenFlow 1.0 §3.4).
const (
	ethIPv4   = 0x0800
	ethARP    = 0x0806
	ipICMP    = 1
	ipTCP     = 6
	ipUDP     = 17
	fullVLAN  = openflow.WildcardDlVlan
	fullProto = openflow.WildcardNwProto
)

// matchesOverlap reports whether some packet may match both a and b. It
// errs toward true: a field counts as telling them apart only when both
// matches fix it and a switch compares it for that packet type (so a
// switch that ignores nw_src of a non-IP match cannot make two "disjoint"
// matches overlap behind our back). A false true only flushes early.
func matchesOverlap(a, b *openflow.Match) bool {
	both := func(bit uint32) bool { return a.Wildcards&bit == 0 && b.Wildcards&bit == 0 }
	if both(openflow.WildcardInPort) && a.InPort != b.InPort ||
		both(openflow.WildcardDlSrc) && a.DlSrc != b.DlSrc ||
		both(openflow.WildcardDlDst) && a.DlDst != b.DlDst ||
		both(fullVLAN) && a.DlVlan != b.DlVlan ||
		both(openflow.WildcardDlType) && a.DlType != b.DlType {
		return false
	}
	if !both(openflow.WildcardDlType) || (a.DlType != ethIPv4 && a.DlType != ethARP) {
		return true // the network fields may not be compared
	}
	if n := min(a.NwSrcPrefixLen(), b.NwSrcPrefixLen()); n > 0 && (a.NwSrc^b.NwSrc)&prefixMask32(n) != 0 {
		return false
	}
	if n := min(a.NwDstPrefixLen(), b.NwDstPrefixLen()); n > 0 && (a.NwDst^b.NwDst)&prefixMask32(n) != 0 {
		return false
	}
	if both(fullProto) && a.NwProto != b.NwProto {
		return false
	}
	if a.DlType != ethIPv4 || !both(fullProto) {
		return true
	}
	switch a.NwProto {
	case ipTCP, ipUDP, ipICMP:
	default:
		return true
	}
	if both(openflow.WildcardTpSrc) && a.TpSrc != b.TpSrc ||
		both(openflow.WildcardTpDst) && a.TpDst != b.TpDst {
		return false
	}
	return true
}

func prefixMask32(n int) uint32 {
	if n >= 32 {
		return ^uint32(0)
	}
	return ^(^uint32(0) >> n)
}

// encodedMsg is a message already encoded: the reorderer's held ADDs go
// to the transport as their bytes, so holding one copies no action
// structs and allocates nothing once the arena has grown.
type encodedMsg struct {
	hdr openflow.Header
	raw []byte
}

func (e *encodedMsg) set(raw []byte) {
	e.raw = raw
	e.hdr = openflow.Header{Version: raw[0], Type: openflow.Type(raw[1]),
		Length: binary.BigEndian.Uint16(raw[2:4]), Xid: binary.BigEndian.Uint32(raw[4:8])}
}

func (e *encodedMsg) Hdr() *openflow.Header { return &e.hdr }
func (e *encodedMsg) GetXid() uint32        { return e.hdr.Xid }
func (e *encodedMsg) SetXid(x uint32) {
	e.hdr.Xid = x
	binary.BigEndian.PutUint32(e.raw[4:8], x)
}
func (e *encodedMsg) MsgType() openflow.Type { return e.hdr.Type }
func (e *encodedMsg) Len() int               { return len(e.raw) }
func (e *encodedMsg) AppendBinary(b []byte) ([]byte, error) {
	return append(b, e.raw...), nil
}
func (e *encodedMsg) DecodeFromBytes(b []byte) error {
	return fmt.Errorf("reorder: an encoded message is send-only")
}
