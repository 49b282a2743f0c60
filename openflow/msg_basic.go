package openflow

import (
	"encoding/binary"
	"fmt"
)

// Hello is OFPT_HELLO. OpenFlow 1.0 defines no body, but Open vSwitch and
// OpenFlow 1.3+ peers append hello elements (a version bitmap); they are
// kept raw so that the message re-encodes byte for byte. Decoding accepts
// any ofp_header.version (the caller negotiates); encoding always writes
// version 0x01.
type Hello struct {
	Header
	Elements []byte
}

func (m *Hello) MsgType() Type { return TypeHello }
func (m *Hello) Len() int      { return HeaderLen + len(m.Elements) }

func (m *Hello) AppendBinary(b []byte) ([]byte, error) {
	b, err := beginMsg(b, TypeHello, m.Len(), m.Xid)
	if err != nil {
		return b, err
	}
	return append(b, m.Elements...), nil
}

func (m *Hello) DecodeFromBytes(b []byte) error {
	if err := decodeMsgHeader(&m.Header, b, TypeHello, HeaderLen, MaxMessageLen); err != nil {
		return err
	}
	m.Elements = nilIfEmpty(b[HeaderLen:])
	return nil
}

// EchoRequest is OFPT_ECHO_REQUEST; Data is echoed back unchanged.
type EchoRequest struct {
	Header
	Data []byte
}

func (m *EchoRequest) MsgType() Type { return TypeEchoRequest }
func (m *EchoRequest) Len() int      { return HeaderLen + len(m.Data) }

func (m *EchoRequest) AppendBinary(b []byte) ([]byte, error) {
	return appendRawMsg(b, TypeEchoRequest, m.Xid, m.Data)
}

func (m *EchoRequest) DecodeFromBytes(b []byte) error {
	return decodeRawMsg(&m.Header, &m.Data, b, TypeEchoRequest)
}

// EchoReply is OFPT_ECHO_REPLY.
type EchoReply struct {
	Header
	Data []byte
}

func (m *EchoReply) MsgType() Type { return TypeEchoReply }
func (m *EchoReply) Len() int      { return HeaderLen + len(m.Data) }

func (m *EchoReply) AppendBinary(b []byte) ([]byte, error) {
	return appendRawMsg(b, TypeEchoReply, m.Xid, m.Data)
}

func (m *EchoReply) DecodeFromBytes(b []byte) error {
	return decodeRawMsg(&m.Header, &m.Data, b, TypeEchoReply)
}

func appendRawMsg(b []byte, t Type, xid uint32, data []byte) ([]byte, error) {
	b, err := beginMsg(b, t, HeaderLen+len(data), xid)
	if err != nil {
		return b, err
	}
	return append(b, data...), nil
}

func decodeRawMsg(h *Header, data *[]byte, b []byte, t Type) error {
	if err := decodeMsgHeader(h, b, t, HeaderLen, MaxMessageLen); err != nil {
		return err
	}
	*data = nilIfEmpty(b[HeaderLen:])
	return nil
}

// Vendor is OFPT_VENDOR: a vendor id and an opaque body.
type Vendor struct {
	Header
	Vendor uint32
	Data   []byte
}

func (m *Vendor) MsgType() Type { return TypeVendor }
func (m *Vendor) Len() int      { return HeaderLen + 4 + len(m.Data) }

func (m *Vendor) AppendBinary(b []byte) ([]byte, error) {
	b, err := beginMsg(b, TypeVendor, m.Len(), m.Xid)
	if err != nil {
		return b, err
	}
	b = binary.BigEndian.AppendUint32(b, m.Vendor)
	return append(b, m.Data...), nil
}

func (m *Vendor) DecodeFromBytes(b []byte) error {
	if err := decodeMsgHeader(&m.Header, b, TypeVendor, HeaderLen+4, MaxMessageLen); err != nil {
		return err
	}
	m.Vendor = binary.BigEndian.Uint32(b[8:12])
	m.Data = nilIfEmpty(b[12:])
	return nil
}

// FeaturesRequest is OFPT_FEATURES_REQUEST (header only).
type FeaturesRequest struct{ Header }

// GetConfigRequest is OFPT_GET_CONFIG_REQUEST (header only).
type GetConfigRequest struct{ Header }

// BarrierRequest is OFPT_BARRIER_REQUEST (header only).
type BarrierRequest struct{ Header }

// BarrierReply is OFPT_BARRIER_REPLY (header only).
type BarrierReply struct{ Header }

func (m *FeaturesRequest) MsgType() Type  { return TypeFeaturesRequest }
func (m *GetConfigRequest) MsgType() Type { return TypeGetConfigRequest }
func (m *BarrierRequest) MsgType() Type   { return TypeBarrierRequest }
func (m *BarrierReply) MsgType() Type     { return TypeBarrierReply }

func (m *FeaturesRequest) Len() int  { return HeaderLen }
func (m *GetConfigRequest) Len() int { return HeaderLen }
func (m *BarrierRequest) Len() int   { return HeaderLen }
func (m *BarrierReply) Len() int     { return HeaderLen }

func (m *FeaturesRequest) AppendBinary(b []byte) ([]byte, error) {
	return appendHeader(b, TypeFeaturesRequest, HeaderLen, m.Xid), nil
}
func (m *GetConfigRequest) AppendBinary(b []byte) ([]byte, error) {
	return appendHeader(b, TypeGetConfigRequest, HeaderLen, m.Xid), nil
}
func (m *BarrierRequest) AppendBinary(b []byte) ([]byte, error) {
	return appendHeader(b, TypeBarrierRequest, HeaderLen, m.Xid), nil
}
func (m *BarrierReply) AppendBinary(b []byte) ([]byte, error) {
	return appendHeader(b, TypeBarrierReply, HeaderLen, m.Xid), nil
}

func (m *FeaturesRequest) DecodeFromBytes(b []byte) error {
	return decodeMsgHeader(&m.Header, b, TypeFeaturesRequest, HeaderLen, HeaderLen)
}
func (m *GetConfigRequest) DecodeFromBytes(b []byte) error {
	return decodeMsgHeader(&m.Header, b, TypeGetConfigRequest, HeaderLen, HeaderLen)
}
func (m *BarrierRequest) DecodeFromBytes(b []byte) error {
	return decodeMsgHeader(&m.Header, b, TypeBarrierRequest, HeaderLen, HeaderLen)
}
func (m *BarrierReply) DecodeFromBytes(b []byte) error {
	return decodeMsgHeader(&m.Header, b, TypeBarrierReply, HeaderLen, HeaderLen)
}

// ErrorMsg is OFPT_ERROR. Type shadows Header.Type: it is the
// ofp_error_type; the message type is m.Header.Type. Data holds (at least 64
// bytes of) the offending request for the failed-request error types, or
// an ASCII string for HELLO_FAILED.
type ErrorMsg struct {
	Header
	Type ErrorType
	Code uint16
	Data []byte
}

const errorMsgLen = HeaderLen + 4

// errorDataMax is how much of a failed request an ERROR carries (the spec
// asks for at least 64 bytes).
const errorDataMax = 64

func (m *ErrorMsg) MsgType() Type { return TypeError }
func (m *ErrorMsg) Len() int      { return errorMsgLen + len(m.Data) }

func (m *ErrorMsg) AppendBinary(b []byte) ([]byte, error) {
	b, err := beginMsg(b, TypeError, m.Len(), m.Xid)
	if err != nil {
		return b, err
	}
	b = binary.BigEndian.AppendUint16(b, uint16(m.Type))
	b = binary.BigEndian.AppendUint16(b, m.Code)
	return append(b, m.Data...), nil
}

func (m *ErrorMsg) DecodeFromBytes(b []byte) error {
	if err := decodeMsgHeader(&m.Header, b, TypeError, errorMsgLen, MaxMessageLen); err != nil {
		return err
	}
	m.Type = ErrorType(binary.BigEndian.Uint16(b[8:10]))
	m.Code = binary.BigEndian.Uint16(b[10:12])
	m.Data = nilIfEmpty(b[12:])
	return nil
}

// Error makes a received ERROR usable as a Go error, e.g. as the result of a
// request that the switch refused.
func (m *ErrorMsg) Error() string {
	return fmt.Sprintf("openflow: peer error %v/%s (xid %d)", m.Type, CodeString(m.Type, m.Code), m.Xid)
}

// NewErrorFor builds the ERROR a switch sends for the request req: same xid,
// Data = a copy of the first 64 bytes of req (the spec asks for at least 64
// bytes of the failed request). req may be malformed or shorter than a
// header; the xid is then taken from whatever bytes exist (else 0).
func NewErrorFor(req []byte, t ErrorType, code uint16) *ErrorMsg {
	var xid uint32
	if len(req) >= HeaderLen {
		xid = binary.BigEndian.Uint32(req[4:8])
	}
	n := min(len(req), errorDataMax)
	var data []byte
	if n > 0 {
		data = make([]byte, n)
		copy(data, req)
	}
	return &ErrorMsg{
		Header: Header{Version: Version, Type: TypeError, Xid: xid},
		Type:   t,
		Code:   code,
		Data:   data,
	}
}
