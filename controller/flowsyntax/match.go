package flowsyntax

import (
	"fmt"
	"strings"

	"github.com/pseudocong/pseudocong/openflow"
)

// Ethernet types and IP protocols the shorthands stand for.
const (
	ethTypeIPv4 = 0x0800
	ethTypeARP  = 0x0806
	ethTypeRARP = 0x8035
	ethTypeIPv6 = 0x86dd
	ipProtoICMP = 1
	ipProtoTCP  = 6
	ipProtoUDP  = 17
	ipProtoSCTP = 132
)

// shorthands are ovs-ofctl's protocol keywords.
var shorthands = map[string]struct {
	dlType  uint16
	nwProto int // -1: not set
}{
	"ip":   {ethTypeIPv4, -1},
	"arp":  {ethTypeARP, -1},
	"rarp": {ethTypeRARP, -1},
	"icmp": {ethTypeIPv4, ipProtoICMP},
	"tcp":  {ethTypeIPv4, ipProtoTCP},
	"udp":  {ethTypeIPv4, ipProtoUDP},
	"sctp": {ethTypeIPv4, ipProtoSCTP},
	"ipv6": {ethTypeIPv6, -1},
}

// matchParser fills a Flow field by field and remembers which fields were
// set, so that a field given twice with different values is an error.
type matchParser struct {
	flow *Flow
	set  map[string]string // field -> token that set it
}

func (p *matchParser) field(tok string) error {
	key, val, hasVal := strings.Cut(tok, "=")
	key = strings.ToLower(key)
	if !hasVal {
		return p.keyword(tok, key)
	}
	if val == "" {
		return &Error{Token: tok, Msg: "empty value"}
	}
	m := &p.flow.Match
	var err error
	switch key {
	case "priority":
		err = p.setUint16(tok, key, val, &p.flow.Priority)
	case "idle_timeout":
		err = p.setUint16(tok, key, val, &p.flow.IdleTimeout)
	case "hard_timeout":
		err = p.setUint16(tok, key, val, &p.flow.HardTimeout)
	case "cookie":
		var v uint64
		if v, err = parseUint(val, 64); err == nil {
			err = p.mark(tok, key, val)
			p.flow.Cookie = v
		}
	case "table":
		var v uint64
		if v, err = parseUint(val, 8); err == nil && v != 0 {
			err = fmt.Errorf("OpenFlow 1.0 has a single table (0)")
		}
	case "in_port":
		var port uint16
		if port, err = parsePort(val); err == nil {
			err = p.setMatch(tok, key, val, openflow.WildcardInPort, func() { m.InPort = port })
		}
	case "dl_src", "dl_dst":
		var mac [6]byte
		if mac, err = parseMAC(val); err == nil {
			if key == "dl_src" {
				err = p.setMatch(tok, key, val, openflow.WildcardDlSrc, func() { m.DlSrc = mac })
			} else {
				err = p.setMatch(tok, key, val, openflow.WildcardDlDst, func() { m.DlDst = mac })
			}
		}
	case "dl_vlan":
		var v uint64
		if v, err = parseUint(val, 16); err == nil && v > 4095 && uint16(v) != openflow.VlanNone {
			err = fmt.Errorf("VLAN id must be 0..4095 or 0xffff (untagged)")
		}
		if err == nil {
			err = p.setMatch(tok, key, val, openflow.WildcardDlVlan, func() { m.DlVlan = uint16(v) })
		}
	case "dl_vlan_pcp":
		var v uint64
		if v, err = parseUint(val, 8); err == nil && v > 7 {
			err = fmt.Errorf("VLAN priority must be 0..7")
		}
		if err == nil {
			err = p.setMatch(tok, key, val, openflow.WildcardDlVlanPcp, func() { m.DlVlanPcp = uint8(v) })
		}
	case "dl_type":
		var v uint64
		if v, err = parseUint(val, 16); err == nil {
			err = p.setDlType(tok, uint16(v))
		}
	case "nw_src", "nw_dst":
		var addr uint32
		var plen int
		if addr, plen, err = parseIPv4Prefix(val); err == nil {
			if key == "nw_src" {
				err = p.mark(tok, key, val)
				m.NwSrc = addr
				m.SetNwSrcPrefixLen(plen)
			} else {
				err = p.mark(tok, key, val)
				m.NwDst = addr
				m.SetNwDstPrefixLen(plen)
			}
		}
	case "nw_proto":
		var v uint64
		if v, err = parseUint(val, 8); err == nil {
			err = p.setNwProto(tok, uint8(v))
		}
	case "nw_tos":
		var v uint64
		if v, err = parseUint(val, 8); err == nil && v&3 != 0 {
			err = fmt.Errorf("nw_tos is the DSCP shifted left by 2: the low 2 (ECN) bits must be 0")
		}
		if err == nil {
			err = p.setMatch(tok, key, val, openflow.WildcardNwTos, func() { m.NwTos = uint8(v) })
		}
	case "tp_src", "tp_dst", "icmp_type", "icmp_code":
		bits := 16
		if strings.HasPrefix(key, "icmp") {
			bits = 8
		}
		var v uint64
		if v, err = parseUint(val, bits); err == nil {
			// OpenFlow 1.0 carries the ICMP type and code in tp_src and tp_dst.
			if key == "tp_src" || key == "icmp_type" {
				err = p.setMatch(tok, "tp_src", val, openflow.WildcardTpSrc, func() { m.TpSrc = uint16(v) })
			} else {
				err = p.setMatch(tok, "tp_dst", val, openflow.WildcardTpDst, func() { m.TpDst = uint16(v) })
			}
		}
	default:
		return &Error{Token: tok, Msg: "unknown field (OpenFlow 1.0 fields: in_port dl_src dl_dst dl_vlan dl_vlan_pcp dl_type nw_src nw_dst nw_proto nw_tos tp_src tp_dst icmp_type icmp_code; priority idle_timeout hard_timeout cookie)"}
	}
	if err != nil {
		if e, ok := err.(*Error); ok {
			return e
		}
		return &Error{Token: tok, Msg: err.Error()}
	}
	return nil
}

// keyword handles a field without '=': a protocol shorthand or a flag.
func (p *matchParser) keyword(tok, key string) error {
	if sh, ok := shorthands[key]; ok {
		if err := p.setDlType(tok, sh.dlType); err != nil {
			return err
		}
		if sh.nwProto >= 0 {
			return p.setNwProto(tok, uint8(sh.nwProto))
		}
		return nil
	}
	switch key {
	case "send_flow_rem":
		p.flow.Flags |= openflow.FlowModFlagSendFlowRem
		return nil
	case "check_overlap":
		p.flow.Flags |= openflow.FlowModFlagCheckOverlap
		return nil
	}
	return &Error{Token: tok, Msg: "unknown keyword (want ip, arp, rarp, icmp, tcp, udp, sctp, ipv6, send_flow_rem, check_overlap, or FIELD=VALUE)"}
}

func (p *matchParser) setDlType(tok string, v uint16) error {
	m := &p.flow.Match
	return p.setMatch(tok, "dl_type", fmt.Sprint(v), openflow.WildcardDlType, func() { m.DlType = v })
}

func (p *matchParser) setNwProto(tok string, v uint8) error {
	m := &p.flow.Match
	return p.setMatch(tok, "nw_proto", fmt.Sprint(v), openflow.WildcardNwProto, func() { m.NwProto = v })
}

// mark records that key was set to val; setting it again to another value
// is an error (ovs-ofctl refuses contradictory matches too).
func (p *matchParser) mark(tok, key, val string) error {
	if p.set == nil {
		p.set = make(map[string]string)
	}
	if prev, ok := p.set[key]; ok && prev != val {
		return &Error{Token: tok, Msg: fmt.Sprintf("%s given twice with different values (%s and %s)", key, prev, val)}
	}
	p.set[key] = val
	return nil
}

// setMatch marks key, clears its wildcard bit and stores the value.
func (p *matchParser) setMatch(tok, key, val string, wildcard uint32, store func()) error {
	if err := p.mark(tok, key, val); err != nil {
		return err
	}
	p.flow.Match.Wildcards &^= wildcard
	store()
	return nil
}

func (p *matchParser) setUint16(tok, key, val string, dst *uint16) error {
	v, err := parseUint(val, 16)
	if err != nil {
		return &Error{Token: tok, Msg: err.Error()}
	}
	if err := p.mark(tok, key, val); err != nil {
		return err
	}
	*dst = uint16(v)
	return nil
}

// checkPrerequisites rejects L3/L4 fields whose lower layer is not pinned
// down: OpenFlow 1.0 switches silently ignore them, which would turn a
// narrow rule into a broad one.
func (p *matchParser) checkPrerequisites() error {
	m := &p.flow.Match
	isSet := func(k string) bool { _, ok := p.set[k]; return ok }
	dlTypeSet := m.Wildcards&openflow.WildcardDlType == 0
	ipOrARP := dlTypeSet && (m.DlType == ethTypeIPv4 || m.DlType == ethTypeARP || m.DlType == ethTypeRARP)
	ip := dlTypeSet && m.DlType == ethTypeIPv4
	for _, k := range []string{"nw_src", "nw_dst", "nw_proto"} {
		if isSet(k) && !ipOrARP {
			return &Error{Token: k + "=" + p.set[k], Msg: "needs dl_type=0x0800 or 0x0806 (add ip, arp, tcp, udp or icmp)"}
		}
	}
	if isSet("nw_tos") && !ip {
		return &Error{Token: "nw_tos=" + p.set["nw_tos"], Msg: "needs dl_type=0x0800 (add ip)"}
	}
	l4 := ip && m.Wildcards&openflow.WildcardNwProto == 0 &&
		(m.NwProto == ipProtoTCP || m.NwProto == ipProtoUDP || m.NwProto == ipProtoICMP || m.NwProto == ipProtoSCTP)
	for _, k := range []string{"tp_src", "tp_dst"} {
		if isSet(k) && !l4 {
			return &Error{Token: k + "=" + p.set[k], Msg: "needs an IPv4 protocol of tcp, udp or icmp (add tcp, udp or icmp)"}
		}
	}
	return nil
}
