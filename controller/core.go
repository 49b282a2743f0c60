package controller

import (
	"log/slog"
	"math"
	"sync/atomic"
	"time"

	"github.com/pseudocong/pseudocong/internal/clock"
	"github.com/pseudocong/pseudocong/openflow"
)

// Config configures a Core.
type Config struct {
	// App gets the switches and their messages. Required.
	App App
	// Clock times the Packet-In → FLOW_MOD handling. Default: the wall clock.
	Clock clock.Clock
	// Metrics may be nil.
	Metrics *Metrics
	// Logger defaults to discarding.
	Logger *slog.Logger
	// Reorder, when enabled, puts a Tango-style reorderer between each
	// session and its switch: bursts of FLOW_MOD ADDs go out highest
	// priority first (see ReorderConfig). Off by default.
	Reorder ReorderConfig
}

// Core is the transport-independent controller: it wraps each switch in a
// Session that counts messages and measures the
// time from a PACKET_IN to the FLOW_MOD it caused, and it calls the App.
type Core struct {
	app       App
	clock     clock.Clock
	metrics   *Metrics
	log       *slog.Logger
	reorder   ReorderConfig
	connected atomic.Int64
}

// NewCore returns a core for cfg.App.
func NewCore(cfg Config) *Core {
	if cfg.App == nil {
		panic("controller: Config.App is nil")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Wall{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if err := cfg.Reorder.Validate(); err != nil {
		panic("controller: " + err.Error())
	}
	return &Core{app: cfg.App, clock: cfg.Clock, metrics: cfg.Metrics, log: cfg.Logger, reorder: cfg.Reorder}
}

// Metrics returns the core's metrics (possibly nil), so a shell can count
// the messages it exchanges before the session exists (handshake).
func (c *Core) Metrics() *Metrics { return c.metrics }

// Connected is the number of connected switches.
func (c *Core) Connected() int { return int(c.connected.Load()) }

// Connect starts a session for a switch whose handshake is done and tells
// the app. The returned Session is the Switch the app sees.
func (c *Core) Connect(sw Switch) *Session {
	s := &Session{core: c, sw: sw}
	if c.reorder.Enabled() {
		s.ro = newReorderer(sw, c.reorder, c.clock, c.metrics, c.log)
		s.sw = s.ro
	}
	s.packetInAt.Store(noPacketIn)
	s.batchAt.Store(noPacketIn)
	c.connected.Add(1)
	c.metrics.switchConnected(1)
	c.log.Info("switch connected", "dpid", dpidString(sw.DPID()), "ports", len(sw.Features().Ports))
	c.app.SwitchConnected(s)
	return s
}

// noPacketIn marks "no PACKET_IN being handled"; not 0, which is a valid
// reading of a virtual clock that starts at the Unix epoch.
const noPacketIn = math.MinInt64

// Session is one connected switch inside the core. It implements Switch by
// delegating to the transport's Switch, counting and timing on the way.
type Session struct {
	core *Core
	sw   Switch     // the transport's Switch, or ro in front of it
	ro   *reorderer // nil unless Config.Reorder is enabled
	// packetInAt is the clock reading (UnixNano) at which the PACKET_IN
	// being handled arrived, noPacketIn when none is pending. The first
	// FLOW_MOD sent while it is set ends the measurement.
	packetInAt atomic.Int64
	// batchAt is packetInAt for a PACKET_IN handed over by handleAt: the
	// FLOW_MOD it causes is observed when the owner reports the write
	// (flushed), from the read that brought the PACKET_IN to the write
	// that carried the FLOW_MOD, with two clock readings per batch
	// instead of two per message. pendingN FLOW_MODs of the read at
	// pendingAt wait for that write.
	batchAt   atomic.Int64
	pendingAt atomic.Int64
	// batched is set once the transport reports its reads and writes
	// (handleAt, flushed): the hot counters (PACKET_IN in, FLOW_MOD and
	// PACKET_OUT out) then gather here and go to the shared Prometheus
	// counters once per write, not once per message from every switch's
	// goroutine.
	batched atomic.Bool
	// pend packs three counts into one word, so that a PACKET_IN and its
	// FLOW_MOD cost one atomic add each: PACKET_INs in (pendIn), FLOW_MODs
	// out (pendFlowMod), and those of them that are timed (pendTimed).
	pend          atomic.Uint64
	pendPacketOut atomic.Uint64
	disconnected  atomic.Bool
	// appState is the app's per-switch state (SetAppState), so that an app
	// does not look the switch up in a map per message.
	appState any
}

// SetAppState keeps the app's state for this switch; call it from
// SwitchConnected (before any HandleMessage, so the switch's goroutine
// sees it without a lock).
func (s *Session) SetAppState(v any) { s.appState = v }

// AppState is what SetAppState kept (nil if nothing).
func (s *Session) AppState() any { return s.appState }

// DPID is the switch's datapath id.
func (s *Session) DPID() uint64 { return s.sw.DPID() }

// Features is the switch's FEATURES_REPLY.
func (s *Session) Features() *openflow.FeaturesReply { return s.sw.Features() }

// Send sends m to the switch, counting it and, for the first FLOW_MOD
// caused by a PACKET_IN, recording the handling time.
func (s *Session) Send(m openflow.Message) error {
	t := m.MsgType()
	if s.core.metrics == nil {
		return s.sw.Send(m) // nothing to count or time
	}
	if s.batched.Load() {
		switch t {
		case openflow.TypeFlowMod:
			if s.batchAt.Load() != noPacketIn {
				if at := s.batchAt.Swap(noPacketIn); at != noPacketIn {
					if s.pendingAt.Load() != at {
						s.pendingAt.Store(at)
					}
					// The PACKET_IN is counted with its FLOW_MOD: one add.
					if s.pend.Add(pendIn|pendFlowMod|pendTimed)&pendFieldMask >= pendFieldMask/2 {
						s.flushed(s.core.clock.Now().UnixNano())
					}
					return s.sw.Send(m)
				}
			}
			s.pend.Add(pendFlowMod)
		case openflow.TypePacketOut:
			s.pendPacketOut.Add(1)
		default:
			s.core.metrics.MessageOut(t)
		}
	} else {
		s.core.metrics.MessageOut(t)
	}
	// Load before Swap: a plain read, where Swap is a locked instruction.
	if t == openflow.TypeFlowMod && s.packetInAt.Load() != noPacketIn {
		if at := s.packetInAt.Swap(noPacketIn); at != noPacketIn {
			s.core.metrics.observeHandling(time.Duration(s.core.clock.Now().UnixNano() - at))
		}
	}
	return s.sw.Send(m)
}

// Handle processes one message from the switch. m is only borrowed (see
// App).
func (s *Session) Handle(m openflow.Message) {
	t := m.MsgType()
	c := s.core
	c.metrics.MessageIn(t)
	switch t {
	case openflow.TypePacketIn:
		if c.metrics == nil { // nothing to time
			c.app.HandleMessage(s, m)
			return
		}
		s.packetInAt.Store(c.clock.Now().UnixNano())
		c.app.HandleMessage(s, m)
		s.packetInAt.Store(noPacketIn)
		return
	case openflow.TypeEchoRequest, openflow.TypeEchoReply, openflow.TypeHello:
		// The transport's openflow.Channel answers and times these; one
		// that gets here is not the app's business either.
		return
	case openflow.TypeError:
		e := m.(*openflow.ErrorMsg)
		c.metrics.errorReceived(e.Type)
		c.log.Warn("switch reported an error", "dpid", dpidString(s.DPID()), "xid", e.Xid,
			"type", e.Type.String(), "code", openflow.CodeString(e.Type, e.Code))
	}
	c.app.HandleMessage(s, m)
}

// handleAt is Handle for a message its transport read at the clock
// reading at (UnixNano): a FLOW_MOD that a PACKET_IN causes is timed when
// the transport calls flushed after writing it. Without metrics nothing is
// timed.
func (s *Session) handleAt(m openflow.Message, at int64) {
	c := s.core
	if m.MsgType() != openflow.TypePacketIn || c.metrics == nil {
		if m.MsgType() == openflow.TypePacketIn {
			c.app.HandleMessage(s, m)
			return
		}
		s.Handle(m)
		return
	}
	if !s.batched.Load() {
		s.batched.Store(true)
	}
	s.batchAt.Store(at)
	c.app.HandleMessage(s, m)
	// A PACKET_IN answered by a FLOW_MOD was counted by Send, which
	// cleared batchAt; one that was not is counted here.
	if s.batchAt.Load() != noPacketIn && s.batchAt.Swap(noPacketIn) != noPacketIn {
		if s.pend.Add(pendIn)&pendFieldMask >= pendFieldMask/2 {
			// PACKET_INs that caused no write: flush before the field fills.
			s.flushed(c.clock.Now().UnixNano())
		}
	}
}

// The fields of Session.pend, 21 bits each. A field never fills: a write
// flushes them all, and handleAt flushes when PACKET_INs alone reach half
// a field.
const (
	pendFieldBits        = 21
	pendFieldMask uint64 = 1<<pendFieldBits - 1
	pendIn        uint64 = 1
	pendFlowMod   uint64 = 1 << pendFieldBits
	pendTimed     uint64 = 1 << (2 * pendFieldBits)
)

// flushed tells the session that everything it sent has been written at
// the clock reading now (UnixNano): the FLOW_MODs waiting since handleAt
// are observed.
func (s *Session) flushed(now int64) {
	m := s.core.metrics
	if m == nil || !s.batched.Load() {
		return
	}
	p := s.pend.Swap(0)
	if timed := p >> (2 * pendFieldBits) & pendFieldMask; timed > 0 {
		m.observeHandlingN(time.Duration(now-s.pendingAt.Load()), timed)
	}
	m.add(dirIn, openflow.TypePacketIn, p&pendFieldMask)
	m.add(dirOut, openflow.TypeFlowMod, p>>pendFieldBits&pendFieldMask)
	m.add(dirOut, openflow.TypePacketOut, s.pendPacketOut.Swap(0))
}

// Disconnect ends the session and tells the app; later calls do nothing.
func (s *Session) Disconnect() {
	if s.disconnected.Swap(true) {
		return
	}
	c := s.core
	if s.ro != nil {
		s.ro.close() // held ADDs have no switch to go to
	}
	s.flushed(c.clock.Now().UnixNano()) // what the last batch counted
	c.connected.Add(-1)
	c.metrics.switchConnected(-1)
	c.log.Info("switch disconnected", "dpid", dpidString(s.DPID()))
	c.app.SwitchDisconnected(s)
}

// dpidString formats a datapath id as Open vSwitch does (16 hex digits).
func dpidString(d uint64) string {
	const hex = "0123456789abcdef"
	var b [16]byte
	for i := 15; i >= 0; i-- {
		b[i] = hex[d&0xf]
		d >>= 4
	}
	return string(b[:])
}
