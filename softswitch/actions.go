package softswitch

import (
	"time"

	"github.com/pseudocong/pseudocong/openflow"
	"github.com/pseudocong/pseudocong/softswitch/flowtable"
	"github.com/pseudocong/pseudocong/tcam"
)

// Deliver runs a hit's actions now (the Forwarder's output).
func (s *Switch) Deliver(h Hit) {
	s.mu.Lock()
	s.executeLocked(h.InPort, h.Frame, h.Actions, false, s.clk.Now())
	s.unlockAndDrain()
}

// executeLocked applies an action list to a frame, in order, as OpenFlow
// 1.0 says: each OUTPUT sends the packet as modified so far. An empty list
// drops the packet. fromPacketOut allows OUTPUT:TABLE.
//
// Semantics of the reserved ports:
//   - IN_PORT sends back out of the input port; OUTPUT to the input port by
//     number is dropped (OpenFlow 1.0 requires IN_PORT for that);
//   - FLOOD: every port except the input port and ports with NO_FLOOD,
//     PORT_DOWN, NO_FWD or link down; ALL: the same but ignoring NO_FLOOD;
//   - CONTROLLER: PACKET_IN with reason ACTION and max_len bytes;
//   - LOCAL: the port numbered OFPP_LOCAL if one was added;
//   - NORMAL: an L2 learning switch (learn source MAC, forward to the
//     learned port, flood unknown and multicast destinations);
//   - TABLE (PACKET_OUT only): run the packet through the flow table;
//   - ENQUEUE behaves as OUTPUT to its port: queues are not modelled.
func (s *Switch) executeLocked(inPort uint16, frame []byte, actions []openflow.Action, fromPacketOut bool, now time.Time) {
	if len(actions) == 0 {
		s.met.dropped(inPort, dropNoActions)
		return
	}
	pkt := frame
	var lay flowtable.Layout
	layValid := false
	layout := func() flowtable.Layout {
		if !layValid {
			_, lay = flowtable.Extract(pkt, inPort)
			layValid = true
		}
		return lay
	}
	for i, a := range actions {
		last := i == len(actions)-1
		switch a := a.(type) {
		case openflow.ActionOutput:
			s.outputLocked(inPort, pkt, a.Port, a.MaxLen, last, fromPacketOut, now)
		case openflow.ActionEnqueue:
			s.outputLocked(inPort, pkt, a.Port, 0, last, fromPacketOut, now)
		case openflow.ActionSetVlanVID:
			pkt = setVlanTCI(pkt, 0x0fff, a.VlanVID&0x0fff)
			layValid = false
		case openflow.ActionSetVlanPCP:
			pkt = setVlanTCI(pkt, 0xe000, uint16(a.VlanPCP&7)<<13)
			layValid = false
		case openflow.ActionStripVlan:
			pkt = stripVlan(pkt)
			layValid = false
		case openflow.ActionSetDlSrc:
			if len(pkt) >= 12 {
				copy(pkt[6:12], a.Addr[:])
			}
		case openflow.ActionSetDlDst:
			if len(pkt) >= 6 {
				copy(pkt[0:6], a.Addr[:])
			}
		case openflow.ActionSetNwSrc:
			setNwAddr(pkt, layout(), 12, a.Addr)
		case openflow.ActionSetNwDst:
			setNwAddr(pkt, layout(), 16, a.Addr)
		case openflow.ActionSetNwTos:
			setNwTos(pkt, layout(), a.Tos)
		case openflow.ActionSetTpSrc:
			setTpPort(pkt, layout(), 0, a.Port)
		case openflow.ActionSetTpDst:
			setTpPort(pkt, layout(), 2, a.Port)
		default:
			// Validation refuses other actions before they get here.
		}
	}
}

// outputLocked sends pkt to one (reserved) port. When more actions follow
// (!last) every destination gets its own copy, because later set-field
// actions rewrite pkt in place.
func (s *Switch) outputLocked(inPort uint16, pkt []byte, port, maxLen uint16, last, fromPacketOut bool, now time.Time) {
	give := func(final bool) []byte {
		if final {
			return pkt
		}
		return append([]byte(nil), pkt...)
	}
	switch port {
	case openflow.PortInPort:
		if ps, ok := s.ports[inPort]; ok {
			s.transmitLocked(ps, give(last))
		} else {
			s.met.dropped(inPort, dropNoSuchPort)
		}
	case openflow.PortFlood, openflow.PortAll:
		var targets []*portState
		for _, ps := range s.sortedPortsLocked() {
			no := ps.port.No()
			if no == inPort || no == openflow.PortLocal {
				continue
			}
			if port == openflow.PortFlood && !ps.floodable() || !ps.canForward() {
				continue
			}
			targets = append(targets, ps)
		}
		for i, ps := range targets {
			s.transmitLocked(ps, give(last && i == len(targets)-1))
		}
	case openflow.PortController:
		fields, _ := flowtable.Extract(pkt, inPort)
		s.packetInLocked(inPort, give(last), &fields, openflow.PacketInReasonAction, maxLen, now)
	case openflow.PortNormal:
		fields, _ := flowtable.Extract(pkt, inPort)
		s.normalLocked(inPort, give(last), &fields, now)
	case openflow.PortTable:
		if !fromPacketOut {
			s.met.dropped(inPort, dropNoSuchPort)
			return
		}
		fields, _ := flowtable.Extract(pkt, inPort)
		s.lookupLocked(inPort, give(last), &fields, now)
	case openflow.PortNone:
		s.met.dropped(inPort, dropNoSuchPort)
	default:
		if port == inPort {
			s.met.dropped(inPort, dropInPort)
			return
		}
		ps, ok := s.ports[port]
		if !ok {
			s.met.dropped(port, dropNoSuchPort)
			return
		}
		if !ps.canForward() {
			ps.stats.TxDropped++
			s.met.dropped(port, dropNoFwd)
			return
		}
		s.transmitLocked(ps, give(last))
	}
}

// normalLocked is the NORMAL action and the fail-standalone behaviour: an
// L2 learning switch.
func (s *Switch) normalLocked(inPort uint16, frame []byte, f *tcam.Fields, now time.Time) {
	s.learn.learn(f.DlSrc, inPort, now)
	if !isMulticast(f.DlDst) {
		if port, ok := s.learn.lookup(f.DlDst, now); ok {
			if port == inPort {
				s.met.dropped(inPort, dropInPort)
				return
			}
			if ps, ok := s.ports[port]; ok && ps.canForward() {
				s.transmitLocked(ps, frame)
				return
			}
		}
	}
	s.outputLocked(inPort, frame, openflow.PortFlood, 0, true, false, now)
}

// transmitLocked counts the frame and queues it for the port.
func (s *Switch) transmitLocked(ps *portState, frame []byte) {
	no := ps.port.No()
	if s.outboxFullLocked() {
		ps.stats.TxDropped++
		s.met.dropped(no, dropOutbox)
		return
	}
	if ps.filter != nil {
		ps.filter.ToPort(frame)
	}
	ps.stats.TxPackets++
	ps.stats.TxBytes += uint64(len(frame))
	s.met.forwarded(no)
	p := ps.port
	s.emitLocked(func() {
		if err := p.Transmit(frame); err != nil {
			s.txFailed(no, len(frame))
		}
	})
}

// txFailed moves a frame the port refused from tx to tx_dropped.
func (s *Switch) txFailed(no uint16, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ps, ok := s.ports[no]; ok {
		ps.stats.TxPackets--
		ps.stats.TxBytes -= uint64(n)
		ps.stats.TxDropped++
	}
	s.met.dropped(no, dropTxError)
}
