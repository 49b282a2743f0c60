package softswitch

import (
	"github.com/pseudocong/pseudocong/openflow"
	"github.com/pseudocong/pseudocong/softswitch/flowtable"
)

// HandleMessage processes one message received on ch. Messages of one
// channel must be passed in arrival order, one at a time (the shell's
// per-connection goroutine does that); channels may run concurrently.
// A bad request becomes an OpenFlow ERROR on ch, never a panic.
func (s *Switch) HandleMessage(ch Channel, m openflow.Message) {
	s.mu.Lock()
	defer s.unlockAndDrain()
	hdr := func(t openflow.Type) openflow.Header {
		return openflow.Header{Version: openflow.Version, Type: t, Xid: m.GetXid()}
	}
	switch m := m.(type) {
	case *openflow.Hello, *openflow.EchoRequest, *openflow.EchoReply:
		// The connection's openflow.Channel answers and times these (the
		// handshake and the keepalive are written once, there).
	case *openflow.ErrorMsg:
		// Counted always, logged at most once a second: a peer can send
		// ERRORs as fast as it likes.
		s.met.errorReceived(ch.Role(), m.Type)
		if ok, suppressed := s.peerErrLog.Allow(); ok {
			s.log.Info("error from peer", "role", ch.Role(), "err", m.Error(), "suppressed", suppressed)
		}
	case *openflow.Vendor:
		s.sendErrorLocked(ch, m, openflow.ErrorTypeBadRequest, uint16(openflow.BadRequestBadVendor))
	case *openflow.FeaturesRequest:
		s.sendLocked(ch, s.featuresReplyLocked(m.Xid))
	case *openflow.GetConfigRequest:
		s.sendLocked(ch, &openflow.GetConfigReply{Header: hdr(openflow.TypeGetConfigReply),
			Flags: s.configFlags, MissSendLen: s.missSendLen})
	case *openflow.SetConfig:
		// FRAG_REASM is not supported: such fragments are treated as
		// FRAG_NORMAL (Open vSwitch does the same).
		s.configFlags = m.Flags & openflow.ConfigFragMask
		s.missSendLen = m.MissSendLen
	case *openflow.PacketOut:
		s.packetOutLocked(ch, m)
	case *openflow.FlowMod:
		s.handleFlowModLocked(ch, m)
	case *openflow.PortMod:
		s.portModLocked(ch, m)
	case *openflow.StatsRequest:
		s.statsLocked(ch, m)
	case *openflow.BarrierRequest:
		inst := s.inst
		s.emitLocked(func() { inst.Barrier(ch, m) })
	case *openflow.QueueGetConfigRequest:
		if _, ok := s.ports[m.Port]; !ok {
			s.sendErrorLocked(ch, m, openflow.ErrorTypeQueueOpFailed, uint16(openflow.QueueOpFailedBadPort))
			return
		}
		s.sendLocked(ch, s.queueConfigLocked(hdr(openflow.TypeQueueGetConfigReply), m.Port))
	default:
		// Switch-to-controller messages (PACKET_IN, FEATURES_REPLY, ...).
		s.sendErrorLocked(ch, m, openflow.ErrorTypeBadRequest, uint16(openflow.BadRequestBadType))
	}
}

// featuresReplyLocked describes the datapath and its ports.
func (s *Switch) featuresReplyLocked(xid uint32) *openflow.FeaturesReply {
	ports := s.sortedPortsLocked()
	r := &openflow.FeaturesReply{
		Header:       openflow.Header{Version: openflow.Version, Type: openflow.TypeFeaturesReply, Xid: xid},
		DatapathID:   s.cfg.DatapathID,
		NBuffers:     uint32(s.buffers.size()),
		NTables:      1,
		Capabilities: openflow.CapFlowStats | openflow.CapTableStats | openflow.CapPortStats | openflow.CapQueueStats | openflow.CapARPMatchIP,
		Actions:      supportedActions,
		Ports:        make([]openflow.PhyPort, 0, len(ports)),
	}
	// A FEATURES_REPLY must fit one message: at most 1364 ports.
	for _, p := range ports {
		if r.Len()+openflow.PhyPortLen > openflow.MaxMessageLen {
			break
		}
		r.Ports = append(r.Ports, p.phyPort())
	}
	return r
}

// packetOutLocked executes a PACKET_OUT: its actions on the buffered
// packet (buffer_id) or on the packet it carries.
func (s *Switch) packetOutLocked(ch Channel, m *openflow.PacketOut) {
	err := validateActions(m.Actions, true)
	if err == nil {
		err = s.checkQueuesLocked(m.Actions)
	}
	if err != nil {
		s.replyErrorLocked(ch, m, err)
		return
	}
	if m.InPort != openflow.PortNone && m.InPort != openflow.PortController && m.InPort != openflow.PortLocal &&
		(m.InPort == 0 || m.InPort > openflow.PortMax) {
		s.replyErrorLocked(ch, m, &flowtable.Error{Type: openflow.ErrorTypeBadRequest,
			Code: uint16(openflow.BadRequestEPerm), Msg: "PACKET_OUT in_port"})
		return
	}
	var frame []byte
	if m.BufferID != openflow.NoBuffer {
		f, _, code, ok := s.buffers.take(m.BufferID)
		if !ok {
			s.sendErrorLocked(ch, m, openflow.ErrorTypeBadRequest, uint16(code))
			return
		}
		frame = f
	} else {
		// The decoded data aliases the connection's read buffer; actions
		// rewrite the frame in place, so work on a copy.
		frame = append([]byte(nil), m.Data...)
	}
	s.executeLocked(m.InPort, frame, m.Actions, true, s.clk.Now())
}

// portModLocked changes a port's config bits (PORT_DOWN, NO_FLOOD, NO_FWD,
// NO_PACKET_IN, NO_RECV, NO_STP, NO_RECV_STP) and advertised features.
func (s *Switch) portModLocked(ch Channel, m *openflow.PortMod) {
	ps, ok := s.ports[m.PortNo]
	if !ok {
		s.sendErrorLocked(ch, m, openflow.ErrorTypePortModFailed, uint16(openflow.PortModFailedBadPort))
		return
	}
	if m.HWAddr != ps.port.HWAddr() {
		s.sendErrorLocked(ch, m, openflow.ErrorTypePortModFailed, uint16(openflow.PortModFailedBadHwAddr))
		return
	}
	const settable = openflow.PortConfigPortDown | openflow.PortConfigNoSTP | openflow.PortConfigNoRecv |
		openflow.PortConfigNoRecvSTP | openflow.PortConfigNoFlood | openflow.PortConfigNoFwd | openflow.PortConfigNoPacketIn
	mask := m.Mask & settable
	old, oldAdv := ps.config, ps.adv
	ps.config = ps.config&^mask | m.Config&mask
	if m.Advertise != 0 {
		ps.adv = m.Advertise
	}
	if ps.config != old || ps.adv != oldAdv {
		s.portStatusLocked(openflow.PortReasonModify, ps)
	}
}

// queueConfigLocked is the QUEUE_GET_CONFIG_REPLY for an existing port: its
// queues 0..n-1, each without properties. OpenFlow 1.0's one property is a
// guaranteed minimum rate (OFPQT_MIN_RATE); our queues are served in
// strict priority and shape to a maximum at most, so no queue guarantees
// a minimum and none claims one.
func (s *Switch) queueConfigLocked(h openflow.Header, port uint16) *openflow.QueueGetConfigReply {
	r := &openflow.QueueGetConfigReply{Header: h, Port: port}
	for q := range s.ports[port].numQueues() {
		r.Queues = append(r.Queues, openflow.PacketQueue{QueueID: uint32(q)})
	}
	return r
}
