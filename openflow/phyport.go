package openflow

import "encoding/binary"

// PhyPort is ofp_phy_port (48 bytes), a port description in FEATURES_REPLY
// and PORT_STATUS.
type PhyPort struct {
	PortNo uint16
	HWAddr [6]byte
	// Name is at most 16 bytes on the wire, NUL padded; decoding stops at
	// the first NUL, encoding truncates to 16 bytes.
	Name       string
	Config     uint32 // PortConfig* bits
	State      uint32 // PortState* bits
	Curr       uint32 // PortFeature* bits
	Advertised uint32
	Supported  uint32
	Peer       uint32
}

const portNameLen = 16

// DecodeFromBytes reads a 48-byte ofp_phy_port from the start of b.
func (p *PhyPort) DecodeFromBytes(b []byte) error {
	if len(b) < PhyPortLen {
		return lengthErr("ofp_phy_port", PhyPortLen, len(b))
	}
	p.PortNo = binary.BigEndian.Uint16(b[0:2])
	copy(p.HWAddr[:], b[2:8])
	p.Name = cString(b[8 : 8+portNameLen])
	p.Config = binary.BigEndian.Uint32(b[24:28])
	p.State = binary.BigEndian.Uint32(b[28:32])
	p.Curr = binary.BigEndian.Uint32(b[32:36])
	p.Advertised = binary.BigEndian.Uint32(b[36:40])
	p.Supported = binary.BigEndian.Uint32(b[40:44])
	p.Peer = binary.BigEndian.Uint32(b[44:48])
	return nil
}

// AppendBinary appends the 48-byte encoding.
func (p *PhyPort) AppendBinary(b []byte) []byte {
	b = binary.BigEndian.AppendUint16(b, p.PortNo)
	b = append(b, p.HWAddr[:]...)
	b = appendFixedString(b, p.Name, portNameLen)
	b = binary.BigEndian.AppendUint32(b, p.Config)
	b = binary.BigEndian.AppendUint32(b, p.State)
	b = binary.BigEndian.AppendUint32(b, p.Curr)
	b = binary.BigEndian.AppendUint32(b, p.Advertised)
	b = binary.BigEndian.AppendUint32(b, p.Supported)
	return binary.BigEndian.AppendUint32(b, p.Peer)
}

// cString returns the bytes of b up to the first NUL as a string.
func cString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// appendFixedString appends s truncated or NUL padded to exactly n bytes.
func appendFixedString(b []byte, s string, n int) []byte {
	if len(s) > n {
		s = s[:n]
	}
	b = append(b, s...)
	for range n - len(s) {
		b = append(b, 0)
	}
	return b
}
