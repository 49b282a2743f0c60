package packet

import (
	"encoding/binary"
	"fmt"
)

// MAC is an Ethernet address.
type MAC [6]byte

func (m MAC) String() string {
	return fmt.Sprintf("%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5])
}

// Broadcast is ff:ff:ff:ff:ff:ff.
var Broadcast = MAC{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}

// Ethernet is an Ethernet II header (no FCS).
type Ethernet struct {
	Dst, Src  MAC
	EtherType EtherType // below EtherTypeMin: an 802.3 length
}

// DecodeFromBytes decodes the 14-byte header at the start of b.
func (e *Ethernet) DecodeFromBytes(b []byte) error {
	if len(b) < EthernetLen {
		return errEthernetShort
	}
	copy(e.Dst[:], b[0:6])
	copy(e.Src[:], b[6:12])
	e.EtherType = EtherType(binary.BigEndian.Uint16(b[12:14]))
	return nil
}

func (e *Ethernet) appendTo(b []byte, typ EtherType) []byte {
	b = append(b, e.Dst[:]...)
	b = append(b, e.Src[:]...)
	return binary.BigEndian.AppendUint16(b, uint16(typ))
}

// Dot1Q is an 802.1Q VLAN tag: the TCI and the EtherType that follows it
// (the TPID 0x8100 is the Ethernet header's EtherType).
type Dot1Q struct {
	Priority     uint8  // PCP, 3 bits
	DropEligible bool   // DEI (formerly CFI)
	VLANID       uint16 // 12 bits
	EtherType    EtherType
}

// DecodeFromBytes decodes the 4 bytes after the TPID.
func (d *Dot1Q) DecodeFromBytes(b []byte) error {
	if len(b) < Dot1QLen {
		return errDot1QShort
	}
	tci := binary.BigEndian.Uint16(b[0:2])
	d.Priority = uint8(tci >> 13)
	d.DropEligible = tci&0x1000 != 0
	d.VLANID = tci & 0x0fff
	d.EtherType = EtherType(binary.BigEndian.Uint16(b[2:4]))
	return nil
}

// TCI is the tag control information word.
func (d *Dot1Q) TCI() uint16 {
	tci := uint16(d.Priority&7)<<13 | d.VLANID&0x0fff
	if d.DropEligible {
		tci |= 0x1000
	}
	return tci
}

func (d *Dot1Q) appendTo(b []byte, typ EtherType) []byte {
	b = binary.BigEndian.AppendUint16(b, d.TCI())
	return binary.BigEndian.AppendUint16(b, uint16(typ))
}

// ARP is an Ethernet/IPv4 ARP message (RFC 826), the only kind used here.
type ARP struct {
	Op        uint16 // ARPRequest, ARPReply
	SenderMAC MAC
	SenderIP  [4]byte
	TargetMAC MAC
	TargetIP  [4]byte
}

// DecodeFromBytes decodes an Ethernet/IPv4 ARP message; other hardware or
// protocol types are an error.
func (a *ARP) DecodeFromBytes(b []byte) error {
	if len(b) < ARPLen {
		return errARPShort
	}
	if binary.BigEndian.Uint16(b[0:2]) != 1 || EtherType(binary.BigEndian.Uint16(b[2:4])) != EtherTypeIPv4 || b[4] != 6 || b[5] != 4 {
		return errARPNotEthIPv4
	}
	a.Op = binary.BigEndian.Uint16(b[6:8])
	copy(a.SenderMAC[:], b[8:14])
	copy(a.SenderIP[:], b[14:18])
	copy(a.TargetMAC[:], b[18:24])
	copy(a.TargetIP[:], b[24:28])
	return nil
}

func (a *ARP) appendTo(b []byte) []byte {
	b = append(b, 0, 1, 0x08, 0x00, 6, 4)
	b = binary.BigEndian.AppendUint16(b, a.Op)
	b = append(b, a.SenderMAC[:]...)
	b = append(b, a.SenderIP[:]...)
	b = append(b, a.TargetMAC[:]...)
	return append(b, a.TargetIP[:]...)
}
