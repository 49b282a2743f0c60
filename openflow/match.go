package openflow

import (
	"encoding/binary"
	"slices"
)

// Wildcard bits of ofp_match.wildcards (ofp_flow_wildcards). A set bit
// means "don't care". NW_SRC and NW_DST are 6-bit counts of low address bits
// to ignore instead of single bits; a count of 32 or more ignores the whole
// address.
const (
	WildcardInPort     uint32 = 1 << 0                                               // OFPFW_IN_PORT
	WildcardDlVlan     uint32 = 1 << 1                                               // OFPFW_DL_VLAN
	WildcardDlSrc      uint32 = 1 << 2                                               // OFPFW_DL_SRC
	WildcardDlDst      uint32 = 1 << 3                                               // OFPFW_DL_DST
	WildcardDlType     uint32 = 1 << 4                                               // OFPFW_DL_TYPE
	WildcardNwProto    uint32 = 1 << 5                                               // OFPFW_NW_PROTO
	WildcardTpSrc      uint32 = 1 << 6                                               // OFPFW_TP_SRC
	WildcardTpDst      uint32 = 1 << 7                                               // OFPFW_TP_DST
	WildcardNwSrcShift        = 8                                                    // OFPFW_NW_SRC_SHIFT
	WildcardNwSrcBits         = 6                                                    // OFPFW_NW_SRC_BITS
	WildcardNwSrcMask  uint32 = ((1 << WildcardNwSrcBits) - 1) << WildcardNwSrcShift // OFPFW_NW_SRC_MASK
	WildcardNwSrcAll   uint32 = 32 << WildcardNwSrcShift                             // OFPFW_NW_SRC_ALL
	WildcardNwDstShift        = 14                                                   // OFPFW_NW_DST_SHIFT
	WildcardNwDstBits         = 6                                                    // OFPFW_NW_DST_BITS
	WildcardNwDstMask  uint32 = ((1 << WildcardNwDstBits) - 1) << WildcardNwDstShift // OFPFW_NW_DST_MASK
	WildcardNwDstAll   uint32 = 32 << WildcardNwDstShift                             // OFPFW_NW_DST_ALL
	WildcardDlVlanPcp  uint32 = 1 << 20                                              // OFPFW_DL_VLAN_PCP
	WildcardNwTos      uint32 = 1 << 21                                              // OFPFW_NW_TOS
	WildcardAll        uint32 = (1 << 22) - 1                                        // OFPFW_ALL
)

// VlanNone is the dl_vlan value that matches (and PACKET_INs report for)
// untagged frames (OFP_VLAN_NONE).
const VlanNone uint16 = 0xffff

// Match is ofp_match (40 bytes): the OpenFlow 1.0 12-tuple plus wildcards.
// Field names and types mirror tcam.Fields so conversion is field by field.
type Match struct {
	Wildcards uint32
	InPort    uint16
	DlSrc     [6]byte
	DlDst     [6]byte
	DlVlan    uint16
	DlVlanPcp uint8
	DlType    uint16
	NwTos     uint8
	NwProto   uint8
	NwSrc     uint32
	NwDst     uint32
	TpSrc     uint16
	TpDst     uint16
}

// MatchAll returns a match with every field wildcarded.
func MatchAll() Match { return Match{Wildcards: WildcardAll} }

// DecodeFromBytes reads a 40-byte ofp_match from the start of b. Padding
// bytes are ignored.
func (m *Match) DecodeFromBytes(b []byte) error {
	if len(b) < MatchLen {
		return lengthErr("ofp_match", MatchLen, len(b))
	}
	_ = b[39]
	m.Wildcards = binary.BigEndian.Uint32(b[0:4])
	m.InPort = binary.BigEndian.Uint16(b[4:6])
	copy(m.DlSrc[:], b[6:12])
	copy(m.DlDst[:], b[12:18])
	m.DlVlan = binary.BigEndian.Uint16(b[18:20])
	m.DlVlanPcp = b[20]
	m.DlType = binary.BigEndian.Uint16(b[22:24])
	m.NwTos = b[24]
	m.NwProto = b[25]
	m.NwSrc = binary.BigEndian.Uint32(b[28:32])
	m.NwDst = binary.BigEndian.Uint32(b[32:36])
	m.TpSrc = binary.BigEndian.Uint16(b[36:38])
	m.TpDst = binary.BigEndian.Uint16(b[38:40])
	return nil
}

// AppendBinary appends the 40-byte ofp_match encoding (zero padding).
func (m *Match) AppendBinary(b []byte) []byte {
	b = slices.Grow(b, MatchLen)
	n := len(b)
	b = b[:n+MatchLen]
	m.put(b[n:])
	return b
}

// put writes the match into p[:MatchLen] at fixed offsets (one bounds
// check, no per-field append): the FLOW_MOD of every PACKET_IN has one.
func (m *Match) put(p []byte) {
	_ = p[MatchLen-1]
	binary.BigEndian.PutUint32(p[0:], m.Wildcards)
	binary.BigEndian.PutUint16(p[4:], m.InPort)
	copy(p[6:12], m.DlSrc[:])
	copy(p[12:18], m.DlDst[:])
	binary.BigEndian.PutUint16(p[18:], m.DlVlan)
	p[20], p[21] = m.DlVlanPcp, 0
	binary.BigEndian.PutUint16(p[22:], m.DlType)
	p[24], p[25], p[26], p[27] = m.NwTos, m.NwProto, 0, 0
	binary.BigEndian.PutUint32(p[28:], m.NwSrc)
	binary.BigEndian.PutUint32(p[32:], m.NwDst)
	binary.BigEndian.PutUint16(p[36:], m.TpSrc)
	binary.BigEndian.PutUint16(p[38:], m.TpDst)
}

// NwSrcPrefixLen is the number of leading nw_src bits that must match
// (0 = nw_src fully wildcarded, 32 = exact).
func (m *Match) NwSrcPrefixLen() int {
	return prefixLenFromWildcards(m.Wildcards, WildcardNwSrcShift)
}

// NwDstPrefixLen is the number of leading nw_dst bits that must match.
func (m *Match) NwDstPrefixLen() int {
	return prefixLenFromWildcards(m.Wildcards, WildcardNwDstShift)
}

// SetNwSrcPrefixLen sets how many leading nw_src bits must match; n is
// clamped to [0, 32]. 0 writes the canonical "all" value 32 into the field.
func (m *Match) SetNwSrcPrefixLen(n int) {
	m.Wildcards = withPrefixLen(m.Wildcards, WildcardNwSrcShift, n)
}

// SetNwDstPrefixLen sets how many leading nw_dst bits must match.
func (m *Match) SetNwDstPrefixLen(n int) {
	m.Wildcards = withPrefixLen(m.Wildcards, WildcardNwDstShift, n)
}

// NwSrcMask is the nw_src care-mask implied by the prefix length.
func (m *Match) NwSrcMask() uint32 { return prefixMask(m.NwSrcPrefixLen()) }

// NwDstMask is the nw_dst care-mask implied by the prefix length.
func (m *Match) NwDstMask() uint32 { return prefixMask(m.NwDstPrefixLen()) }

func prefixLenFromWildcards(w uint32, shift uint) int {
	ignored := int(w>>shift) & (1<<6 - 1)
	if ignored >= 32 {
		return 0
	}
	return 32 - ignored
}

func withPrefixLen(w uint32, shift uint, n int) uint32 {
	n = max(0, min(32, n))
	w &^= (1<<6 - 1) << shift
	return w | uint32(32-n)<<shift
}

func prefixMask(n int) uint32 {
	if n <= 0 {
		return 0
	}
	return ^uint32(0) << (32 - n)
}
