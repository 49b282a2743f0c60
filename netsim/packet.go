package netsim

// ECN is the two-bit Explicit Congestion Notification field of an IP
// header, with the RFC 3168 bit values so a shell that owns the frame can
// copy it into the header unchanged.
type ECN uint8

const (
	NotECT ECN = 0b00 // the sender does not speak ECN: a marking qdisc must drop it
	ECT1   ECN = 0b01
	ECT0   ECN = 0b10
	CE     ECN = 0b11 // congestion experienced: set by a marking qdisc
)

// ECT reports whether the packet is ECN-capable (ECT(0), ECT(1) or already
// CE), so a marking qdisc may mark it instead of dropping it.
func (e ECN) ECT() bool { return e != NotECT }

func (e ECN) String() string {
	switch e {
	case NotECT:
		return "Not-ECT"
	case ECT1:
		return "ECT(1)"
	case ECT0:
		return "ECT(0)"
	default:
		return "CE"
	}
}

// Packet is the descriptor the substrate moves. It carries only what a link
// or qdisc looks at; parsing the frame is another package's job.
//
// The substrate never copies or frees a Packet: whoever sends it owns it
// again when it is delivered or dropped (Link.Deliver / Link.Drop), so a
// model can recycle descriptors and the hot path does not allocate.
type Packet struct {
	// Len is the size on the wire in bytes: what serialisation time, byte
	// limits and token buckets count.
	Len int
	// ECN is the packet's codepoint. A marking qdisc sets it to CE; it does
	// not rewrite Frame (the owner of the frame does, if it keeps one).
	ECN ECN
	// Queue selects the child of a MultiQueue (OpenFlow ENQUEUE's queue id).
	Queue uint32
	// Frame is the wire frame, if the model has one (the live shell does).
	Frame []byte
	// Meta is the model's own descriptor (a TCP segment, a probe id, ...).
	Meta any
}
