package openflow

import (
	"encoding/binary"
	"errors"
)

// StatsType is ofp_stats_types.
type StatsType uint16

// OpenFlow 1.0 statistics kinds.
const (
	StatsTypeDesc      StatsType = 0      // OFPST_DESC
	StatsTypeFlow      StatsType = 1      // OFPST_FLOW
	StatsTypeAggregate StatsType = 2      // OFPST_AGGREGATE
	StatsTypeTable     StatsType = 3      // OFPST_TABLE
	StatsTypePort      StatsType = 4      // OFPST_PORT
	StatsTypeQueue     StatsType = 5      // OFPST_QUEUE
	StatsTypeVendor    StatsType = 0xffff // OFPST_VENDOR
)

func (t StatsType) String() string {
	if t == StatsTypeVendor {
		return "VENDOR"
	}
	return enumName([]string{"DESC", "FLOW", "AGGREGATE", "TABLE", "PORT", "QUEUE"}, uint16(t), "STATS")
}

// StatsReplyMore is OFPSF_REPLY_MORE: more replies to the same request follow.
const StatsReplyMore uint16 = 1 << 0

// StatsRequestBody is the body of a STATS_REQUEST: DescStatsRequest,
// FlowStatsRequest, AggregateStatsRequest, TableStatsRequest,
// PortStatsRequest, QueueStatsRequest or VendorStatsRequest. The body
// determines ofp_stats_request.type.
type StatsRequestBody interface {
	StatsType() StatsType
	// Len is the encoded body length.
	Len() int
	// AppendBody appends the body encoding.
	AppendBody(b []byte) []byte
	isStatsRequestBody()
}

// StatsReplyBody is the body of a STATS_REPLY: DescStats, FlowStatsReply,
// AggregateStats, TableStatsReply, PortStatsReply, QueueStatsReply or
// VendorStatsReply.
type StatsReplyBody interface {
	StatsType() StatsType
	Len() int
	AppendBody(b []byte) []byte
	isStatsReplyBody()
}

var errNilStatsBody = errors.New("openflow: stats message without a body")

// StatsRequest is OFPT_STATS_REQUEST.
type StatsRequest struct {
	Header
	Flags uint16 // none defined for requests
	Body  StatsRequestBody
}

// StatsReply is OFPT_STATS_REPLY. A long reply is split over several
// messages with the same xid, all but the last flagged StatsReplyMore.
type StatsReply struct {
	Header
	Flags uint16 // StatsReplyMore
	Body  StatsReplyBody
}

const statsHeaderLen = 12

func (m *StatsRequest) MsgType() Type { return TypeStatsRequest }
func (m *StatsReply) MsgType() Type   { return TypeStatsReply }

func (m *StatsRequest) Len() int {
	if m.Body == nil {
		return statsHeaderLen
	}
	return statsHeaderLen + m.Body.Len()
}

func (m *StatsReply) Len() int {
	if m.Body == nil {
		return statsHeaderLen
	}
	return statsHeaderLen + m.Body.Len()
}

// StatsType is the ofp_stats_types of the body (StatsTypeDesc if Body is nil).
func (m *StatsRequest) StatsType() StatsType {
	if m.Body == nil {
		return StatsTypeDesc
	}
	return m.Body.StatsType()
}

// StatsType is the ofp_stats_types of the body.
func (m *StatsReply) StatsType() StatsType {
	if m.Body == nil {
		return StatsTypeDesc
	}
	return m.Body.StatsType()
}

func (m *StatsRequest) AppendBinary(b []byte) ([]byte, error) {
	if m.Body == nil {
		return b, errNilStatsBody
	}
	b, err := beginMsg(b, TypeStatsRequest, m.Len(), m.Xid)
	if err != nil {
		return b, err
	}
	b = binary.BigEndian.AppendUint16(b, uint16(m.Body.StatsType()))
	b = binary.BigEndian.AppendUint16(b, m.Flags)
	return m.Body.AppendBody(b), nil
}

func (m *StatsReply) AppendBinary(b []byte) ([]byte, error) {
	if m.Body == nil {
		return b, errNilStatsBody
	}
	b, err := beginMsg(b, TypeStatsReply, m.Len(), m.Xid)
	if err != nil {
		return b, err
	}
	b = binary.BigEndian.AppendUint16(b, uint16(m.Body.StatsType()))
	b = binary.BigEndian.AppendUint16(b, m.Flags)
	return m.Body.AppendBody(b), nil
}

func (m *StatsRequest) DecodeFromBytes(b []byte) error {
	if err := decodeMsgHeader(&m.Header, b, TypeStatsRequest, statsHeaderLen, MaxMessageLen); err != nil {
		return err
	}
	m.Flags = binary.BigEndian.Uint16(b[10:12])
	body, err := DecodeStatsRequestBody(StatsType(binary.BigEndian.Uint16(b[8:10])), b[statsHeaderLen:])
	if err != nil {
		return err
	}
	m.Body = body
	return nil
}

func (m *StatsReply) DecodeFromBytes(b []byte) error {
	if err := decodeMsgHeader(&m.Header, b, TypeStatsReply, statsHeaderLen, MaxMessageLen); err != nil {
		return err
	}
	m.Flags = binary.BigEndian.Uint16(b[10:12])
	body, err := DecodeStatsReplyBody(StatsType(binary.BigEndian.Uint16(b[8:10])), b[statsHeaderLen:])
	if err != nil {
		return err
	}
	m.Body = body
	return nil
}
