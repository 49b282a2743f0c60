package softswitch

import (
	"errors"
	"time"

	"github.com/pseudocong/pseudocong/openflow"
	"github.com/pseudocong/pseudocong/softswitch/flowtable"
)

// handleFlowModLocked validates a FLOW_MOD and passes it to the Installer
// seam; errors found here are answered at once.
func (s *Switch) handleFlowModLocked(ch Channel, fm *openflow.FlowMod) {
	if fm.Command == openflow.FlowModAdd || fm.Command == openflow.FlowModModify || fm.Command == openflow.FlowModModifyStrict {
		err := validateActions(fm.Actions, false)
		if err == nil {
			err = s.checkQueuesLocked(fm.Actions)
		}
		if err != nil {
			s.met.flowMod(fm.Command, false)
			s.replyErrorLocked(ch, fm, err)
			return
		}
	}
	if fm.Flags&openflow.FlowModFlagEmerg != 0 && (fm.IdleTimeout != 0 || fm.HardTimeout != 0) {
		s.met.flowMod(fm.Command, false)
		s.replyErrorLocked(ch, fm, &flowtable.Error{Type: openflow.ErrorTypeFlowModFailed,
			Code: uint16(openflow.FlowModFailedBadEmergTimeout), Msg: "emergency entry with a timeout"})
		return
	}
	inst := s.inst
	s.emitLocked(func() { inst.Install(ch, fm) })
}

// ApplyFlowMod changes the flow table now (the Installer's output): errors
// go back to ch, removed entries with SEND_FLOW_REM produce FLOW_REMOVED,
// and a buffered packet named by buffer_id is released through the flow
// table (as Open vSwitch does, so it is counted by the entry it hits).
func (s *Switch) ApplyFlowMod(ch Channel, fm *openflow.FlowMod) {
	s.mu.Lock()
	defer s.unlockAndDrain()
	now := s.clk.Now()
	table := s.table
	if fm.Flags&openflow.FlowModFlagEmerg != 0 {
		table = s.emerg
	}
	res, err := table.Apply(fm, now)
	s.met.flowMod(fm.Command, err == nil)
	if err != nil {
		s.replyErrorLocked(ch, fm, err)
		// OpenFlow 1.0: a failed FLOW_MOD leaves its buffered packet alone
		// (the controller may still PACKET_OUT it).
		return
	}
	s.flowRemovedLocked(res.Removed, now)
	s.met.setFlowEntries(s.table.Len())
	if table == s.table {
		s.rearmExpiryLocked()
	}
	if fm.BufferID != openflow.NoBuffer && fm.Command != openflow.FlowModDelete && fm.Command != openflow.FlowModDeleteStrict {
		frame, inPort, code, ok := s.buffers.take(fm.BufferID)
		if !ok {
			s.replyErrorLocked(ch, fm, &flowtable.Error{Type: openflow.ErrorTypeBadRequest, Code: uint16(code), Msg: "flow-mod buffer_id"})
			return
		}
		fields, _ := flowtable.Extract(frame, inPort)
		s.lookupLocked(inPort, frame, &fields, now)
	}
}

// flowRemovedLocked sends FLOW_REMOVED for the removals that asked for it.
func (s *Switch) flowRemovedLocked(rs []flowtable.Removal, now time.Time) {
	for _, r := range rs {
		if r.Entry.Flags&openflow.FlowModFlagSendFlowRem == 0 {
			continue
		}
		if s.sendAsyncLocked(r.FlowRemoved(now)) {
			s.met.flowRemoved(r.Reason)
		}
	}
}

// ReplyBarrier answers a BARRIER_REQUEST (the Installer's output once every
// earlier FLOW_MOD of ch has been applied).
func (s *Switch) ReplyBarrier(ch Channel, xid uint32) {
	s.mu.Lock()
	defer s.unlockAndDrain()
	s.sendLocked(ch, &openflow.BarrierReply{Header: openflow.Header{Version: openflow.Version, Type: openflow.TypeBarrierReply, Xid: xid}})
}

// ReplyError answers req on ch with an OpenFlow ERROR of type t and code
// (quoting up to 64 bytes of req, with its xid) through the ordered outbox,
// so the error leaves after every message the switch queued before it —
// e.g. a BARRIER_REPLY or FLOW_REMOVED of earlier work. For an Installer
// that refuses a FLOW_MOD itself (a modelled CPU with a full job queue).
func (s *Switch) ReplyError(ch Channel, req openflow.Message, t openflow.ErrorType, code uint16) {
	s.mu.Lock()
	defer s.unlockAndDrain()
	s.sendErrorLocked(ch, req, t, code)
}

// rearmExpiryLocked makes sure a timer fires at the table's next expiry.
func (s *Switch) rearmExpiryLocked() {
	if s.closed {
		return
	}
	at, ok := s.table.NextExpiry()
	if !ok {
		if s.expiryTimer != nil {
			s.expiryTimer.Stop()
			s.expiryTimer = nil
		}
		return
	}
	if s.expiryTimer != nil && s.expiryAt <= at.UnixNano() {
		return
	}
	if s.expiryTimer != nil {
		s.expiryTimer.Stop()
	}
	s.expiryAt = at.UnixNano()
	s.expiryTimer = s.clk.AfterFunc(at.Sub(s.clk.Now()), s.expireTick)
}

// expireTick removes timed-out entries.
func (s *Switch) expireTick() {
	s.mu.Lock()
	defer s.unlockAndDrain()
	s.expiryTimer = nil
	now := s.clk.Now()
	removed := s.table.Expire(now)
	s.flowRemovedLocked(removed, now)
	if len(removed) > 0 {
		s.met.setFlowEntries(s.table.Len())
	}
	s.rearmExpiryLocked()
}

// replyErrorLocked sends the OpenFlow ERROR for err, quoting the request.
func (s *Switch) replyErrorLocked(ch Channel, req openflow.Message, err error) {
	typ, code := openflow.ErrorTypeBadRequest, uint16(openflow.BadRequestEPerm)
	var fe *flowtable.Error
	if errors.As(err, &fe) {
		typ, code = fe.Type, fe.Code
	}
	s.log.Debug("request refused", "type", req.MsgType(), "xid", req.GetXid(), "err", err)
	s.sendErrorLocked(ch, req, typ, code)
}

// sendErrorLocked sends ERROR type/code quoting (up to 64 bytes of) req.
func (s *Switch) sendErrorLocked(ch Channel, req openflow.Message, typ openflow.ErrorType, code uint16) {
	raw, err := openflow.Marshal(req)
	if err != nil {
		raw = nil
	}
	e := openflow.NewErrorFor(raw, typ, code)
	e.Xid = req.GetXid()
	s.sendLocked(ch, e)
}
