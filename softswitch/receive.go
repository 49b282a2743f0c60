package softswitch

import (
	"encoding/binary"
	"time"

	"github.com/pseudocong/pseudocong/openflow"
	"github.com/pseudocong/pseudocong/softswitch/flowtable"
	"github.com/pseudocong/pseudocong/tcam"
)

// Drop reasons (label values of the dropped-packets metric).
const (
	dropUnknownPort  = "unknown_port"
	dropPortDown     = "port_down"
	dropNoRecv       = "no_recv"
	dropFragment     = "frag_drop"
	dropNoController = "no_controller"
	dropNoPacketIn   = "no_packet_in"
	dropNoActions    = "no_actions"
	dropNoFwd        = "no_fwd"
	dropInPort       = "output_to_in_port"
	dropNoSuchPort   = "no_such_output_port"
	dropNoSuchQueue  = "no_such_queue"
	dropOutbox       = "outbox_full"
	dropTxError      = "tx_error"
)

// Receive is the packet entry point: frame arrived on inPort. The switch
// takes ownership of frame (actions may rewrite it in place).
func (s *Switch) Receive(inPort uint16, frame []byte) {
	s.mu.Lock()
	s.receiveLocked(inPort, frame)
	s.unlockAndDrain()
}

func (s *Switch) receiveLocked(inPort uint16, frame []byte) {
	ps, ok := s.ports[inPort]
	if !ok {
		s.met.dropped(inPort, dropUnknownPort)
		return
	}
	if ps.config&openflow.PortConfigPortDown != 0 || ps.state&openflow.PortStateLinkDown != 0 {
		ps.stats.RxDropped++
		s.met.dropped(inPort, dropPortDown)
		return
	}
	ps.stats.RxPackets++
	ps.stats.RxBytes += uint64(len(frame))
	if ps.rxC != nil {
		ps.rxC.Inc()
	}
	if ps.config&openflow.PortConfigNoRecv != 0 {
		ps.stats.RxDropped++
		s.met.dropped(inPort, dropNoRecv)
		return
	}
	if ps.filter != nil {
		ps.filter.FromPort(frame)
	}
	fields, layout := flowtable.Extract(frame, inPort)
	if s.configFlags&openflow.ConfigFragMask == openflow.ConfigFragDrop && isFragment(frame, layout) {
		ps.stats.RxDropped++
		s.met.dropped(inPort, dropFragment)
		return
	}
	now := s.clk.Now()
	s.lookupLocked(inPort, frame, &fields, now)
}

// lookupLocked runs a packet through the flow table: a hit goes to the
// Forwarder seam, a miss to the controller (MissHandler seam) or to the
// fail-mode behaviour.
func (s *Switch) lookupLocked(inPort uint16, frame []byte, fields *tcam.Fields, now time.Time) {
	if e := s.table.Lookup(fields); e != nil {
		s.table.Hit(e, len(frame), now)
		s.emitForwardLocked(Hit{InPort: inPort, Frame: frame, Fields: *fields, EntryID: e.ID,
			Priority: e.Effective, Actions: e.Actions, At: now})
		return
	}
	s.met.tableMiss()
	if s.controllersLocked() == 0 {
		if s.cfg.FailMode == FailStandalone {
			s.normalLocked(inPort, frame, fields, now)
			return
		}
		s.met.dropped(inPort, dropNoController)
		return
	}
	if ps, ok := s.ports[inPort]; ok && ps.config&openflow.PortConfigNoPacketIn != 0 {
		s.met.dropped(inPort, dropNoPacketIn)
		return
	}
	s.packetInLocked(inPort, frame, fields, openflow.PacketInReasonNoMatch, s.missSendLen, now)
}

// packetInLocked buffers the packet (when a buffer is free), builds the
// PACKET_IN and hands it to the MissHandler seam.
func (s *Switch) packetInLocked(inPort uint16, frame []byte, fields *tcam.Fields, reason uint8, maxLen uint16, now time.Time) {
	if s.controllersLocked() == 0 {
		s.met.dropped(inPort, dropNoController)
		return
	}
	bufID := openflow.NoBuffer
	if s.buffers.size() > 0 {
		bufID = s.buffers.save(frame, inPort, now)
	}
	data := frame
	if bufID != openflow.NoBuffer && int(maxLen) < len(frame) {
		data = frame[:maxLen]
	}
	pi := &openflow.PacketIn{
		Header:   openflow.Header{Version: openflow.Version, Type: openflow.TypePacketIn},
		BufferID: bufID,
		TotalLen: uint16(min(len(frame), 0xffff)),
		InPort:   inPort,
		Reason:   reason,
		// The buffered frame may be rewritten later; the PACKET_IN keeps
		// its own copy of what it reports.
		Data: append([]byte(nil), data...),
	}
	// A PACKET_IN must fit in one message.
	if room := openflow.MaxMessageLen - pi.Len() + len(pi.Data); len(pi.Data) > room {
		pi.Data = pi.Data[:room]
	}
	m := Miss{PacketIn: pi, Fields: *fields, At: now}
	mh := s.miss
	s.emitLocked(func() { mh.HandleMiss(m) })
}

// SendPacketIn delivers a PACKET_IN to the controller channels (the
// MissHandler's output). Without a controller the packet's buffer is freed.
func (s *Switch) SendPacketIn(pi *openflow.PacketIn) {
	s.mu.Lock()
	defer s.unlockAndDrain()
	if !s.sendAsyncLocked(pi) {
		if pi.BufferID != openflow.NoBuffer {
			s.buffers.release(pi.BufferID)
		}
		s.met.dropped(pi.InPort, dropNoController)
		return
	}
	s.met.packetIn(pi.Reason)
}

// DropPacketIn frees the buffer of a PACKET_IN that the MissHandler
// discarded.
func (s *Switch) DropPacketIn(pi *openflow.PacketIn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if pi.BufferID != openflow.NoBuffer {
		s.buffers.release(pi.BufferID)
	}
}

// isFragment reports whether an IPv4 frame is a fragment (MF set or a
// non-zero offset).
func isFragment(frame []byte, l flowtable.Layout) bool {
	if !l.IPv4 {
		return false
	}
	return binary.BigEndian.Uint16(frame[l.L3Offset+6:])&0x3fff != 0
}
