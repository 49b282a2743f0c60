// Package openflow implements the OpenFlow 1.0.0 wire protocol (version 0x01):
// every message type, ofp_match, every action, ofp_phy_port, error types and
// codes, the control channel's one sans-I/O state machine (Channel: HELLO
// and version negotiation, FEATURES and SET_CONFIG for the controller role,
// echo keepalive, on a clock.Clock), the one frame splitter (FrameReader),
// and a connection type that drives them over a socket (Conn: xid
// allocation, request/reply correlation, barrier, batched writes).
//
// Messages follow gopacket's layers shape: a struct per message that decodes
// from bytes into itself (DecodeFromBytes) and appends its encoding to a
// caller-owned buffer (AppendBinary). Decoders check every length field
// against the bytes actually present and return typed errors; they never
// panic and never allocate more than the input could justify.
//
// Of the project it imports only internal/clock.
package openflow

import (
	"encoding/binary"
	"fmt"
)

// Version is the only protocol version this package speaks.
const Version uint8 = 0x01

// HeaderLen is the size of ofp_header.
const HeaderLen = 8

// MaxMessageLen is the largest length an ofp_header can state.
const MaxMessageLen = 0xffff

// Type is ofp_type.
type Type uint8

// Message types of OpenFlow 1.0 (ofp_type).
const (
	TypeHello                 Type = 0
	TypeError                 Type = 1
	TypeEchoRequest           Type = 2
	TypeEchoReply             Type = 3
	TypeVendor                Type = 4
	TypeFeaturesRequest       Type = 5
	TypeFeaturesReply         Type = 6
	TypeGetConfigRequest      Type = 7
	TypeGetConfigReply        Type = 8
	TypeSetConfig             Type = 9
	TypePacketIn              Type = 10
	TypeFlowRemoved           Type = 11
	TypePortStatus            Type = 12
	TypePacketOut             Type = 13
	TypeFlowMod               Type = 14
	TypePortMod               Type = 15
	TypeStatsRequest          Type = 16
	TypeStatsReply            Type = 17
	TypeBarrierRequest        Type = 18
	TypeBarrierReply          Type = 19
	TypeQueueGetConfigRequest Type = 20
	TypeQueueGetConfigReply   Type = 21
)

var typeNames = [...]string{
	"HELLO", "ERROR", "ECHO_REQUEST", "ECHO_REPLY", "VENDOR",
	"FEATURES_REQUEST", "FEATURES_REPLY", "GET_CONFIG_REQUEST", "GET_CONFIG_REPLY",
	"SET_CONFIG", "PACKET_IN", "FLOW_REMOVED", "PORT_STATUS", "PACKET_OUT",
	"FLOW_MOD", "PORT_MOD", "STATS_REQUEST", "STATS_REPLY", "BARRIER_REQUEST",
	"BARRIER_REPLY", "QUEUE_GET_CONFIG_REQUEST", "QUEUE_GET_CONFIG_REPLY",
}

func (t Type) String() string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	return fmt.Sprintf("TYPE_%d", uint8(t))
}

// Header is ofp_header. Every message struct embeds it.
type Header struct {
	Version uint8
	Type    Type
	// Length is the length stated on the wire. Encoders ignore it and write
	// the real length; decoders fill it in.
	Length uint16
	Xid    uint32
}

// GetXid returns the transaction id.
func (h *Header) GetXid() uint32 { return h.Xid }

// SetXid sets the transaction id.
func (h *Header) SetXid(x uint32) { h.Xid = x }

// Hdr gives access to the embedded header.
func (h *Header) Hdr() *Header { return h }

// DecodeHeader reads an ofp_header from the first 8 bytes of b. It checks
// only that 8 bytes are present and that Length >= 8; the version is left to
// the caller (HELLO negotiation must see other versions).
func DecodeHeader(b []byte) (Header, error) {
	if len(b) < HeaderLen {
		return Header{}, &LengthError{What: "ofp_header", Want: HeaderLen, Got: len(b)}
	}
	h := Header{
		Version: b[0],
		Type:    Type(b[1]),
		Length:  binary.BigEndian.Uint16(b[2:4]),
		Xid:     binary.BigEndian.Uint32(b[4:8]),
	}
	if h.Length < HeaderLen {
		return h, &LengthError{What: "ofp_header.length", Want: HeaderLen, Got: int(h.Length)}
	}
	return h, nil
}

// appendHeader appends an ofp_header of version 1 with the given type,
// total message length and xid.
func appendHeader(b []byte, t Type, length int, xid uint32) []byte {
	return append(b, Version, uint8(t), byte(length>>8), byte(length), byte(xid>>24), byte(xid>>16), byte(xid>>8), byte(xid))
}

// Message is implemented by every OpenFlow 1.0 message struct.
type Message interface {
	// Hdr returns the embedded header (type, xid, stated length).
	Hdr() *Header
	GetXid() uint32
	SetXid(uint32)
	// MsgType is the ofp_type this struct encodes.
	MsgType() Type
	// Len is the encoded length in bytes, header included.
	Len() int
	// AppendBinary appends the complete encoding (header with the real
	// length) to b. It fails if the message cannot be encoded (for example
	// longer than 65535 bytes).
	AppendBinary(b []byte) ([]byte, error)
	// DecodeFromBytes decodes a whole message, header included, from b,
	// which must be exactly the message (len(b) == header length).
	DecodeFromBytes(b []byte) error
}

// LengthError reports a length field or buffer that does not fit.
type LengthError struct {
	What string
	Want int
	Got  int
}

func (e *LengthError) Error() string {
	return fmt.Sprintf("openflow: %s: bad length: want %d, got %d", e.What, e.Want, e.Got)
}
