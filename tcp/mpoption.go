package tcp

// MPTCP options (RFC 8684) as the endpoint carries them. Package tcp
// itself never sets or reads them: package mptcp fills them in its output
// wrapper and reads them before handing a segment to Input. They live in
// Segment (a value, not a pointer) because links copy segments.

// MPKind is a bit set of the MPTCP option subtypes a segment carries.
type MPKind uint8

const (
	MPCapable MPKind = 1 << iota // MP_CAPABLE (subtype 0x0)
	MPJoin                       // MP_JOIN (subtype 0x1)
	MPDSS                        // DSS (subtype 0x2): DATA_ACK and/or mappings
)

// DSSMap is one DSS mapping: Len bytes from subflow sequence SubSeq
// (relative to the subflow's initial sequence, as RFC 8684 §3.3.1 has
// it) carry data-level bytes from DataSeq.
type DSSMap struct {
	DataSeq uint64
	SubSeq  uint32
	Len     uint16
}

// MPOption is the MPTCP state of one segment. Zero means no MPTCP option.
type MPOption struct {
	Kind MPKind
	// MP_CAPABLE: the sender's key on SYN and SYN-ACK; both keys on the
	// third ACK (Key the sender's, PeerKey the receiver's).
	Key, PeerKey uint64
	// MP_JOIN: the token of the connection to join (SYN) and the address
	// ID. The HMAC exchange is not modelled (no adversary here).
	Token  uint32
	AddrID uint8
	// DSS: a DATA_ACK with the connection-level window (DataWnd bytes from
	// DataAck; Linux carries it in the TCP window field, relative to the
	// DATA_ACK, see docs/mptcp.md) and up to two mappings.
	HasDataAck bool
	DataAck    uint64
	DataWnd    uint32
	NumMap     int
	Map        [2]DSSMap
}

// Len is the option's length on the wire in bytes, RFC 8684's layouts
// (8-byte data sequence numbers and DATA_ACKs, no checksum).
func (o *MPOption) Len() int {
	n := 0
	if o.Kind&MPCapable != 0 {
		if o.PeerKey != 0 {
			n += 20
		} else {
			n += 12
		}
	}
	if o.Kind&MPJoin != 0 {
		n += 12
	}
	if o.Kind&MPDSS != 0 {
		n += 4
		if o.HasDataAck {
			n += 8
		}
		n += 14 * o.NumMap
	}
	return n
}
