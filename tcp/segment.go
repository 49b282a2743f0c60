package tcp

import (
	"fmt"

	"github.com/pseudocong/pseudocong/packet"
)

// Flags are the TCP control bits, packet's encoding.
type Flags = packet.TCPFlags

// Flag bits used by the endpoint.
const (
	FlagFIN = packet.TCPFlagFIN
	FlagSYN = packet.TCPFlagSYN
	FlagRST = packet.TCPFlagRST
	FlagPSH = packet.TCPFlagPSH
	FlagACK = packet.TCPFlagACK
	FlagECE = packet.TCPFlagECE
	FlagCWR = packet.TCPFlagCWR
)

// ECN is the IP header's ECN codepoint (RFC 3168 values).
type ECN = packet.ECN

// SACKBlock is one SACK block [Left, Right).
type SACKBlock = packet.SACKBlock

// Segment is one TCP segment as the endpoint sees it: the header fields
// and options it uses, the payload's length (the simulator never
// materialises payload bytes) and the IP ECN codepoint.
//
// A Segment handed to the output function is valid only during the call:
// the endpoint reuses it. Input does not keep the segment it is given.
type Segment struct {
	// The fields are ordered by use: what every segment's Input reads
	// comes first, in 48 bytes, so that a model which keeps a Segment in
	// its packet descriptor right after the link's fields (one 64-byte
	// line) has the arriving segment in the line the link touched or the
	// next one. In a simulation with a large window every in-flight
	// descriptor is out of cache when it arrives, and each line it spans
	// is a memory access (experiments/highbdp at 10 Gbit/s).
	Seq, Ack     uint32
	TSVal, TSEcr uint32
	// Len is the payload length in bytes.
	Len     int
	NumSACK int
	// Window is as on the wire: scaled except on SYNs.
	SrcPort, DstPort uint16
	Flags            Flags
	Window           uint16
	// Options. MSS 0 and WScale < 0 mean absent.
	MSS           uint16
	WScale        int8
	SACKPermitted bool
	HasTS         bool
	// ECN is the IP codepoint the segment travels with; a marking queue
	// sets it to CE.
	ECN  ECN
	SACK [4]SACKBlock
	// MP is the MPTCP option (mpoption.go); package tcp leaves it alone.
	MP MPOption
}

// IP and TCP header sizes without options.
const (
	ipHeaderLen  = 20
	tcpHeaderLen = 20
)

// OptionsLen is the length of the TCP options as packet lays them out
// (Linux's layout, padded to 4 bytes).
func (s *Segment) OptionsLen() int {
	n := 0
	if s.MSS != 0 {
		n += 4
	}
	switch {
	case s.SACKPermitted && s.HasTS:
		n += 2
	case s.SACKPermitted:
		n += 4
	case s.HasTS:
		n += 2
	}
	if s.HasTS {
		n += 10
	}
	if s.WScale >= 0 {
		n += 4
	}
	if s.NumSACK > 0 {
		n += 4 + 8*s.NumSACK
	}
	n += s.MP.Len()
	return (n + 3) &^ 3
}

// WireLen is the IPv4 datagram's length: what a link serialises.
func (s *Segment) WireLen() int { return ipHeaderLen + tcpHeaderLen + s.OptionsLen() + s.Len }

// End is the sequence number after the segment (SYN counts one).
func (s *Segment) End() uint32 {
	e := s.Seq + uint32(s.Len)
	if s.Flags&FlagSYN != 0 {
		e++
	}
	if s.Flags&FlagFIN != 0 {
		e++
	}
	return e
}

func (s *Segment) String() string {
	return fmt.Sprintf("%d>%d seq=%d ack=%d len=%d flags=%#x win=%d sack=%v ecn=%v",
		s.SrcPort, s.DstPort, s.Seq, s.Ack, s.Len, uint16(s.Flags), s.Window, s.SACK[:s.NumSACK], s.ECN)
}

// Sequence-space comparisons (RFC 793 modular arithmetic).
func seqLT(a, b uint32) bool { return int32(a-b) < 0 }
func seqLE(a, b uint32) bool { return int32(a-b) <= 0 }
func seqGT(a, b uint32) bool { return int32(a-b) > 0 }
func seqGE(a, b uint32) bool { return int32(a-b) >= 0 }

// ECN codepoints.
const (
	ECNNotECT = packet.ECNNotECT
	ECNECT0   = packet.ECNECT0
	ECNECT1   = packet.ECNECT1
	ECNCE     = packet.ECNCE
)
