package sim

import (
	"errors"

	"github.com/pseudocong/pseudocong/openflow"
)

// handshake is the controller side's OpenFlow connection setup of one
// simulated switch: HELLO both ways, FEATURES_REQUEST, FEATURES_REPLY.
// It is the only handshake code of the simulator, kept in this one small
// type so that it can be replaced by the openflow package's sans-I/O
// connection state machine (issue 9, item 3) without touching the rest:
// start sends the opening messages, receive consumes handshake messages
// and calls simSwitch.connected once the features are in.
//
// Not done here (as before): SET_CONFIG, which the live controller sends;
// the switch's defaults are what the live controller sets.
type handshake struct {
	features *openflow.FeaturesReply
	xid      uint32
}

func (h *handshake) hdr(t openflow.Type) openflow.Header {
	h.xid++
	return openflow.Header{Version: openflow.Version, Type: t, Xid: h.xid}
}

// start sends the switch's HELLO to the controller and the controller's
// HELLO and FEATURES_REQUEST to the switch.
func (h *handshake) start(s *simSwitch) error {
	return errors.Join(
		s.toCtrl.Send(&openflow.Hello{Header: openflow.Header{Version: openflow.Version, Type: openflow.TypeHello}}),
		s.toSwitch.Send(&openflow.Hello{Header: h.hdr(openflow.TypeHello)}),
		s.toSwitch.Send(&openflow.FeaturesRequest{Header: h.hdr(openflow.TypeFeaturesRequest)}),
	)
}

// receive handles m if it belongs to the handshake (HELLO, the first
// FEATURES_REPLY, and later FEATURES_REPLYs, which are ignored) and
// reports whether it did.
func (h *handshake) receive(s *simSwitch, m openflow.Message) bool {
	switch msg := m.(type) {
	case *openflow.FeaturesReply:
		if h.features == nil {
			h.features = msg
			s.connected()
		}
		return true
	case *openflow.Hello:
		return true
	}
	return false
}
