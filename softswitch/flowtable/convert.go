package flowtable

import (
	"github.com/pseudocong/pseudocong/openflow"
	"github.com/pseudocong/pseudocong/tcam"
)

// NormalizeMatch returns m in the canonical form the table stores and
// reports: wildcard bits outside OFPFW_ALL cleared, nw_src/nw_dst wildcard
// counts above 32 clamped to 32, and every value the match does not care
// about zeroed (including the host bits of nw_src/nw_dst and the two low
// ECN bits of nw_tos). Two matches select the same packets exactly when
// their normal forms are equal.
func NormalizeMatch(m openflow.Match) openflow.Match {
	w := m.Wildcards & openflow.WildcardAll
	n := openflow.Match{Wildcards: w}
	n.SetNwSrcPrefixLen(m.NwSrcPrefixLen())
	n.SetNwDstPrefixLen(m.NwDstPrefixLen())
	if w&openflow.WildcardInPort == 0 {
		n.InPort = m.InPort
	}
	if w&openflow.WildcardDlSrc == 0 {
		n.DlSrc = m.DlSrc
	}
	if w&openflow.WildcardDlDst == 0 {
		n.DlDst = m.DlDst
	}
	if w&openflow.WildcardDlVlan == 0 {
		n.DlVlan = m.DlVlan
	}
	if w&openflow.WildcardDlVlanPcp == 0 {
		n.DlVlanPcp = m.DlVlanPcp & 7
	}
	if w&openflow.WildcardDlType == 0 {
		n.DlType = m.DlType
	}
	if w&openflow.WildcardNwTos == 0 {
		n.NwTos = m.NwTos & 0xfc
	}
	if w&openflow.WildcardNwProto == 0 {
		n.NwProto = m.NwProto
	}
	n.NwSrc = m.NwSrc & n.NwSrcMask()
	n.NwDst = m.NwDst & n.NwDstMask()
	if w&openflow.WildcardTpSrc == 0 {
		n.TpSrc = m.TpSrc
	}
	if w&openflow.WildcardTpDst == 0 {
		n.TpDst = m.TpDst
	}
	return n
}

// IsExact reports whether m has no wildcards at all (every field matters,
// both IP prefixes are /32): OpenFlow 1.0's exact-match entry.
func IsExact(m openflow.Match) bool {
	return NormalizeMatch(m).Wildcards == 0
}

// EffectivePriority maps an OpenFlow 1.0 priority into the classifier's
// 32-bit space: exact-match entries sit above every wildcard entry.
func EffectivePriority(m openflow.Match, priority uint16) uint32 {
	if IsExact(m) {
		return 0x10000 + uint32(priority)
	}
	return uint32(priority)
}

func ones(b bool) uint64 {
	if b {
		return ^uint64(0)
	}
	return 0
}

// MatchToTernary converts an ofp_match into a TCAM word: a field's mask is
// all ones when the match cares about it, the nw_src/nw_dst masks follow the
// prefix lengths, and the value is the normalized match (zero where the mask
// is zero).
func MatchToTernary(m openflow.Match) tcam.Ternary {
	n := NormalizeMatch(m)
	w := n.Wildcards
	care := func(bit uint32) bool { return w&bit == 0 }
	maskFields := tcam.Fields{
		InPort:    uint16(ones(care(openflow.WildcardInPort))),
		DlVlan:    uint16(ones(care(openflow.WildcardDlVlan))),
		DlVlanPcp: uint8(ones(care(openflow.WildcardDlVlanPcp))),
		DlType:    uint16(ones(care(openflow.WildcardDlType))),
		NwTos:     uint8(ones(care(openflow.WildcardNwTos))),
		NwProto:   uint8(ones(care(openflow.WildcardNwProto))),
		NwSrc:     n.NwSrcMask(),
		NwDst:     n.NwDstMask(),
		TpSrc:     uint16(ones(care(openflow.WildcardTpSrc))),
		TpDst:     uint16(ones(care(openflow.WildcardTpDst))),
	}
	if care(openflow.WildcardDlSrc) {
		maskFields.DlSrc = [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	}
	if care(openflow.WildcardDlDst) {
		maskFields.DlDst = [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	}
	mask := maskFields.Key()
	return tcam.Ternary{Value: matchFields(&n).Key().Masked(&mask), Mask: mask}
}

// matchFields copies the 12 values of a match into tcam.Fields.
func matchFields(m *openflow.Match) tcam.Fields {
	return tcam.Fields{
		InPort: m.InPort, DlSrc: m.DlSrc, DlDst: m.DlDst, DlVlan: m.DlVlan,
		DlVlanPcp: m.DlVlanPcp, DlType: m.DlType, NwTos: m.NwTos, NwProto: m.NwProto,
		NwSrc: m.NwSrc, NwDst: m.NwDst, TpSrc: m.TpSrc, TpDst: m.TpDst,
	}
}

// FieldsFromKey unpacks a tcam.Key (the inverse of tcam.Fields.Key).
func FieldsFromKey(k tcam.Key) tcam.Fields {
	mac := func(v uint64) [6]byte {
		return [6]byte{byte(v >> 40), byte(v >> 32), byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}
	}
	return tcam.Fields{
		InPort:    uint16(k[0] >> 48),
		DlVlan:    uint16(k[0] >> 32),
		DlType:    uint16(k[0] >> 16),
		DlVlanPcp: uint8(k[0] >> 8),
		NwTos:     uint8(k[0]),
		DlSrc:     mac(k[1] >> 16),
		NwProto:   uint8(k[1] >> 8),
		DlDst:     mac(k[2] >> 16),
		NwSrc:     uint32(k[3] >> 32),
		NwDst:     uint32(k[3]),
		TpSrc:     uint16(k[4] >> 48),
		TpDst:     uint16(k[4] >> 32),
	}
}

// TernaryToMatch converts a TCAM word produced by MatchToTernary back into
// the normalized ofp_match. A field whose mask is partly set (only possible
// for words not made by MatchToTernary) counts as cared for; an IP mask
// counts its leading one bits as the prefix length.
func TernaryToMatch(t tcam.Ternary) openflow.Match {
	v, m := FieldsFromKey(t.Value), FieldsFromKey(t.Mask)
	var w uint32
	wild := func(zero bool, bit uint32) {
		if zero {
			w |= bit
		}
	}
	wild(m.InPort == 0, openflow.WildcardInPort)
	wild(m.DlVlan == 0, openflow.WildcardDlVlan)
	wild(m.DlSrc == [6]byte{}, openflow.WildcardDlSrc)
	wild(m.DlDst == [6]byte{}, openflow.WildcardDlDst)
	wild(m.DlType == 0, openflow.WildcardDlType)
	wild(m.NwProto == 0, openflow.WildcardNwProto)
	wild(m.TpSrc == 0, openflow.WildcardTpSrc)
	wild(m.TpDst == 0, openflow.WildcardTpDst)
	wild(m.DlVlanPcp == 0, openflow.WildcardDlVlanPcp)
	wild(m.NwTos == 0, openflow.WildcardNwTos)
	out := openflow.Match{
		Wildcards: w,
		InPort:    v.InPort, DlSrc: v.DlSrc, DlDst: v.DlDst, DlVlan: v.DlVlan,
		DlVlanPcp: v.DlVlanPcp, DlType: v.DlType, NwTos: v.NwTos, NwProto: v.NwProto,
		NwSrc: v.NwSrc, NwDst: v.NwDst, TpSrc: v.TpSrc, TpDst: v.TpDst,
	}
	out.SetNwSrcPrefixLen(leadingOnes(m.NwSrc))
	out.SetNwDstPrefixLen(leadingOnes(m.NwDst))
	return NormalizeMatch(out)
}

func leadingOnes(x uint32) int {
	n := 0
	for x&0x80000000 != 0 {
		n++
		x <<= 1
	}
	return n
}

// Covers reports whether every packet matched by inner is also matched by
// outer: outer cares about a subset of inner's bits and agrees with it on
// them. This is OpenFlow 1.0's non-strict FLOW_MOD / flow-stats selection
// ("the entry's match is at least as specific as the request's").
func Covers(outer, inner *tcam.Ternary) bool {
	for i := range outer.Mask {
		if outer.Mask[i]&^inner.Mask[i] != 0 {
			return false
		}
		if (outer.Value[i]^inner.Value[i])&outer.Mask[i] != 0 {
			return false
		}
	}
	return true
}

// Overlaps reports whether some packet matches both a and b.
func Overlaps(a, b *tcam.Ternary) bool {
	for i := range a.Mask {
		if (a.Value[i]^b.Value[i])&a.Mask[i]&b.Mask[i] != 0 {
			return false
		}
	}
	return true
}
