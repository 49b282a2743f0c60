package probes

import (
	"fmt"
	"strings"
)

// Kind is what a probe measures: the handshake (SYN→SYN-ACK) or a data
// segment (DATA→ACK).
type Kind uint8

const (
	KindSYN Kind = iota + 1
	KindData
)

func (k Kind) String() string {
	switch k {
	case KindSYN:
		return "syn"
	case KindData:
		return "data"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// ParseKind accepts "syn" or "data" (case-insensitive).
func ParseKind(s string) (Kind, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "syn":
		return KindSYN, nil
	case "data":
		return KindData, nil
	}
	return 0, fmt.Errorf("unknown probe kind %q (want syn or data)", s)
}

// PacketType is the TCP segment a ProbePacket stands for.
type PacketType uint8

const (
	PacketSYN    PacketType = iota + 1 // prober → responder
	PacketSYNACK                       // responder → prober
	PacketData                         // prober → responder, one segment with payload
	PacketACK                          // responder → prober
)

func (t PacketType) String() string {
	switch t {
	case PacketSYN:
		return "SYN"
	case PacketSYNACK:
		return "SYN-ACK"
	case PacketData:
		return "DATA"
	case PacketACK:
		return "ACK"
	}
	return fmt.Sprintf("packet(%d)", uint8(t))
}

// request and reply map a probe kind to the segment it sends and the one it
// waits for.
func (k Kind) request() PacketType {
	if k == KindSYN {
		return PacketSYN
	}
	return PacketData
}

func (k Kind) reply() PacketType {
	if k == KindSYN {
		return PacketSYNACK
	}
	return PacketACK
}
