package openflow

import "encoding/binary"

// DescStatsRequest asks for the switch description (empty body).
type DescStatsRequest struct{}

// TableStatsRequest asks for per-table statistics (empty body).
type TableStatsRequest struct{}

// FlowStatsRequest is ofp_flow_stats_request: per-flow statistics of the
// flows matching Match in table TableID (TableAll for all), optionally only
// those with an output to OutPort (PortNone = any).
type FlowStatsRequest struct {
	Match   Match
	TableID uint8
	OutPort uint16
}

// AggregateStatsRequest is ofp_aggregate_stats_request (same layout as
// FlowStatsRequest, summed over the matching flows).
type AggregateStatsRequest struct {
	Match   Match
	TableID uint8
	OutPort uint16
}

// PortStatsRequest is ofp_port_stats_request (PortNone = all ports).
type PortStatsRequest struct {
	PortNo uint16
}

// QueueStatsRequest is ofp_queue_stats_request (PortAll / QueueAll for all).
type QueueStatsRequest struct {
	PortNo  uint16
	QueueID uint32
}

// VendorStatsRequest is a vendor statistics request kept raw; Data aliases
// the decoded buffer.
type VendorStatsRequest struct {
	Vendor uint32
	Data   []byte
}

const (
	flowStatsRequestLen  = 44
	portStatsRequestLen  = 8
	queueStatsRequestLen = 8
)

func (DescStatsRequest) StatsType() StatsType      { return StatsTypeDesc }
func (FlowStatsRequest) StatsType() StatsType      { return StatsTypeFlow }
func (AggregateStatsRequest) StatsType() StatsType { return StatsTypeAggregate }
func (TableStatsRequest) StatsType() StatsType     { return StatsTypeTable }
func (PortStatsRequest) StatsType() StatsType      { return StatsTypePort }
func (QueueStatsRequest) StatsType() StatsType     { return StatsTypeQueue }
func (VendorStatsRequest) StatsType() StatsType    { return StatsTypeVendor }

func (DescStatsRequest) Len() int                 { return 0 }
func (FlowStatsRequest) Len() int                 { return flowStatsRequestLen }
func (AggregateStatsRequest) Len() int            { return flowStatsRequestLen }
func (TableStatsRequest) Len() int                { return 0 }
func (PortStatsRequest) Len() int                 { return portStatsRequestLen }
func (QueueStatsRequest) Len() int                { return queueStatsRequestLen }
func (r VendorStatsRequest) Len() int             { return 4 + len(r.Data) }
func (DescStatsRequest) isStatsRequestBody()      {}
func (FlowStatsRequest) isStatsRequestBody()      {}
func (AggregateStatsRequest) isStatsRequestBody() {}
func (TableStatsRequest) isStatsRequestBody()     {}
func (PortStatsRequest) isStatsRequestBody()      {}
func (QueueStatsRequest) isStatsRequestBody()     {}
func (VendorStatsRequest) isStatsRequestBody()    {}

func (DescStatsRequest) AppendBody(b []byte) []byte  { return b }
func (TableStatsRequest) AppendBody(b []byte) []byte { return b }

func (r FlowStatsRequest) AppendBody(b []byte) []byte {
	return appendFlowStatsRequest(b, &r.Match, r.TableID, r.OutPort)
}

func (r AggregateStatsRequest) AppendBody(b []byte) []byte {
	return appendFlowStatsRequest(b, &r.Match, r.TableID, r.OutPort)
}

func appendFlowStatsRequest(b []byte, m *Match, tableID uint8, outPort uint16) []byte {
	b = m.AppendBinary(b)
	return append(b, tableID, 0, byte(outPort>>8), byte(outPort))
}

func (r PortStatsRequest) AppendBody(b []byte) []byte {
	return append(b, byte(r.PortNo>>8), byte(r.PortNo), 0, 0, 0, 0, 0, 0)
}

func (r QueueStatsRequest) AppendBody(b []byte) []byte {
	b = append(b, byte(r.PortNo>>8), byte(r.PortNo), 0, 0)
	return binary.BigEndian.AppendUint32(b, r.QueueID)
}

func (r VendorStatsRequest) AppendBody(b []byte) []byte {
	return append(binary.BigEndian.AppendUint32(b, r.Vendor), r.Data...)
}

// DecodeStatsRequestBody decodes the body of a STATS_REQUEST of kind t.
// Fixed-size bodies must have exactly their size.
func DecodeStatsRequestBody(t StatsType, b []byte) (StatsRequestBody, error) {
	switch t {
	case StatsTypeDesc, StatsTypeTable:
		if len(b) != 0 {
			return nil, lengthErr(t.String()+" stats request body", 0, len(b))
		}
		if t == StatsTypeDesc {
			return DescStatsRequest{}, nil
		}
		return TableStatsRequest{}, nil
	case StatsTypeFlow, StatsTypeAggregate:
		if len(b) != flowStatsRequestLen {
			return nil, lengthErr(t.String()+" stats request body", flowStatsRequestLen, len(b))
		}
		var m Match
		if err := m.DecodeFromBytes(b); err != nil {
			return nil, err
		}
		tableID, outPort := b[40], binary.BigEndian.Uint16(b[42:44])
		if t == StatsTypeFlow {
			return FlowStatsRequest{Match: m, TableID: tableID, OutPort: outPort}, nil
		}
		return AggregateStatsRequest{Match: m, TableID: tableID, OutPort: outPort}, nil
	case StatsTypePort:
		if len(b) != portStatsRequestLen {
			return nil, lengthErr("PORT stats request body", portStatsRequestLen, len(b))
		}
		return PortStatsRequest{PortNo: binary.BigEndian.Uint16(b[0:2])}, nil
	case StatsTypeQueue:
		if len(b) != queueStatsRequestLen {
			return nil, lengthErr("QUEUE stats request body", queueStatsRequestLen, len(b))
		}
		return QueueStatsRequest{PortNo: binary.BigEndian.Uint16(b[0:2]), QueueID: binary.BigEndian.Uint32(b[4:8])}, nil
	case StatsTypeVendor:
		if len(b) < 4 {
			return nil, lengthErr("VENDOR stats request body", 4, len(b))
		}
		return VendorStatsRequest{Vendor: binary.BigEndian.Uint32(b[0:4]), Data: nilIfEmpty(b[4:])}, nil
	}
	return nil, &UnknownStatsTypeError{Type: t}
}
