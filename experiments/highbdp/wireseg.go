package highbdp

import "github.com/pseudocong/pseudocong/tcp"

// wireSeg is a tcp.Segment as a packet descriptor carries it here: every
// field but MP, the MPTCP option, which this scenario never sends (inject
// refuses one), in the narrowest type that holds its values. A full
// tcp.Segment is 190 bytes, 110 of them MP; copying it into every
// descriptor wrote four cache lines per packet, two of them lines the
// delivery never reads and so not in the cache: at 10 Gbit/s, with 10⁵
// descriptors in flight, each such write is a miss to memory. This is 68
// bytes, so a descriptor (pkt) is 128, two whole lines, and its SACK
// blocks are copied only when the segment has some.
// TestWireSegRoundTrip checks that it keeps every field of tcp.Segment
// but MP, so a field added there cannot be dropped here.
type wireSeg struct {
	Seq, Ack, TSVal, TSEcr uint32
	Len                    int32 // at most the MTU
	SrcPort, DstPort       uint16
	Flags                  tcp.Flags
	Window                 uint16
	MSS                    uint16
	NumSACK                uint8 // at most 4
	WScale                 int8
	SACKPermitted, HasTS   bool
	ECN                    tcp.ECN
	SACK                   [4]tcp.SACKBlock // the first NumSACK
}

// put copies s into w; s carries no MPTCP option.
func (w *wireSeg) put(s *tcp.Segment) {
	w.Seq, w.Ack, w.TSVal, w.TSEcr = s.Seq, s.Ack, s.TSVal, s.TSEcr
	w.Len, w.NumSACK = int32(s.Len), uint8(s.NumSACK)
	w.SrcPort, w.DstPort, w.Flags, w.Window = s.SrcPort, s.DstPort, s.Flags, s.Window
	w.MSS, w.WScale, w.SACKPermitted, w.HasTS, w.ECN = s.MSS, s.WScale, s.SACKPermitted, s.HasTS, s.ECN
	if s.NumSACK > 0 {
		w.SACK = s.SACK
	}
}

// get copies w into s, whose MP is left as it is (zero: see network's
// in). s's SACK blocks past NumSACK are stale, which tcp.Conn never reads.
func (w *wireSeg) get(s *tcp.Segment) {
	s.Seq, s.Ack, s.TSVal, s.TSEcr = w.Seq, w.Ack, w.TSVal, w.TSEcr
	s.Len, s.NumSACK = int(w.Len), int(w.NumSACK)
	s.SrcPort, s.DstPort, s.Flags, s.Window = w.SrcPort, w.DstPort, w.Flags, w.Window
	s.MSS, s.WScale, s.SACKPermitted, s.HasTS, s.ECN = w.MSS, w.WScale, w.SACKPermitted, w.HasTS, w.ECN
	if w.NumSACK > 0 {
		s.SACK = w.SACK
	}
}
