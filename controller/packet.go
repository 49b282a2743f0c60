package controller

import (
	"encoding/binary"

	"github.com/pseudocong/pseudocong/openflow"
)

// Frame fields the reactive app needs.
const (
	ethHeaderLen  = 14
	ethTypeVLAN   = 0x8100
	ethTypeIPv4   = 0x0800
	ethTypeLLDP   = 0x88cc
	ipProtoICMP   = 1
	ipProtoTCP    = 6
	ipProtoUDP    = 17
	dlTypeNotEth  = 0x05ff // OFP_DL_TYPE_NOT_ETH_TYPE: 802.3 frames without an EtherType
	ipv4MinHeader = 20
)

// flowMatch builds the match of the per-flow rule for a frame that came in
// on inPort, the way Floodlight's Forwarding did: in_port, dl_src, dl_dst,
// dl_type and, for IPv4, nw_src, nw_dst, nw_proto and (TCP, UDP, ICMP,
// first fragments only) tp_src/tp_dst; everything else is wildcarded, so the
// rule's priority decides against overlapping rules. ok is false when the
// frame is shorter than an Ethernet header.
func flowMatch(frame []byte, inPort uint16) (m openflow.Match, ok bool) {
	if len(frame) < ethHeaderLen {
		return m, false
	}
	m.Wildcards = openflow.WildcardAll &^ (openflow.WildcardInPort | openflow.WildcardDlSrc |
		openflow.WildcardDlDst | openflow.WildcardDlType)
	m.InPort = inPort
	copy(m.DlDst[:], frame[0:6])
	copy(m.DlSrc[:], frame[6:12])
	off := 12
	ethType := binary.BigEndian.Uint16(frame[off:])
	if ethType == ethTypeVLAN && len(frame) >= off+6 {
		off += 4
		ethType = binary.BigEndian.Uint16(frame[off:])
	}
	off += 2
	if ethType < 0x0600 {
		ethType = dlTypeNotEth
	}
	m.DlType = ethType
	if ethType != ethTypeIPv4 {
		return m, true
	}
	ip := frame[off:]
	if len(ip) < ipv4MinHeader || ip[0]>>4 != 4 {
		return m, true
	}
	ihl := int(ip[0]&0x0f) * 4
	if ihl < ipv4MinHeader {
		return m, true
	}
	m.Wildcards &^= openflow.WildcardNwProto | openflow.WildcardNwSrcMask | openflow.WildcardNwDstMask
	m.NwProto = ip[9]
	m.NwSrc = binary.BigEndian.Uint32(ip[12:16])
	m.NwDst = binary.BigEndian.Uint32(ip[16:20])
	switch m.NwProto {
	case ipProtoTCP, ipProtoUDP, ipProtoICMP:
	default:
		return m, true
	}
	// A switch reads ports 0 from a later fragment; the ports of the first
	// fragment follow the IP header.
	fragOffset := binary.BigEndian.Uint16(ip[6:8]) & 0x1fff
	m.Wildcards &^= openflow.WildcardTpSrc | openflow.WildcardTpDst
	if fragOffset != 0 {
		return m, true
	}
	if len(ip) < ihl+4 {
		// Truncated before the ports: leave them wildcarded.
		m.Wildcards |= openflow.WildcardTpSrc | openflow.WildcardTpDst
		return m, true
	}
	l4 := ip[ihl:]
	if m.NwProto == ipProtoICMP {
		m.TpSrc, m.TpDst = uint16(l4[0]), uint16(l4[1]) // type, code
	} else {
		m.TpSrc = binary.BigEndian.Uint16(l4[0:2])
		m.TpDst = binary.BigEndian.Uint16(l4[2:4])
	}
	return m, true
}

func isMulticast(mac [6]byte) bool { return mac[0]&1 != 0 }
