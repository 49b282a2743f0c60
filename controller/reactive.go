package controller

import (
	"log/slog"
	"sync"
	"time"

	"github.com/pseudocong/pseudocong/openflow"
)

// ReactiveConfig configures the reactive app.
type ReactiveConfig struct {
	// Priority chooses flow priorities (default constant).
	Priority PriorityStrategy
	// ConstantPriority is the priority under PriorityConstant (default
	// DefaultConstantPriority, 100).
	ConstantPriority uint16
	// IdleTimeout of installed flows, rounded down to seconds (default 5 s,
	// Floodlight's; negative = permanent).
	IdleTimeout time.Duration
	// HardTimeout of installed flows (default 0 = none).
	HardTimeout time.Duration
	// MaxMACs bounds each switch's MAC table (default 1<<20); MACs beyond it
	// are not learned and are counted in mac_learning_dropped_total.
	MaxMACs int
	// Cookie marks the installed flows (default ReactiveCookie).
	Cookie  uint64
	Metrics *Metrics
	Logger  *slog.Logger
}

// DefaultIdleTimeout is the idle timeout of reactive flows, Floodlight's.
const DefaultIdleTimeout = 5 * time.Second

// ReactiveCookie is the default cookie of reactive flows ("pc" + 1), so
// `ovs-ofctl dump-flows` tells them apart from proactive ones.
const ReactiveCookie uint64 = 0x7063_0001

// Reactive is L2 learning plus a per-flow installer, as paper 000's
// Floodlight behaved: every PACKET_IN teaches the switch's MAC table
// dl_src → in_port; a frame to a known unicast MAC gets a FLOW_MOD for its
// flow (see flowMatch) that also releases the buffered packet, or a
// PACKET_OUT with the data when the switch did not buffer it; a frame to
// an unknown or multicast MAC is flooded with a PACKET_OUT.
type Reactive struct {
	cfg      ReactiveConfig
	idle     uint16
	hard     uint16
	log      *slog.Logger
	switches sync.Map // Switch -> *reactiveSwitch
}

// reactiveSwitch is one switch's state. Only that switch's goroutine
// touches it (see App), so it needs no lock. The message structs are
// scratch space reused for every PACKET_IN (Switch.Send encodes at once).
type reactiveSwitch struct {
	macs      *macTable // macKey(MAC) -> port
	prio      priorityCounter
	flowMod   openflow.FlowMod
	packetOut openflow.PacketOut
	actions   [1]openflow.Action
	// output is the one action; actions[0] points at it, so that setting
	// its port does not box a new value into the interface per message.
	output openflow.ActionOutput
}

// NewReactive returns the reactive app.
func NewReactive(cfg ReactiveConfig) *Reactive {
	if cfg.ConstantPriority == 0 {
		cfg.ConstantPriority = DefaultConstantPriority
	}
	if cfg.IdleTimeout == 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.MaxMACs <= 0 {
		cfg.MaxMACs = 1 << 20
	}
	if cfg.Cookie == 0 {
		cfg.Cookie = ReactiveCookie
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Reactive{cfg: cfg, idle: timeoutSeconds(cfg.IdleTimeout), hard: timeoutSeconds(cfg.HardTimeout), log: cfg.Logger}
}

// timeoutSeconds converts a flow timeout to OpenFlow's whole seconds,
// clamped to 16 bits; zero or negative means permanent.
func timeoutSeconds(d time.Duration) uint16 {
	if d <= 0 {
		return openflow.FlowPermanent
	}
	return uint16(min(d/time.Second, 0xffff))
}

func (r *Reactive) SwitchConnected(sw Switch) {
	st := &reactiveSwitch{
		macs: newMACTable(),
		prio: newPriorityCounter(r.cfg.Priority, r.cfg.ConstantPriority),
	}
	st.actions[0] = &st.output
	// Fixed for every FLOW_MOD; packetIn sets the rest.
	st.flowMod = openflow.FlowMod{
		Header:  openflow.Header{Version: openflow.Version, Type: openflow.TypeFlowMod},
		Cookie:  r.cfg.Cookie,
		Command: openflow.FlowModAdd, IdleTimeout: r.idle, HardTimeout: r.hard,
		OutPort: openflow.PortNone, Actions: st.actions[:],
	}
	if s, ok := sw.(*Session); ok {
		s.SetAppState(st) // found without a map lookup per message
	}
	r.switches.Store(sw, st)
}

func (r *Reactive) SwitchDisconnected(sw Switch) { r.switches.Delete(sw) }

func (r *Reactive) HandleMessage(sw Switch, m openflow.Message) {
	pi, ok := m.(*openflow.PacketIn)
	if !ok {
		return
	}
	if s, ok := sw.(*Session); ok {
		if st, ok := s.AppState().(*reactiveSwitch); ok {
			r.packetIn(sw, st, pi)
			return
		}
	}
	v, ok := r.switches.Load(sw)
	if !ok {
		return
	}
	r.packetIn(sw, v.(*reactiveSwitch), pi)
}

func (r *Reactive) packetIn(sw Switch, st *reactiveSwitch, pi *openflow.PacketIn) {
	match, ok := flowMatch(pi.Data, pi.InPort)
	if !ok {
		r.log.Debug("packet-in too short for an Ethernet header", "dpid", dpidString(sw.DPID()), "len", len(pi.Data))
		return
	}
	if !isMulticast(match.DlSrc) {
		r.learn(st, match.DlSrc, pi.InPort)
	}
	outPort, known := uint16(0), false
	if !isMulticast(match.DlDst) {
		outPort, known = st.macs.Get(macKey(match.DlDst))
	}
	if !known {
		r.sendPacketOut(sw, st, pi, openflow.PortFlood)
		return
	}
	if outPort == pi.InPort {
		// The destination sits behind the port the frame came from: the
		// switch must not send it back (Floodlight drops it too).
		return
	}
	// Only what changes per message is written: assigning a whole FlowMod
	// (it holds a slice) costs a write-barriered copy per PACKET_IN.
	fm := &st.flowMod
	fm.Xid = pi.Xid
	fm.Match = match
	fm.Priority = st.prio.Next()
	fm.BufferID = pi.BufferID
	st.output = openflow.ActionOutput{Port: outPort}
	if err := sw.Send(fm); err != nil {
		r.log.Debug("flow-mod not sent", "dpid", dpidString(sw.DPID()), "err", err)
		return
	}
	if pi.BufferID == openflow.NoBuffer {
		r.sendPacketOut(sw, st, pi, outPort)
	}
}

// learn records mac → port, within the table bound.
func (r *Reactive) learn(st *reactiveSwitch, mac [6]byte, port uint16) {
	k := macKey(mac)
	if old, ok := st.macs.Get(k); ok {
		if old != port {
			st.macs.Set(k, port) // the host moved
		}
		return
	}
	if st.macs.Len() >= r.cfg.MaxMACs {
		r.cfg.Metrics.macDropped()
		return
	}
	st.macs.Set(k, port)
}

// macKey packs a MAC into a map key that hashes as one word (a [6]byte key
// costs a generic hash and compare per lookup, two lookups per PACKET_IN).
func macKey(m [6]byte) uint64 {
	return uint64(m[0])<<40 | uint64(m[1])<<32 | uint64(m[2])<<24 | uint64(m[3])<<16 | uint64(m[4])<<8 | uint64(m[5])
}

// sendPacketOut releases the packet of pi through port: by buffer id when
// the switch buffered it, else with the data, unless the switch sent only
// a truncated copy (sending that would put a cut frame on the wire).
func (r *Reactive) sendPacketOut(sw Switch, st *reactiveSwitch, pi *openflow.PacketIn, port uint16) {
	po := &st.packetOut
	*po = openflow.PacketOut{
		Header:   openflow.Header{Version: openflow.Version, Type: openflow.TypePacketOut, Xid: pi.Xid},
		BufferID: pi.BufferID,
		InPort:   pi.InPort,
	}
	if pi.BufferID == openflow.NoBuffer {
		if len(pi.Data) < int(pi.TotalLen) {
			r.log.Debug("unbuffered packet-in truncated; not releasing it", "dpid", dpidString(sw.DPID()),
				"len", len(pi.Data), "total_len", pi.TotalLen)
			return
		}
		po.Data = pi.Data
	}
	st.output = openflow.ActionOutput{Port: port}
	po.Actions = st.actions[:]
	if err := sw.Send(po); err != nil {
		r.log.Debug("packet-out not sent", "dpid", dpidString(sw.DPID()), "err", err)
	}
}
