package openflow

import (
	"strconv"
	"strings"
)

// EtherType and IP protocol numbers that have ovs-ofctl shorthands.
const (
	EthTypeIPv4 uint16 = 0x0800
	EthTypeARP  uint16 = 0x0806
	EthTypeRARP uint16 = 0x8035
	EthTypeIPv6 uint16 = 0x86dd
	IPProtoICMP uint8  = 1
	IPProtoTCP  uint8  = 6
	IPProtoUDP  uint8  = 17
	IPProtoSCTP uint8  = 132
)

// String formats the match part of an ovs-ofctl flow, fields in ofp_match
// order: "in_port=1,dl_src=00:00:00:00:00:01,tcp,nw_dst=10.0.0.2,tp_dst=80".
// dl_type (and nw_proto for IPv4) collapse into the shorthands ip, icmp,
// tcp, udp, sctp, arp, rarp, ipv6 as ovs-ofctl does; ICMP ports print as
// icmp_type/icmp_code. Wildcarded fields are omitted, so a match-everything
// Match formats as "".
func (m *Match) String() string {
	var sb strings.Builder
	w := m.Wildcards
	field := func(name, value string) {
		if sb.Len() > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(name)
		if value != "" {
			sb.WriteByte('=')
			sb.WriteString(value)
		}
	}
	dec := func(v int) string { return strconv.Itoa(v) }

	if w&WildcardInPort == 0 {
		field("in_port", PortName(m.InPort))
	}
	if w&WildcardDlVlan == 0 {
		field("dl_vlan", dec(int(m.DlVlan)))
	}
	if w&WildcardDlVlanPcp == 0 {
		field("dl_vlan_pcp", dec(int(m.DlVlanPcp)))
	}
	if w&WildcardDlSrc == 0 {
		field("dl_src", FormatMAC(m.DlSrc))
	}
	if w&WildcardDlDst == 0 {
		field("dl_dst", FormatMAC(m.DlDst))
	}

	// Protocol shorthand: a name replaces dl_type (and nw_proto).
	protoDone := false
	isICMP := false
	if w&WildcardDlType == 0 {
		name := ""
		switch m.DlType {
		case EthTypeIPv4:
			name = "ip"
			if w&WildcardNwProto == 0 {
				switch m.NwProto {
				case IPProtoICMP:
					name, protoDone, isICMP = "icmp", true, true
				case IPProtoTCP:
					name, protoDone = "tcp", true
				case IPProtoUDP:
					name, protoDone = "udp", true
				case IPProtoSCTP:
					name, protoDone = "sctp", true
				}
			}
		case EthTypeARP:
			name = "arp"
		case EthTypeRARP:
			name = "rarp"
		case EthTypeIPv6:
			name = "ipv6"
		}
		if name != "" {
			field(name, "")
		} else {
			field("dl_type", "0x"+hex4(m.DlType))
		}
	}

	if n := m.NwSrcPrefixLen(); n > 0 {
		field("nw_src", formatPrefix(m.NwSrc, n))
	}
	if n := m.NwDstPrefixLen(); n > 0 {
		field("nw_dst", formatPrefix(m.NwDst, n))
	}
	if w&WildcardNwProto == 0 && !protoDone {
		field("nw_proto", dec(int(m.NwProto)))
	}
	if w&WildcardNwTos == 0 {
		field("nw_tos", dec(int(m.NwTos)))
	}
	srcName, dstName := "tp_src", "tp_dst"
	if isICMP {
		srcName, dstName = "icmp_type", "icmp_code"
	}
	if w&WildcardTpSrc == 0 {
		field(srcName, dec(int(m.TpSrc)))
	}
	if w&WildcardTpDst == 0 {
		field(dstName, dec(int(m.TpDst)))
	}
	return sb.String()
}

// formatPrefix formats an address with "/n" unless n is 32.
func formatPrefix(addr uint32, n int) string {
	if n >= 32 {
		return FormatIPv4(addr)
	}
	return FormatIPv4(addr) + "/" + strconv.Itoa(n)
}

func hex4(v uint16) string {
	s := strconv.FormatUint(uint64(v), 16)
	return strings.Repeat("0", 4-len(s)) + s
}
