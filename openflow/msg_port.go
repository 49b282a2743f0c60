package openflow

import "encoding/binary"

// PortStatus is OFPT_PORT_STATUS.
type PortStatus struct {
	Header
	Reason uint8 // PortReason*
	Desc   PhyPort
}

const portStatusLen = 16 + PhyPortLen

func (m *PortStatus) MsgType() Type { return TypePortStatus }
func (m *PortStatus) Len() int      { return portStatusLen }

func (m *PortStatus) AppendBinary(b []byte) ([]byte, error) {
	b, err := beginMsg(b, TypePortStatus, portStatusLen, m.Xid)
	if err != nil {
		return b, err
	}
	b = append(b, m.Reason, 0, 0, 0, 0, 0, 0, 0)
	return m.Desc.AppendBinary(b), nil
}

func (m *PortStatus) DecodeFromBytes(b []byte) error {
	if err := decodeMsgHeader(&m.Header, b, TypePortStatus, portStatusLen, portStatusLen); err != nil {
		return err
	}
	m.Reason = b[8]
	return m.Desc.DecodeFromBytes(b[16:])
}

// PortMod is OFPT_PORT_MOD: change the Config bits selected by Mask.
type PortMod struct {
	Header
	PortNo    uint16
	HWAddr    [6]byte // must equal the port's address (sanity check)
	Config    uint32
	Mask      uint32
	Advertise uint32 // 0 = leave unchanged
}

const portModLen = 32

func (m *PortMod) MsgType() Type { return TypePortMod }
func (m *PortMod) Len() int      { return portModLen }

func (m *PortMod) AppendBinary(b []byte) ([]byte, error) {
	b, err := beginMsg(b, TypePortMod, portModLen, m.Xid)
	if err != nil {
		return b, err
	}
	b = binary.BigEndian.AppendUint16(b, m.PortNo)
	b = append(b, m.HWAddr[:]...)
	b = binary.BigEndian.AppendUint32(b, m.Config)
	b = binary.BigEndian.AppendUint32(b, m.Mask)
	b = binary.BigEndian.AppendUint32(b, m.Advertise)
	return append(b, 0, 0, 0, 0), nil
}

func (m *PortMod) DecodeFromBytes(b []byte) error {
	if err := decodeMsgHeader(&m.Header, b, TypePortMod, portModLen, portModLen); err != nil {
		return err
	}
	m.PortNo = binary.BigEndian.Uint16(b[8:10])
	copy(m.HWAddr[:], b[10:16])
	m.Config = binary.BigEndian.Uint32(b[16:20])
	m.Mask = binary.BigEndian.Uint32(b[20:24])
	m.Advertise = binary.BigEndian.Uint32(b[24:28])
	return nil
}
