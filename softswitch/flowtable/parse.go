package flowtable

import (
	"encoding/binary"

	"github.com/pseudocong/pseudocong/openflow"
	"github.com/pseudocong/pseudocong/packet"
	"github.com/pseudocong/pseudocong/tcam"
)

// dlTypeNotEther is OFP_DL_TYPE_NOT_ETH_TYPE, the dl_type of an 802.3
// frame without SNAP. EtherTypes and IP protocols are package packet's.
const dlTypeNotEther uint16 = 0x05ff

// Layout records where the headers of a parsed frame start, so that
// set-field actions can rewrite them in place. An offset of -1 means the
// header is absent (or too short to use).
type Layout struct {
	// VLANOffset is the offset of the 802.1Q TPID (12), or -1 if untagged.
	VLANOffset int
	// L3Offset is the offset of the IPv4 or ARP header.
	L3Offset int
	// L4Offset is the offset of the TCP/UDP/ICMP header; -1 for non-first
	// IP fragments and truncated headers.
	L4Offset int
	// IPv4 is true when L3Offset points at an IPv4 header.
	IPv4 bool
}

// Extract parses a frame received on inPort into the OpenFlow 1.0 12-tuple,
// following the OpenFlow 1.0 rules:
//   - untagged frames have dl_vlan 0xffff and dl_vlan_pcp 0;
//   - an 802.3 frame's dl_type is its SNAP type when it carries SNAP with
//     OUI 0, otherwise 0x05ff;
//   - IPv4: nw_tos is the DSCP (ToS & 0xfc), nw_proto, nw_src, nw_dst; a
//     non-first fragment has no transport ports;
//   - ARP (Ethernet/IPv4): nw_proto is the low byte of the opcode, nw_src
//     and nw_dst are the sender and target protocol addresses;
//   - TCP/UDP: tp_src/tp_dst are the ports; ICMP: tp_src is the type,
//     tp_dst the code.
//
// Fields of headers that are missing or truncated stay zero. Extract never
// allocates and never fails: any byte string is some packet.
//
// It is the switch's specialised hot-path reader, not a second codec:
// package packet decodes frames everywhere else, and a property test
// there (packet/flowtable_test.go) keeps the two equal on every frame
// packet accepts. Extract differs only where OpenFlow 1.0 is more lenient
// (it reads a header its length fields call malformed) or reads more
// (802.3 SNAP).
func Extract(frame []byte, inPort uint16) (tcam.Fields, Layout) {
	f := tcam.Fields{InPort: inPort, DlVlan: openflow.VlanNone}
	l := Layout{VLANOffset: -1, L3Offset: -1, L4Offset: -1}
	if len(frame) < packet.EthernetLen {
		// Too short for Ethernet: keep whatever addresses are present.
		if len(frame) >= 6 {
			copy(f.DlDst[:], frame[0:6])
		}
		if len(frame) >= 12 {
			copy(f.DlSrc[:], frame[6:12])
		}
		return f, l
	}
	copy(f.DlDst[:], frame[0:6])
	copy(f.DlSrc[:], frame[6:12])
	off := 12
	typ := packet.EtherType(binary.BigEndian.Uint16(frame[off:]))
	off += 2
	if typ == packet.EtherTypeVLAN {
		if len(frame) < off+packet.Dot1QLen {
			return f, l
		}
		tci := binary.BigEndian.Uint16(frame[off:])
		f.DlVlan = tci & 0x0fff
		f.DlVlanPcp = uint8(tci >> 13)
		l.VLANOffset = 12
		typ = packet.EtherType(binary.BigEndian.Uint16(frame[off+2:]))
		off += packet.Dot1QLen
	}
	if typ < packet.EtherTypeMin {
		// 802.3: LLC (3 bytes) + SNAP (OUI 3, type 2).
		if len(frame) >= off+8 && frame[off] == 0xaa && frame[off+1] == 0xaa && frame[off+2] == 0x03 &&
			frame[off+3] == 0 && frame[off+4] == 0 && frame[off+5] == 0 {
			typ = packet.EtherType(binary.BigEndian.Uint16(frame[off+6:]))
			off += 8
		} else {
			f.DlType = dlTypeNotEther
			return f, l
		}
	}
	f.DlType = uint16(typ)
	switch typ {
	case packet.EtherTypeIPv4:
		extractIPv4(frame, off, &f, &l)
	case packet.EtherTypeARP:
		extractARP(frame, off, &f, &l)
	}
	return f, l
}

func extractIPv4(frame []byte, off int, f *tcam.Fields, l *Layout) {
	if len(frame) < off+packet.IPv4MinLen {
		return
	}
	ip := frame[off:]
	ihl := int(ip[0]&0x0f) * 4
	if ip[0]>>4 != 4 || ihl < packet.IPv4MinLen || len(ip) < ihl {
		return
	}
	l.L3Offset, l.IPv4 = off, true
	f.NwTos = ip[1] & 0xfc
	f.NwProto = ip[9]
	f.NwSrc = binary.BigEndian.Uint32(ip[12:16])
	f.NwDst = binary.BigEndian.Uint32(ip[16:20])
	if binary.BigEndian.Uint16(ip[6:8])&0x1fff != 0 {
		return // non-first fragment: no transport header
	}
	l4 := ip[ihl:]
	switch packet.IPProtocol(f.NwProto) {
	case packet.IPProtocolTCP:
		if len(l4) < packet.TCPMinLen {
			return
		}
	case packet.IPProtocolUDP:
		if len(l4) < packet.UDPLen {
			return
		}
	case packet.IPProtocolICMP:
		if len(l4) < 4 {
			return
		}
		f.TpSrc, f.TpDst = uint16(l4[0]), uint16(l4[1])
		l.L4Offset = off + ihl
		return
	default:
		return
	}
	f.TpSrc = binary.BigEndian.Uint16(l4[0:2])
	f.TpDst = binary.BigEndian.Uint16(l4[2:4])
	l.L4Offset = off + ihl
}

func extractARP(frame []byte, off int, f *tcam.Fields, l *Layout) {
	if len(frame) < off+packet.ARPLen {
		return
	}
	a := frame[off:]
	// Only Ethernet/IPv4 ARP fills nw_*.
	if binary.BigEndian.Uint16(a[0:2]) != 1 || packet.EtherType(binary.BigEndian.Uint16(a[2:4])) != packet.EtherTypeIPv4 || a[4] != 6 || a[5] != 4 {
		return
	}
	l.L3Offset = off
	f.NwProto = uint8(binary.BigEndian.Uint16(a[6:8]))
	f.NwSrc = binary.BigEndian.Uint32(a[14:18])
	f.NwDst = binary.BigEndian.Uint32(a[24:28])
}

// MatchFromFields is the exact ofp_match (no wildcards) of a parsed packet,
// as an OpenFlow 1.0 switch reports it.
func MatchFromFields(f tcam.Fields) openflow.Match {
	return openflow.Match{
		InPort: f.InPort, DlSrc: f.DlSrc, DlDst: f.DlDst, DlVlan: f.DlVlan,
		DlVlanPcp: f.DlVlanPcp, DlType: f.DlType, NwTos: f.NwTos, NwProto: f.NwProto,
		NwSrc: f.NwSrc, NwDst: f.NwDst, TpSrc: f.TpSrc, TpDst: f.TpDst,
	}
}
