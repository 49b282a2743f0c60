package sim

import (
	"fmt"
	"time"

	"github.com/pseudocong/pseudocong/internal/clock"
	"github.com/pseudocong/pseudocong/openflow"
	"github.com/pseudocong/pseudocong/softswitch/flowtable"
)

// Priorities is the reactive app's priority strategy (paper §2.3): the
// priority of the k-th rule it installs (k = 0, 1, ...).
type Priorities struct {
	Pattern string // constant, ascending, descending
	Start   uint16 // priority of rule 0
}

// Of returns the priority of rule k.
func (p Priorities) Of(k int) (uint16, error) {
	var v int
	switch p.Pattern {
	case "constant":
		v = int(p.Start)
	case "ascending":
		v = int(p.Start) + k
	case "descending":
		v = int(p.Start) - k
	default:
		return 0, fmt.Errorf("unknown priority pattern %q", p.Pattern)
	}
	if v < 0 || v > 0xffff {
		return 0, fmt.Errorf("priority pattern %s from %d: rule %d falls outside 0..65535", p.Pattern, p.Start, k)
	}
	return uint16(v), nil
}

// simController is the controller host of the sim backend: a FIFO server
// with ServiceTime per Packet-In (Floodlight's own processing, paper §2.2:
// 1–2 ms per flow) in front of a reactive forwarding app that answers each
// Packet-In with an exact-match FLOW_MOD (and a PACKET_OUT when the switch
// did not buffer the packet).
type simController struct {
	clk       *clock.Sim
	toSwitch  *Channel
	service   time.Duration
	prio      Priorities
	hostPorts map[[6]byte]uint16
	queue     int
	maxQueue  int
	busyUntil time.Time
	installed int
	xid       uint32

	// Times holds, per Packet-In in arrival order, Tc = Flow-Mod sent −
	// Packet-In received (the paper's controller delay).
	Times []time.Duration
	stats ControllerStats
}

// ControllerStats counts the controller's work.
type ControllerStats struct {
	PacketIns, FlowMods, PacketOuts uint64
	Dropped                         uint64 // Packet-Ins refused: queue full
	Errors                          uint64 // priority overflow, no route
	MaxQueue                        int
}

// controllerQueueLimit bounds the Packet-Ins waiting for the controller.
const controllerQueueLimit = 1 << 16

func newSimController(clk *clock.Sim, toSwitch *Channel, service time.Duration, prio Priorities, hostPorts map[[6]byte]uint16) *simController {
	return &simController{clk: clk, toSwitch: toSwitch, service: service, prio: prio,
		hostPorts: hostPorts, maxQueue: controllerQueueLimit}
}

// fromSwitch handles a message arriving on the control channel.
func (c *simController) fromSwitch(m openflow.Message) {
	pin, ok := m.(*openflow.PacketIn)
	if !ok {
		return
	}
	c.stats.PacketIns++
	if c.queue >= c.maxQueue {
		c.stats.Dropped++
		return
	}
	now := c.clk.Now()
	start := now
	if c.busyUntil.After(start) {
		start = c.busyUntil
	}
	c.busyUntil = start.Add(c.service)
	c.queue++
	c.stats.MaxQueue = max(c.stats.MaxQueue, c.queue)
	data := append([]byte(nil), pin.Data...)
	p := *pin
	p.Data = data
	c.clk.At(c.busyUntil, func() {
		c.queue--
		c.handle(&p)
		c.Times = append(c.Times, c.clk.Now().Sub(now))
	})
}

// handle is the reactive app: route the packet to the port of its
// destination MAC with an exact-match rule.
func (c *simController) handle(pin *openflow.PacketIn) {
	f, _ := flowtable.Extract(pin.Data, pin.InPort)
	out, ok := c.hostPorts[f.DlDst]
	if !ok {
		c.stats.Errors++
		return
	}
	prio, err := c.prio.Of(c.installed)
	if err != nil {
		c.stats.Errors++
		return
	}
	c.installed++
	actions := []openflow.Action{openflow.ActionOutput{Port: out, MaxLen: 0}}
	c.xid++
	fm := &openflow.FlowMod{
		Header:   openflow.Header{Xid: c.xid},
		Match:    flowtable.MatchFromFields(f),
		Command:  openflow.FlowModAdd,
		Priority: prio,
		BufferID: pin.BufferID,
		OutPort:  openflow.PortNone,
		Actions:  actions,
	}
	if err := c.toSwitch.Send(fm); err != nil {
		c.stats.Errors++
		return
	}
	c.stats.FlowMods++
	if pin.BufferID == openflow.NoBuffer {
		c.xid++
		po := &openflow.PacketOut{Header: openflow.Header{Xid: c.xid}, BufferID: openflow.NoBuffer,
			InPort: pin.InPort, Actions: actions, Data: pin.Data}
		if err := c.toSwitch.Send(po); err == nil {
			c.stats.PacketOuts++
		}
	}
}
