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

// DeliverBatch is Deliver for several hits, in order, under one lock and
// one drain of the outputs: what a Forwarder that releases packets in
// batches (a delay line) calls at a high packet rate.
func (s *Switch) DeliverBatch(hs []Hit) {
	if len(hs) == 0 {
		return
	}
	s.mu.Lock()
	now := s.clk.Now()
	for i := range hs {
		h := &hs[i]
		s.executeLocked(h.InPort, h.Frame, h.Actions, false, now)
	}
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
//   - ENQUEUE puts the frame into one of its port's queues (QueuedPort);
//     an id the port does not have is dropped and counted as tx_dropped
//     (reason no_such_queue) — FLOW_MOD and PACKET_OUT refuse one the port
//     lacks when they arrive, but a port may change later, and IN_PORT is
//     known only per packet. On a port without queues it is OUTPUT.
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
			s.enqueueLocked(inPort, pkt, a.Port, a.QueueID, last)
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
		if ps, ok := s.outPortLocked(inPort, port); ok {
			s.transmitLocked(ps, give(last))
		}
	}
}

// outPortLocked is the port a frame from inPort may leave by number, or
// false after counting why not: OpenFlow 1.0 wants IN_PORT to send back
// out of the input port, and a port may not exist or not forward.
func (s *Switch) outPortLocked(inPort, port uint16) (*portState, bool) {
	if port == inPort {
		s.met.dropped(inPort, dropInPort)
		return nil, false
	}
	ps, ok := s.ports[port]
	if !ok {
		s.met.dropped(port, dropNoSuchPort)
		return nil, false
	}
	if !ps.canForward() {
		ps.stats.TxDropped++
		s.met.dropped(port, dropNoFwd)
		return nil, false
	}
	return ps, true
}

// enqueueLocked is ENQUEUE: pkt into queue of port (a physical port,
// IN_PORT or LOCAL; validation refuses others).
func (s *Switch) enqueueLocked(inPort uint16, pkt []byte, port uint16, queue uint32, last bool) {
	var ps *portState
	if port == openflow.PortInPort {
		var ok bool
		if ps, ok = s.ports[inPort]; !ok {
			s.met.dropped(inPort, dropNoSuchPort)
			return
		}
	} else {
		var ok bool
		if ps, ok = s.outPortLocked(inPort, port); !ok {
			return
		}
	}
	if !last {
		pkt = append([]byte(nil), pkt...)
	}
	n := ps.numQueues()
	if n == 0 {
		s.transmitLocked(ps, pkt)
		return
	}
	if uint64(queue) >= uint64(n) {
		ps.stats.TxDropped++
		s.met.dropped(ps.port.No(), dropNoSuchQueue)
		return
	}
	s.transmitQueueLocked(ps, pkt, int64(queue))
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
func (s *Switch) transmitLocked(ps *portState, frame []byte) { s.transmitQueueLocked(ps, frame, -1) }

// transmitQueueLocked is transmitLocked into one of a QueuedPort's queues
// (queue ≥ 0), or the port's Transmit (queue < 0).
func (s *Switch) transmitQueueLocked(ps *portState, frame []byte, queue int64) {
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
	if ps.txC != nil {
		ps.txC.Inc()
	}
	s.emitTransmitLocked(ps.port, frame, queue)
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
