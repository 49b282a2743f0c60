package tcam

// Fields is the OpenFlow 1.0 12-tuple as a TCAM sees it. The tcam package
// imports nothing of the project, so callers (the software switch) convert
// openflow.Match and parsed packets into Fields themselves.
type Fields struct {
	InPort    uint16
	DlSrc     [6]byte
	DlDst     [6]byte
	DlVlan    uint16 // 12-bit VID, or 0xffff for "no VLAN tag" as in OpenFlow 1.0
	DlVlanPcp uint8
	DlType    uint16
	NwTos     uint8 // DSCP in the upper 6 bits, as in ofp_match
	NwProto   uint8
	NwSrc     uint32
	NwDst     uint32
	TpSrc     uint16
	TpDst     uint16
}

// Key is Fields packed into 320 bits. Layout (most significant bits first):
//
//	w[0]: in_port(16) dl_vlan(16) dl_type(16) dl_vlan_pcp(8) nw_tos(8)
//	w[1]: dl_src(48) nw_proto(8) unused(8)
//	w[2]: dl_dst(48) unused(16)
//	w[3]: nw_src(32) nw_dst(32)
//	w[4]: tp_src(16) tp_dst(16) unused(32)
//
// A packet is a Key; a rule is a Ternary (value and care-mask).
type Key [5]uint64

// Ternary is one TCAM word: a bit of Value matters only where Mask is 1.
type Ternary struct {
	Value Key
	Mask  Key
}

func mac48(m [6]byte) uint64 {
	return uint64(m[0])<<40 | uint64(m[1])<<32 | uint64(m[2])<<24 | uint64(m[3])<<16 | uint64(m[4])<<8 | uint64(m[5])
}

// Key packs the fields.
func (f Fields) Key() Key {
	return Key{
		uint64(f.InPort)<<48 | uint64(f.DlVlan)<<32 | uint64(f.DlType)<<16 | uint64(f.DlVlanPcp)<<8 | uint64(f.NwTos),
		mac48(f.DlSrc)<<16 | uint64(f.NwProto)<<8,
		mac48(f.DlDst) << 16,
		uint64(f.NwSrc)<<32 | uint64(f.NwDst),
		uint64(f.TpSrc)<<48 | uint64(f.TpDst)<<32,
	}
}

// Matches reports whether key k falls in t.
func (t *Ternary) Matches(k *Key) bool {
	return (k[0]^t.Value[0])&t.Mask[0] == 0 &&
		(k[1]^t.Value[1])&t.Mask[1] == 0 &&
		(k[2]^t.Value[2])&t.Mask[2] == 0 &&
		(k[3]^t.Value[3])&t.Mask[3] == 0 &&
		(k[4]^t.Value[4])&t.Mask[4] == 0
}

// Masked returns k with every don't-care bit cleared.
func (k Key) Masked(m *Key) Key {
	return Key{k[0] & m[0], k[1] & m[1], k[2] & m[2], k[3] & m[3], k[4] & m[4]}
}
