package openflow

import "encoding/binary"

// FlowMod is OFPT_FLOW_MOD.
type FlowMod struct {
	Header
	Match       Match
	Cookie      uint64
	Command     uint16 // FlowModAdd, ...
	IdleTimeout uint16 // seconds, 0 = permanent
	HardTimeout uint16
	Priority    uint16
	BufferID    uint32 // NoBuffer, or a buffered packet to apply the actions to
	OutPort     uint16 // DELETE* filter; PortNone = any
	Flags       uint16 // FlowModFlag*
	Actions     []Action
}

const flowModLen = 72

func (m *FlowMod) MsgType() Type { return TypeFlowMod }
func (m *FlowMod) Len() int      { return flowModLen + ActionsLen(m.Actions) }

func (m *FlowMod) AppendBinary(b []byte) ([]byte, error) {
	b, err := beginMsg(b, TypeFlowMod, m.Len(), m.Xid)
	if err != nil {
		return b, err
	}
	// The fixed part at fixed offsets (beginMsg reserved the room).
	n := len(b)
	b = b[:n+flowModLen-HeaderLen]
	p := b[n:]
	m.Match.put(p)
	p = p[MatchLen:]
	_ = p[23]
	binary.BigEndian.PutUint64(p[0:], m.Cookie)
	binary.BigEndian.PutUint16(p[8:], m.Command)
	binary.BigEndian.PutUint16(p[10:], m.IdleTimeout)
	binary.BigEndian.PutUint16(p[12:], m.HardTimeout)
	binary.BigEndian.PutUint16(p[14:], m.Priority)
	binary.BigEndian.PutUint32(p[16:], m.BufferID)
	binary.BigEndian.PutUint16(p[20:], m.OutPort)
	binary.BigEndian.PutUint16(p[22:], m.Flags)
	return AppendActions(b, m.Actions), nil
}

func (m *FlowMod) DecodeFromBytes(b []byte) error {
	if err := decodeMsgHeader(&m.Header, b, TypeFlowMod, flowModLen, MaxMessageLen); err != nil {
		return err
	}
	if err := m.Match.DecodeFromBytes(b[8:48]); err != nil {
		return err
	}
	m.Cookie = binary.BigEndian.Uint64(b[48:56])
	m.Command = binary.BigEndian.Uint16(b[56:58])
	m.IdleTimeout = binary.BigEndian.Uint16(b[58:60])
	m.HardTimeout = binary.BigEndian.Uint16(b[60:62])
	m.Priority = binary.BigEndian.Uint16(b[62:64])
	m.BufferID = binary.BigEndian.Uint32(b[64:68])
	m.OutPort = binary.BigEndian.Uint16(b[68:70])
	m.Flags = binary.BigEndian.Uint16(b[70:72])
	actions, err := DecodeActions(b[flowModLen:])
	if err != nil {
		return err
	}
	m.Actions = actions
	return nil
}

// FlowRemoved is OFPT_FLOW_REMOVED.
type FlowRemoved struct {
	Header
	Match        Match
	Cookie       uint64
	Priority     uint16
	Reason       uint8 // FlowRemoved*
	DurationSec  uint32
	DurationNsec uint32
	IdleTimeout  uint16
	PacketCount  uint64
	ByteCount    uint64
}

const flowRemovedLen = 88

func (m *FlowRemoved) MsgType() Type { return TypeFlowRemoved }
func (m *FlowRemoved) Len() int      { return flowRemovedLen }

func (m *FlowRemoved) AppendBinary(b []byte) ([]byte, error) {
	b, err := beginMsg(b, TypeFlowRemoved, flowRemovedLen, m.Xid)
	if err != nil {
		return b, err
	}
	b = m.Match.AppendBinary(b)
	b = binary.BigEndian.AppendUint64(b, m.Cookie)
	b = binary.BigEndian.AppendUint16(b, m.Priority)
	b = append(b, m.Reason, 0)
	b = binary.BigEndian.AppendUint32(b, m.DurationSec)
	b = binary.BigEndian.AppendUint32(b, m.DurationNsec)
	b = binary.BigEndian.AppendUint16(b, m.IdleTimeout)
	b = append(b, 0, 0)
	b = binary.BigEndian.AppendUint64(b, m.PacketCount)
	return binary.BigEndian.AppendUint64(b, m.ByteCount), nil
}

func (m *FlowRemoved) DecodeFromBytes(b []byte) error {
	if err := decodeMsgHeader(&m.Header, b, TypeFlowRemoved, flowRemovedLen, flowRemovedLen); err != nil {
		return err
	}
	if err := m.Match.DecodeFromBytes(b[8:48]); err != nil {
		return err
	}
	m.Cookie = binary.BigEndian.Uint64(b[48:56])
	m.Priority = binary.BigEndian.Uint16(b[56:58])
	m.Reason = b[58]
	m.DurationSec = binary.BigEndian.Uint32(b[60:64])
	m.DurationNsec = binary.BigEndian.Uint32(b[64:68])
	m.IdleTimeout = binary.BigEndian.Uint16(b[68:70])
	m.PacketCount = binary.BigEndian.Uint64(b[72:80])
	m.ByteCount = binary.BigEndian.Uint64(b[80:88])
	return nil
}
