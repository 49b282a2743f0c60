package packet

import (
	"encoding/binary"
	"net/netip"
)

// IPv4 is an IPv4 header.
type IPv4 struct {
	// TOS is the whole second byte: DSCP (6 bits) then ECN (2 bits).
	TOS uint8
	// TotalLength, IHL and Checksum are filled by decoding; building
	// computes them.
	TotalLength uint16
	IHL         uint8 // header length in 32-bit words
	ID          uint16
	Flags       uint8  // IPv4DontFragment, IPv4MoreFragments, IPv4EvilBit
	FragOffset  uint16 // in 8-byte units, 13 bits
	TTL         uint8
	Protocol    IPProtocol // building sets it from the transport layer, if any
	Checksum    uint16
	Src, Dst    [4]byte
	// Options are the raw option bytes; decoding aliases the frame.
	Options []byte
}

// DSCP is the differentiated services code point (TOS >> 2).
func (ip *IPv4) DSCP() uint8 { return ip.TOS >> 2 }

// ECN is the ECN field (the low two bits of TOS).
func (ip *IPv4) ECN() ECN { return ECN(ip.TOS & 3) }

// SetDSCP sets the DSCP and keeps the ECN field.
func (ip *IPv4) SetDSCP(dscp uint8) { ip.TOS = dscp<<2 | ip.TOS&3 }

// SetECN sets the ECN field and keeps the DSCP.
func (ip *IPv4) SetECN(e ECN) { ip.TOS = ip.TOS&^3 | uint8(e&3) }

// SrcAddr and DstAddr are the addresses as netip.Addr.
func (ip *IPv4) SrcAddr() netip.Addr { return netip.AddrFrom4(ip.Src) }
func (ip *IPv4) DstAddr() netip.Addr { return netip.AddrFrom4(ip.Dst) }

// IsFragment reports whether this is a fragment of a larger datagram.
func (ip *IPv4) IsFragment() bool { return ip.Flags&IPv4MoreFragments != 0 || ip.FragOffset != 0 }

// DecodeFromBytes decodes the header at the start of b and returns the
// datagram's payload: the bytes after the header up to TotalLength (so
// Ethernet padding is dropped), or to the end of b when b is shorter than
// TotalLength; truncated then reports the latter. A TotalLength of 0 means
// the whole of b.
func (ip *IPv4) DecodeFromBytes(b []byte) (payload []byte, truncated bool, err error) {
	if len(b) < IPv4MinLen {
		return nil, false, errIPv4Short
	}
	if b[0]>>4 != 4 {
		return nil, false, errIPv4Version
	}
	ip.IHL = b[0] & 0x0f
	hl := int(ip.IHL) * 4
	if hl < IPv4MinLen {
		return nil, false, errIPv4IHL
	}
	ip.TOS = b[1]
	ip.TotalLength = binary.BigEndian.Uint16(b[2:4])
	total := int(ip.TotalLength)
	if total == 0 {
		// Segmentation offload (and Linux BIG TCP above 64 KiB) hands
		// over datagrams with total length 0: the frame is the datagram.
		// gopacket reads them the same way.
		total = len(b)
	}
	if total < hl {
		return nil, false, errIPv4TotalLen
	}
	if len(b) < hl {
		return nil, false, errIPv4HdrShort
	}
	ip.ID = binary.BigEndian.Uint16(b[4:6])
	ff := binary.BigEndian.Uint16(b[6:8])
	ip.Flags = uint8(ff >> 13)
	ip.FragOffset = ff & 0x1fff
	ip.TTL = b[8]
	ip.Protocol = IPProtocol(b[9])
	ip.Checksum = binary.BigEndian.Uint16(b[10:12])
	copy(ip.Src[:], b[12:16])
	copy(ip.Dst[:], b[16:20])
	ip.Options = nil
	if hl > IPv4MinLen {
		ip.Options = b[IPv4MinLen:hl]
		if !optionsFramed(ip.Options) {
			return nil, false, errIPv4Option
		}
	}
	if total > len(b) {
		return b[hl:], true, nil
	}
	return b[hl:total], false, nil
}

// optionsFramed checks the type-length framing shared by IPv4 and TCP
// options: End ends the list, NOP is one byte, any other option has a
// length of at least 2 that stays inside the list.
func optionsFramed(o []byte) bool {
	for len(o) > 0 {
		switch o[0] {
		case 0:
			return true
		case 1:
			o = o[1:]
			continue
		}
		if len(o) < 2 || o[1] < 2 || int(o[1]) > len(o) {
			return false
		}
		o = o[o[1]:]
	}
	return true
}

// appendHeader appends the header for a datagram with payloadLen bytes
// after it, with a correct checksum.
func (ip *IPv4) appendHeader(b []byte, proto IPProtocol, payloadLen int) ([]byte, error) {
	if len(ip.Options)%4 != 0 || len(ip.Options) > maxIPv4Options {
		return b, errBuildIPOptions
	}
	hl := IPv4MinLen + len(ip.Options)
	total := hl + payloadLen
	if total > 0xffff {
		return b, errBuildTooLong
	}
	start := len(b)
	b = append(b, 0x40|byte(hl/4), ip.TOS)
	b = binary.BigEndian.AppendUint16(b, uint16(total))
	b = binary.BigEndian.AppendUint16(b, ip.ID)
	b = binary.BigEndian.AppendUint16(b, uint16(ip.Flags&7)<<13|ip.FragOffset&0x1fff)
	b = append(b, ip.TTL, byte(proto), 0, 0)
	b = append(b, ip.Src[:]...)
	b = append(b, ip.Dst[:]...)
	b = append(b, ip.Options...)
	binary.BigEndian.PutUint16(b[start+10:], Checksum(b[start:], 0))
	return b, nil
}
