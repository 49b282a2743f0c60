package controller

import (
	"encoding/binary"

	"github.com/pseudocong/pseudocong/openflow"
	"github.com/pseudocong/pseudocong/packet"
)

// dlTypeNotEth is OFP_DL_TYPE_NOT_ETH_TYPE: the dl_type OpenFlow 1.0 gives
// an 802.3 frame without an EtherType.
const dlTypeNotEth = 0x05ff

// flowMatch builds the match of the per-flow rule for a frame that came in
// on inPort, the way Floodlight's Forwarding did: in_port, dl_src, dl_dst,
// dl_type and, for IPv4, nw_src, nw_dst, nw_proto and (TCP, UDP, ICMP,
// first fragments only) tp_src/tp_dst; everything else is wildcarded, so the
// rule's priority decides against overlapping rules. ok is false when the
// frame is shorter than an Ethernet header.
//
// Ethernet, 802.1Q and IPv4 are decoded by package packet, which is
// strict: an IPv4 header it refuses (bad total length, badly framed
// options) leaves the nw_* fields wildcarded, which match whatever the
// switch reads there, so the rule still matches the packet. The transport
// ports are read as an OpenFlow 1.0 switch reads them, from a segment long
// enough for the minimal header (TCP 20, UDP 8, ICMP 4 bytes) whatever its
// length fields say, so an exact field is always what the switch's own
// extractor reads (packet_test.go checks that against
// softswitch/flowtable.Extract). Decoding allocates nothing.
func flowMatch(frame []byte, inPort uint16) (m openflow.Match, ok bool) {
	var eth packet.Ethernet
	if eth.DecodeFromBytes(frame) != nil {
		return m, false
	}
	m.Wildcards = openflow.WildcardAll &^ (openflow.WildcardInPort | openflow.WildcardDlSrc |
		openflow.WildcardDlDst | openflow.WildcardDlType)
	m.InPort = inPort
	m.DlDst, m.DlSrc = eth.Dst, eth.Src
	rest, typ := frame[packet.EthernetLen:], eth.EtherType
	if typ == packet.EtherTypeVLAN {
		var tag packet.Dot1Q
		if tag.DecodeFromBytes(rest) != nil {
			// Cut inside the tag: the switch reads no dl_type (0).
			m.Wildcards |= openflow.WildcardDlType
			return m, true
		}
		rest, typ = rest[packet.Dot1QLen:], tag.EtherType
	}
	if typ < packet.EtherTypeMin {
		typ = dlTypeNotEth
	}
	m.DlType = uint16(typ)
	if typ != packet.EtherTypeIPv4 {
		return m, true
	}
	var ip packet.IPv4
	seg, _, err := ip.DecodeFromBytes(rest)
	if err != nil {
		return m, true
	}
	m.Wildcards &^= openflow.WildcardNwProto | openflow.WildcardNwSrcMask | openflow.WildcardNwDstMask
	m.NwProto = uint8(ip.Protocol)
	m.NwSrc = binary.BigEndian.Uint32(ip.Src[:])
	m.NwDst = binary.BigEndian.Uint32(ip.Dst[:])
	var need int // the header a switch needs to read the ports
	switch ip.Protocol {
	case packet.IPProtocolTCP:
		need = packet.TCPMinLen
	case packet.IPProtocolUDP:
		need = packet.UDPLen
	case packet.IPProtocolICMP:
		need = 4 // type, code, checksum
	default:
		return m, true
	}
	if ip.FragOffset != 0 {
		// A switch reads ports 0 from a later fragment.
		m.Wildcards &^= openflow.WildcardTpSrc | openflow.WildcardTpDst
		return m, true
	}
	if len(seg) < need {
		return m, true // truncated before the ports: leave them wildcarded
	}
	m.Wildcards &^= openflow.WildcardTpSrc | openflow.WildcardTpDst
	if ip.Protocol == packet.IPProtocolICMP {
		m.TpSrc, m.TpDst = uint16(seg[0]), uint16(seg[1]) // type, code
	} else {
		m.TpSrc = binary.BigEndian.Uint16(seg[0:2])
		m.TpDst = binary.BigEndian.Uint16(seg[2:4])
	}
	return m, true
}

func isMulticast(mac [6]byte) bool { return mac[0]&1 != 0 }
