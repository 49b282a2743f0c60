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
}

// Core is the transport-independent controller: it wraps each switch in a
// Session that counts messages and measures the
// time from a PACKET_IN to the FLOW_MOD it caused, and it calls the App.
type Core struct {
	app       App
	clock     clock.Clock
	metrics   *Metrics
	log       *slog.Logger
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
	return &Core{app: cfg.App, clock: cfg.Clock, metrics: cfg.Metrics, log: cfg.Logger}
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
	s.packetInAt.Store(noPacketIn)
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
	sw   Switch
	// packetInAt is the clock reading (UnixNano) at which the PACKET_IN
	// being handled arrived, noPacketIn when none is pending. The first
	// FLOW_MOD sent while it is set ends the measurement.
	packetInAt   atomic.Int64
	disconnected atomic.Bool
}

// DPID is the switch's datapath id.
func (s *Session) DPID() uint64 { return s.sw.DPID() }

// Features is the switch's FEATURES_REPLY.
func (s *Session) Features() *openflow.FeaturesReply { return s.sw.Features() }

// Send sends m to the switch, counting it and, for the first FLOW_MOD
// caused by a PACKET_IN, recording the handling time.
func (s *Session) Send(m openflow.Message) error {
	t := m.MsgType()
	if t == openflow.TypeFlowMod {
		if at := s.packetInAt.Swap(noPacketIn); at != noPacketIn {
			s.core.metrics.observeHandling(time.Duration(s.core.clock.Now().UnixNano() - at))
		}
	}
	s.core.metrics.MessageOut(t)
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

// Disconnect ends the session and tells the app; later calls do nothing.
func (s *Session) Disconnect() {
	if s.disconnected.Swap(true) {
		return
	}
	c := s.core
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
