package openflow

import "encoding/binary"

// PacketIn is OFPT_PACKET_IN. Data aliases the decoded buffer.
type PacketIn struct {
	Header
	BufferID uint32 // NoBuffer when the whole packet is in Data
	TotalLen uint16 // full length of the frame
	InPort   uint16
	Reason   uint8 // PacketInReason*
	Data     []byte
}

// packetInLen is the wire size of the fixed part (ofp_packet_in without the
// struct padding C adds after data[0]).
const packetInLen = 18

func (m *PacketIn) MsgType() Type { return TypePacketIn }
func (m *PacketIn) Len() int      { return packetInLen + len(m.Data) }

func (m *PacketIn) AppendBinary(b []byte) ([]byte, error) {
	b, err := beginMsg(b, TypePacketIn, m.Len(), m.Xid)
	if err != nil {
		return b, err
	}
	b = binary.BigEndian.AppendUint32(b, m.BufferID)
	b = binary.BigEndian.AppendUint16(b, m.TotalLen)
	b = binary.BigEndian.AppendUint16(b, m.InPort)
	b = append(b, m.Reason, 0)
	return append(b, m.Data...), nil
}

func (m *PacketIn) DecodeFromBytes(b []byte) error {
	if err := decodeMsgHeader(&m.Header, b, TypePacketIn, packetInLen, MaxMessageLen); err != nil {
		return err
	}
	m.BufferID = binary.BigEndian.Uint32(b[8:12])
	m.TotalLen = binary.BigEndian.Uint16(b[12:14])
	m.InPort = binary.BigEndian.Uint16(b[14:16])
	m.Reason = b[16]
	m.Data = nilIfEmpty(b[packetInLen:])
	return nil
}

// PacketOut is OFPT_PACKET_OUT. Data (the frame, when BufferID is
// NoBuffer) aliases the decoded buffer.
type PacketOut struct {
	Header
	BufferID uint32
	InPort   uint16 // PortNone if none
	Actions  []Action
	Data     []byte
}

const packetOutLen = 16

func (m *PacketOut) MsgType() Type { return TypePacketOut }
func (m *PacketOut) Len() int      { return packetOutLen + ActionsLen(m.Actions) + len(m.Data) }

func (m *PacketOut) AppendBinary(b []byte) ([]byte, error) {
	actionsLen := ActionsLen(m.Actions)
	b, err := beginMsg(b, TypePacketOut, packetOutLen+actionsLen+len(m.Data), m.Xid)
	if err != nil {
		return b, err
	}
	b = binary.BigEndian.AppendUint32(b, m.BufferID)
	b = binary.BigEndian.AppendUint16(b, m.InPort)
	b = binary.BigEndian.AppendUint16(b, uint16(actionsLen))
	b = AppendActions(b, m.Actions)
	return append(b, m.Data...), nil
}

func (m *PacketOut) DecodeFromBytes(b []byte) error {
	if err := decodeMsgHeader(&m.Header, b, TypePacketOut, packetOutLen, MaxMessageLen); err != nil {
		return err
	}
	m.BufferID = binary.BigEndian.Uint32(b[8:12])
	m.InPort = binary.BigEndian.Uint16(b[12:14])
	actionsLen := int(binary.BigEndian.Uint16(b[14:16]))
	if actionsLen > len(b)-packetOutLen {
		return lengthErr("PACKET_OUT actions_len", len(b)-packetOutLen, actionsLen)
	}
	actions, err := DecodeActions(b[packetOutLen : packetOutLen+actionsLen])
	if err != nil {
		return err
	}
	m.Actions = actions
	m.Data = nilIfEmpty(b[packetOutLen+actionsLen:])
	return nil
}
