package sim

import (
	"errors"
	"fmt"

	"github.com/pseudocong/pseudocong/openflow"
)

// control is the OpenFlow connection setup of one simulated switch: the
// openflow package's sans-I/O Channel, one per role, the same state
// machine the live controller's TCP shell and the live switch's
// openflow.Conn drive. The controller's end sends HELLO, FEATURES_REQUEST
// and SET_CONFIG as the live controller does; the switch's end answers
// HELLO and hands FEATURES_REQUEST and SET_CONFIG to the switch core.
//
// The keepalive is off: the simulated channel never loses a message and
// never stalls, so ECHOs would only add events to long runs (and their
// bytes to the channel counters) without ever detecting anything. The
// handshake timeout stays on, so a codec bug that stalls the handshake
// fails the run instead of leaving it waiting.
type control struct {
	sw, ctrl *openflow.Channel
	features *openflow.FeaturesReply
}

// startControl wires both Channels to the switch's two byte channels and
// sends the opening HELLOs; s.connected runs once the controller's end is
// established.
func (s *simSwitch) startControl(onErr func(error)) error {
	failed := func(end string) func(error) {
		return func(err error) { onErr(fmt.Errorf("control channel, %s end: %w", end, err)) }
	}
	s.ctl.sw = openflow.NewChannel(openflow.ChannelConfig{
		Role: openflow.RoleSwitch, Clock: s.clk, Out: s.toCtrl,
		EchoInterval: -1, OnFailed: failed("switch"),
	})
	s.ctl.ctrl = openflow.NewChannel(openflow.ChannelConfig{
		Role: openflow.RoleController, Clock: s.clk, Out: s.toSwitch,
		EchoInterval: -1, OnFailed: failed("controller"),
		OnEstablished: func(e openflow.Established) {
			s.ctl.features = e.Features
			s.connected()
		},
	})
	s.toCtrl.SetFilter(s.ctl.ctrl.Receive)
	s.toSwitch.SetFilter(s.ctl.sw.Receive)
	return errors.Join(s.ctl.sw.Start(), s.ctl.ctrl.Start())
}
