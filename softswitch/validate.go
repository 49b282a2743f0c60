package softswitch

import (
	"fmt"

	"github.com/pseudocong/pseudocong/openflow"
	"github.com/pseudocong/pseudocong/softswitch/flowtable"
)

// supportedActions is the FEATURES_REPLY actions bitmap: every OpenFlow 1.0
// action type (0..11).
const supportedActions uint32 = 1<<(openflow.ActionTypeEnqueue+1) - 1

func badAction(code openflow.BadActionCode, format string, args ...any) *flowtable.Error {
	return &flowtable.Error{Type: openflow.ErrorTypeBadAction, Code: uint16(code), Msg: fmt.Sprintf(format, args...)}
}

// validateActions checks an action list as Open vSwitch does for OpenFlow
// 1.0: output ports must be physical (1..OFPP_MAX, existing or not: a flow
// may name a port added later) or a reserved port that makes sense
// (TABLE only in PACKET_OUT), VLAN and ToS arguments must be in range, and
// vendor actions are refused.
func validateActions(actions []openflow.Action, packetOut bool) error {
	checkPort := func(p uint16, enqueue bool) error {
		switch {
		case p == 0 || p == openflow.PortNone:
			return badAction(openflow.BadActionBadOutPort, "output to port %s", openflow.PortName(p))
		case p <= openflow.PortMax:
			return nil
		case p == openflow.PortTable && !packetOut:
			return badAction(openflow.BadActionBadOutPort, "output to TABLE is only valid in PACKET_OUT")
		case enqueue && p != openflow.PortInPort && p != openflow.PortLocal:
			return badAction(openflow.BadActionBadOutPort, "enqueue to port %s", openflow.PortName(p))
		case p > openflow.PortMax && p < openflow.PortInPort:
			return badAction(openflow.BadActionBadOutPort, "output to reserved port %d", p)
		}
		return nil
	}
	for _, a := range actions {
		switch a := a.(type) {
		case openflow.ActionOutput:
			if err := checkPort(a.Port, false); err != nil {
				return err
			}
		case openflow.ActionEnqueue:
			if err := checkPort(a.Port, true); err != nil {
				return err
			}
		case openflow.ActionSetVlanVID:
			if a.VlanVID > 0x0fff {
				return badAction(openflow.BadActionBadArgument, "vlan id %d > 4095", a.VlanVID)
			}
		case openflow.ActionSetVlanPCP:
			if a.VlanPCP > 7 {
				return badAction(openflow.BadActionBadArgument, "vlan pcp %d > 7", a.VlanPCP)
			}
		case openflow.ActionSetNwTos:
			if a.Tos&0x03 != 0 {
				return badAction(openflow.BadActionBadArgument, "nw_tos %#x has ECN bits set", a.Tos)
			}
		case openflow.ActionVendor:
			return badAction(openflow.BadActionBadVendor, "vendor action %#x", a.Vendor)
		case openflow.ActionStripVlan, openflow.ActionSetDlSrc, openflow.ActionSetDlDst,
			openflow.ActionSetNwSrc, openflow.ActionSetNwDst, openflow.ActionSetTpSrc, openflow.ActionSetTpDst:
		default:
			return badAction(openflow.BadActionBadType, "action %v", a.Type())
		}
	}
	return nil
}

// checkQueuesLocked refuses an ENQUEUE to a queue its port does not have
// (OFPBAC_BAD_QUEUE), for ports that exist now and have queues: a port
// without queues takes ENQUEUE as OUTPUT, and a flow may name a port
// added later (checked per packet then).
func (s *Switch) checkQueuesLocked(actions []openflow.Action) error {
	for _, a := range actions {
		e, ok := a.(openflow.ActionEnqueue)
		if !ok {
			continue
		}
		ps, ok := s.ports[e.Port]
		if !ok {
			continue
		}
		if n := ps.numQueues(); n > 0 && uint64(e.QueueID) >= uint64(n) {
			return badAction(openflow.BadActionBadQueue, "enqueue to queue %d of port %d, which has queues 0..%d", e.QueueID, e.Port, n-1)
		}
	}
	return nil
}
