package controller

import (
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/pseudocong/pseudocong/controller/flowsyntax"
	"github.com/pseudocong/pseudocong/openflow"
)

// ProactiveConfig configures the proactive app.
type ProactiveConfig struct {
	// Flows are pushed, in order, to every switch that connects.
	Flows []flowsyntax.Flow
	// KeepExisting skips the initial delete-all FLOW_MOD. By default the
	// app replaces the switch's table (like `ovs-ofctl replace-flows`), so
	// rules from an earlier run or a reactive session do not linger: a
	// switch in fail-secure mode keeps its flows across reconnects.
	KeepExisting bool
	Logger       *slog.Logger
}

// Proactive pushes a fixed rule set when a switch connects: an optional
// delete-all, one FLOW_MOD per rule, then a BARRIER_REQUEST whose reply
// marks the rules as installed.
//
// OpenFlow 1.0 has no table-miss entry: a packet no rule matches still
// reaches the controller as a PACKET_IN. The proactive app ignores those
// (the packet is dropped), so only the rule file decides forwarding; write a
// low-priority catch-all rule (e.g. "priority=0,actions=drop" or
// "actions=normal") to keep misses off the control channel.
type Proactive struct {
	cfg      ProactiveConfig
	log      *slog.Logger
	xid      atomic.Uint32
	mu       sync.Mutex
	barriers map[Switch]uint32 // switch -> xid of the barrier that ends its push
	// installed counts switches whose barrier reply arrived.
	installed atomic.Int64
}

// NewProactive returns the proactive app.
func NewProactive(cfg ProactiveConfig) *Proactive {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Proactive{cfg: cfg, log: cfg.Logger, barriers: make(map[Switch]uint32)}
}

// Installed is the number of rule pushes that a switch confirmed with a
// barrier reply (one per connection).
func (p *Proactive) Installed() int { return int(p.installed.Load()) }

func (p *Proactive) nextXid() uint32 {
	for {
		if x := p.xid.Add(1); x != 0 {
			return x
		}
	}
}

func (p *Proactive) SwitchConnected(sw Switch) {
	dpid := dpidString(sw.DPID())
	if !p.cfg.KeepExisting {
		del := openflow.FlowMod{
			Header:   openflow.Header{Xid: p.nextXid()},
			Match:    openflow.MatchAll(),
			Command:  openflow.FlowModDelete,
			BufferID: openflow.NoBuffer,
			OutPort:  openflow.PortNone,
		}
		if err := sw.Send(&del); err != nil {
			p.log.Warn("proactive: delete-all not sent", "dpid", dpid, "err", err)
			return
		}
	}
	for i := range p.cfg.Flows {
		if err := sw.Send(p.cfg.Flows[i].FlowMod(p.nextXid())); err != nil {
			p.log.Warn("proactive: flow-mod not sent", "dpid", dpid, "rule", i+1, "err", err)
			return
		}
	}
	xid := p.nextXid()
	p.mu.Lock()
	p.barriers[sw] = xid
	p.mu.Unlock()
	if err := sw.Send(&openflow.BarrierRequest{Header: openflow.Header{Xid: xid}}); err != nil {
		p.log.Warn("proactive: barrier not sent", "dpid", dpid, "err", err)
		return
	}
	p.log.Info("proactive: rules sent", "dpid", dpid, "rules", len(p.cfg.Flows))
}

func (p *Proactive) SwitchDisconnected(sw Switch) {
	p.mu.Lock()
	delete(p.barriers, sw)
	p.mu.Unlock()
}

func (p *Proactive) HandleMessage(sw Switch, m openflow.Message) {
	// PACKET_INs are ignored on purpose (see Proactive); switch ERRORs
	// for our FLOW_MODs are logged by the core.
	if m.MsgType() != openflow.TypeBarrierReply {
		return
	}
	p.mu.Lock()
	want, ok := p.barriers[sw]
	done := ok && want == m.GetXid()
	if done {
		delete(p.barriers, sw)
	}
	p.mu.Unlock()
	if done {
		p.installed.Add(1)
		p.log.Info("proactive: rules installed", "dpid", dpidString(sw.DPID()), "rules", len(p.cfg.Flows))
	}
}
