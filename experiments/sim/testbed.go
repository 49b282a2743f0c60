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

// testbed is paper 000's Fig. 3 on the virtual clock, built from the same
// cores the live processes run: softswitch.Switch with the modelled
// pipeline (agent + TCAM cache + backing table) attached to its seams, and
// controller.Core with the reactive app. The two talk over two Channels
// that carry encoded OpenFlow 1.0 bytes with the profile's latency.
type testbed struct {
	clk      *clock.Sim
	sw       *softswitch.Switch
	pl       *pipeline.Pipeline
	core     *controller.Core
	toCtrl   *Channel
	toSwitch *Channel
	swEnd    *switchEnd
	ctrl     *controllerShell
	err      error
}

// switchEnd is the switch's side of the control channel
// (softswitch.Channel).
type switchEnd struct{ tb *testbed }

func (e *switchEnd) Send(m openflow.Message) error { return e.tb.toCtrl.Send(m) }
func (e *switchEnd) Role() softswitch.Role         { return softswitch.RoleController }

// controllerShell is the controller host: it completes the OpenFlow
// handshake, then serves Packet-Ins one at a time with the controller's
// own processing time t_c (Floodlight's, paper §2.2) before the core and
// its app see them. It is the controller.Switch the app sends through.
type controllerShell struct {
	tb       *testbed
	service  time.Duration
	features *openflow.FeaturesReply
	session  *controller.Session

	busyUntil time.Time
	queued    int
	// handling is the arrival time of the Packet-In the app is handling
	// now (zero when none): the first FLOW_MOD it sends ends the paper's
	// controller delay Tc = Tf − Tp.
	handling time.Time
	times    []time.Duration
	// onConnect runs once the handshake is done (the hosts announce
	// themselves then).
	onConnect func()
	stats     ControllerStats
	xid       uint32
}

// ControllerStats counts what the controller host did.
type ControllerStats struct {
	PacketIns, FlowMods, PacketOuts uint64
	Dropped                         uint64 // Packet-Ins refused: queue full
	MaxQueue                        int
	Errors                          uint64 // OpenFlow ERRORs from the switch
	// BeforeHandshake counts messages that arrived before FEATURES_REPLY
	// (ignored, as a controller does before the handshake).
	BeforeHandshake uint64
}

// controllerQueueLimit bounds the Packet-Ins waiting for the controller.
const controllerQueueLimit = 1 << 16

func (c *controllerShell) DPID() uint64                      { return c.features.DatapathID }
func (c *controllerShell) Features() *openflow.FeaturesReply { return c.features }

func (c *controllerShell) Send(m openflow.Message) error {
	switch m.MsgType() {
	case openflow.TypeFlowMod:
		c.stats.FlowMods++
		if !c.handling.IsZero() {
			c.times = append(c.times, c.tb.clk.Now().Sub(c.handling))
			c.handling = time.Time{}
		}
	case openflow.TypePacketOut:
		c.stats.PacketOuts++
	}
	return c.tb.toSwitch.Send(m)
}

// receive is a message decoded at the controller's end of the channel.
func (c *controllerShell) receive(m openflow.Message) {
	switch msg := m.(type) {
	case *openflow.FeaturesReply:
		if c.session == nil {
			c.features = msg
			c.session = c.tb.core.Connect(c)
			if c.onConnect != nil {
				c.onConnect()
			}
		}
		return
	case *openflow.Hello:
		return
	case *openflow.ErrorMsg:
		c.stats.Errors++
	}
	if c.session == nil {
		c.stats.BeforeHandshake++
		return
	}
	if _, ok := m.(*openflow.PacketIn); !ok {
		c.session.Handle(m)
		return
	}
	c.stats.PacketIns++
	if c.queued >= controllerQueueLimit {
		c.stats.Dropped++
		return
	}
	arrived := c.tb.clk.Now()
	start := later(arrived, c.busyUntil)
	c.busyUntil = start.Add(c.service)
	c.queued++
	c.stats.MaxQueue = max(c.stats.MaxQueue, c.queued)
	c.tb.clk.At(c.busyUntil, func() {
		c.queued--
		c.handling = arrived
		c.session.Handle(m)
		c.handling = time.Time{}
	})
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// newTestbed builds the switch, pipeline, controller and channels, and
// schedules the OpenFlow handshake at the clock's start.
func newTestbed(clk *clock.Sim, prof *profile.Profile, prio controller.PriorityStrategy, service time.Duration) (*testbed, error) {
	tb := &testbed{clk: clk}
	lat := prof.ControllerChannel.Latency
	onErr := func(err error) { tb.err = errors.Join(tb.err, err) }
	tb.toCtrl = NewChannel(clk, lat, nil, onErr)
	tb.toSwitch = NewChannel(clk, lat, nil, onErr)

	tb.sw = softswitch.New(clk, softswitch.Config{
		DatapathID:    1,
		TableCapacity: pipeline.TableCapacity(prof, 0),
		TieBreak:      pipeline.TieBreak(prof),
	})
	var err error
	// The same pipeline options as `pseudocong switch`: with the profile's
	// backing_table.swap_in_upcall (on in the calibrated model,
	// docs/calibration.md) a packet whose rule is only in the backing table
	// first goes up to the local CPU as a miss does, then is swapped in.
	opts := pipeline.Options{Profile: prof, SwapInUpcall: pipeline.SwapInUpcall(prof)}
	if tb.pl, err = pipeline.Attach(tb.sw, opts); err != nil {
		return nil, fmt.Errorf("sim: pipeline: %w", err)
	}
	app := controller.NewReactive(controller.ReactiveConfig{
		Priority: prio,
		// Permanent rules: the paper's tables keep growing (Fig. 5 reaches
		// 4 000 entries over 400 s), so its flows did not idle out.
		IdleTimeout: -1,
	})
	tb.core = controller.NewCore(controller.Config{App: app, Clock: clk})
	tb.swEnd = &switchEnd{tb}
	tb.ctrl = &controllerShell{tb: tb, service: service}
	tb.toCtrl.SetReceiver(tb.ctrl.receive)
	tb.toSwitch.SetReceiver(func(m openflow.Message) { tb.sw.HandleMessage(tb.swEnd, m) })

	// The handshake: HELLO both ways, FEATURES_REQUEST, FEATURES_REPLY.
	hdr := func(t openflow.Type) openflow.Header {
		tb.ctrl.xid++
		return openflow.Header{Version: openflow.Version, Type: t, Xid: tb.ctrl.xid}
	}
	tb.sw.Attach(tb.swEnd)
	if err := errors.Join(
		tb.toCtrl.Send(&openflow.Hello{Header: openflow.Header{Version: openflow.Version, Type: openflow.TypeHello}}),
		tb.toSwitch.Send(&openflow.Hello{Header: hdr(openflow.TypeHello)}),
		tb.toSwitch.Send(&openflow.FeaturesRequest{Header: hdr(openflow.TypeFeaturesRequest)}),
	); err != nil {
		return nil, fmt.Errorf("sim: handshake: %w", err)
	}
	return tb, nil
}
