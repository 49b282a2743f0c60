package sim

import (
	"errors"
	"fmt"
	"time"

	"github.com/pseudocong/pseudocong/controller"
	"github.com/pseudocong/pseudocong/internal/clock"
	"github.com/pseudocong/pseudocong/openflow"
	"github.com/pseudocong/pseudocong/profile"
	"github.com/pseudocong/pseudocong/softswitch"
	"github.com/pseudocong/pseudocong/softswitch/pipeline"
)

// The control side of a simulated network: one controller host (the
// controller.Core with the reactive app behind one FIFO service queue of
// t_c per Packet-In, Floodlight's, paper §2.2) and, per switch, a control
// connection of two Channels that carry encoded OpenFlow 1.0 bytes with a
// modelled latency. The switches are the same cores the live processes
// run: softswitch.Switch with the modelled pipeline (agent + TCAM cache +
// backing table) attached to its seams.

// controllerHost is the one controller every switch connects to.
type controllerHost struct {
	clk     *clock.Sim
	core    *controller.Core
	service time.Duration

	busyUntil time.Time
	queued    int
	// handling is the arrival time of the Packet-In the app is handling
	// now (zero when none): the first FLOW_MOD it sends ends the paper's
	// controller delay Tc = Tf − Tp.
	handling time.Time
	times    []time.Duration
	stats    ControllerStats
	// connected counts switches whose handshake is done; when the last
	// one is, onConnect runs (the hosts announce themselves then).
	connected, switches int
	onConnect           func()
	err                 error
}

// ControllerStats counts what the controller host did.
type ControllerStats struct {
	PacketIns, FlowMods, PacketOuts uint64
	Dropped                         uint64 // Packet-Ins refused: queue full
	MaxQueue                        int
	Errors                          uint64 // OpenFlow ERRORs from the switches
	// BeforeHandshake counts messages that arrived before FEATURES_REPLY
	// (ignored, as a controller does before the handshake).
	BeforeHandshake uint64
}

// controllerQueueLimit bounds the Packet-Ins waiting for the controller.
const controllerQueueLimit = 1 << 16

func newControllerHost(clk *clock.Sim, prio controller.PriorityStrategy, service time.Duration, reorder controller.ReorderConfig) *controllerHost {
	app := controller.NewReactive(controller.ReactiveConfig{
		Priority: prio,
		// Permanent rules: the paper's tables keep growing (Fig. 5 reaches
		// 4 000 entries over 400 s), so its flows did not idle out.
		IdleTimeout: -1,
	})
	return &controllerHost{clk: clk, service: service,
		core: controller.NewCore(controller.Config{App: app, Clock: clk, Reorder: reorder})}
}

// simSwitch is one switch of the network with its control connection. It
// is the netsim.SwitchNode the topology's links attach to and, at the
// controller's end, the controller.Switch the app sends through.
type simSwitch struct {
	name     string
	dpid     uint64
	clk      *clock.Sim
	sw       *softswitch.Switch
	pl       *pipeline.Pipeline
	ctrl     *controllerHost
	toCtrl   *Channel
	toSwitch *Channel
	swEnd    *switchEnd
	ctl      control
	session  *controller.Session
}

// switchEnd is the switch's side of the control channel
// (softswitch.Channel).
type switchEnd struct{ s *simSwitch }

func (e *switchEnd) Send(m openflow.Message) error { return e.s.toCtrl.Send(m) }
func (e *switchEnd) Role() softswitch.Role         { return softswitch.RoleController }

// newSimSwitch builds a switch with its pipeline and connects it to the
// controller (the handshake starts at once, on the clock). latency is the
// control channel's one-way latency.
func newSimSwitch(ctrl *controllerHost, name string, dpid uint64, prof *profile.Profile, latency time.Duration) (*simSwitch, error) {
	s := &simSwitch{name: name, dpid: dpid, clk: ctrl.clk, ctrl: ctrl}
	onErr := func(err error) { ctrl.err = errors.Join(ctrl.err, fmt.Errorf("switch %s: %w", name, err)) }
	s.toCtrl = NewChannel(ctrl.clk, latency, nil, onErr)
	s.toSwitch = NewChannel(ctrl.clk, latency, nil, onErr)
	s.sw = softswitch.New(ctrl.clk, softswitch.Config{
		DatapathID:    dpid,
		TableCapacity: pipeline.TableCapacity(prof, 0),
		TieBreak:      pipeline.TieBreak(prof),
	})
	var err error
	// The same pipeline options as `pseudocong switch`: with the profile's
	// backing_table.swap_in_upcall (on in the calibrated model,
	// docs/calibration.md) a packet whose rule is only in the backing table
	// first goes up to the local CPU as a miss does, then is swapped in.
	opts := pipeline.Options{Profile: prof, SwapInUpcall: pipeline.SwapInUpcall(prof)}
	if s.pl, err = pipeline.Attach(s.sw, opts); err != nil {
		return nil, fmt.Errorf("sim: switch %s: pipeline: %w", name, err)
	}
	s.swEnd = &switchEnd{s}
	s.toCtrl.SetReceiver(s.receive)
	s.toSwitch.SetReceiver(func(m openflow.Message) { s.sw.HandleMessage(s.swEnd, m) })
	s.sw.Attach(s.swEnd)
	ctrl.switches++
	if err := s.startControl(onErr); err != nil {
		return nil, fmt.Errorf("sim: switch %s: handshake: %w", name, err)
	}
	return s, nil
}

// AddPort implements netsim.SwitchNode: an in-memory port whose frames go
// on the link.
func (s *simSwitch) AddPort(no uint16, name string, tx func(frame []byte)) (func(frame []byte), error) {
	if err := s.sw.AddPort(softswitch.NewMemPort(no, name, softswitch.MemPortMAC(s.dpid, no), tx)); err != nil {
		return nil, fmt.Errorf("sim: %w", err)
	}
	return func(frame []byte) { s.sw.Receive(no, frame) }, nil
}

// DPID, Features and Send make simSwitch the controller.Switch of its
// session.
func (s *simSwitch) DPID() uint64                      { return s.ctl.features.DatapathID }
func (s *simSwitch) Features() *openflow.FeaturesReply { return s.ctl.features }

func (s *simSwitch) Send(m openflow.Message) error {
	c := s.ctrl
	switch m.MsgType() {
	case openflow.TypeFlowMod:
		c.stats.FlowMods++
		if !c.handling.IsZero() {
			c.times = append(c.times, c.clk.Now().Sub(c.handling))
			c.handling = time.Time{}
		}
	case openflow.TypePacketOut:
		c.stats.PacketOuts++
	}
	return s.toSwitch.Send(m)
}

// receive is a message decoded at the controller's end of the channel.
func (s *simSwitch) receive(m openflow.Message) {
	c := s.ctrl
	if _, ok := m.(*openflow.ErrorMsg); ok {
		c.stats.Errors++
	}
	if s.session == nil {
		c.stats.BeforeHandshake++
		return
	}
	if _, ok := m.(*openflow.PacketIn); !ok {
		s.session.Handle(m)
		return
	}
	c.stats.PacketIns++
	if c.queued >= controllerQueueLimit {
		c.stats.Dropped++
		return
	}
	arrived := c.clk.Now()
	start := later(arrived, c.busyUntil)
	c.busyUntil = start.Add(c.service)
	c.queued++
	c.stats.MaxQueue = max(c.stats.MaxQueue, c.queued)
	session := s.session
	c.clk.At(c.busyUntil, func() {
		c.queued--
		c.handling = arrived
		session.Handle(m)
		c.handling = time.Time{}
	})
}

// connected is called once the controller's end of the control channel
// is established (FEATURES_REPLY in, SET_CONFIG sent).
func (s *simSwitch) connected() {
	s.session = s.ctrl.core.Connect(s)
	c := s.ctrl
	c.connected++
	if c.connected == c.switches && c.onConnect != nil {
		c.onConnect()
	}
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
