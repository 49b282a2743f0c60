package openflow

import "encoding/binary"

// DescStats is ofp_desc_stats (1056 bytes of NUL-padded strings).
type DescStats struct {
	MfrDesc   string // 256 bytes on the wire
	HwDesc    string // 256
	SwDesc    string // 256
	SerialNum string // 32
	DpDesc    string // 256
}

// FlowStats is one ofp_flow_stats entry.
type FlowStats struct {
	TableID      uint8
	Match        Match
	DurationSec  uint32
	DurationNsec uint32
	Priority     uint16
	IdleTimeout  uint16
	HardTimeout  uint16
	Cookie       uint64
	PacketCount  uint64
	ByteCount    uint64
	Actions      []Action
}

// FlowStatsReply is the body of a FLOW stats reply.
type FlowStatsReply []FlowStats

// AggregateStats is ofp_aggregate_stats_reply.
type AggregateStats struct {
	PacketCount uint64
	ByteCount   uint64
	FlowCount   uint32
}

// TableStats is one ofp_table_stats entry.
type TableStats struct {
	TableID      uint8
	Name         string // 32 bytes on the wire
	Wildcards    uint32 // Wildcard* bits the table supports
	MaxEntries   uint32
	ActiveCount  uint32
	LookupCount  uint64
	MatchedCount uint64
}

// TableStatsReply is the body of a TABLE stats reply.
type TableStatsReply []TableStats

// PortStats is one ofp_port_stats entry. Counters a switch does not keep
// are all ones (0xffffffffffffffff).
type PortStats struct {
	PortNo     uint16
	RxPackets  uint64
	TxPackets  uint64
	RxBytes    uint64
	TxBytes    uint64
	RxDropped  uint64
	TxDropped  uint64
	RxErrors   uint64
	TxErrors   uint64
	RxFrameErr uint64
	RxOverErr  uint64
	RxCRCErr   uint64
	Collisions uint64
}

// PortStatsReply is the body of a PORT stats reply.
type PortStatsReply []PortStats

// QueueStats is one ofp_queue_stats entry.
type QueueStats struct {
	PortNo    uint16
	QueueID   uint32
	TxBytes   uint64
	TxPackets uint64
	TxErrors  uint64
}

// QueueStatsReply is the body of a QUEUE stats reply.
type QueueStatsReply []QueueStats

// VendorStatsReply is a vendor statistics reply kept raw; Data aliases the
// decoded buffer.
type VendorStatsReply struct {
	Vendor uint32
	Data   []byte
}

const (
	descStrLen        = 256
	serialNumLen      = 32
	descStatsLen      = 4*descStrLen + serialNumLen
	flowStatsLen      = 88
	aggregateStatsLen = 24
	tableNameLen      = 32
	tableStatsLen     = 64
	portStatsLen      = 104
	queueStatsLen     = 32
)

func (DescStats) StatsType() StatsType        { return StatsTypeDesc }
func (FlowStatsReply) StatsType() StatsType   { return StatsTypeFlow }
func (AggregateStats) StatsType() StatsType   { return StatsTypeAggregate }
func (TableStatsReply) StatsType() StatsType  { return StatsTypeTable }
func (PortStatsReply) StatsType() StatsType   { return StatsTypePort }
func (QueueStatsReply) StatsType() StatsType  { return StatsTypeQueue }
func (VendorStatsReply) StatsType() StatsType { return StatsTypeVendor }
func (DescStats) isStatsReplyBody()           {}
func (FlowStatsReply) isStatsReplyBody()      {}
func (AggregateStats) isStatsReplyBody()      {}
func (TableStatsReply) isStatsReplyBody()     {}
func (PortStatsReply) isStatsReplyBody()      {}
func (QueueStatsReply) isStatsReplyBody()     {}
func (VendorStatsReply) isStatsReplyBody()    {}

func (DescStats) Len() int          { return descStatsLen }
func (AggregateStats) Len() int     { return aggregateStatsLen }
func (r TableStatsReply) Len() int  { return tableStatsLen * len(r) }
func (r PortStatsReply) Len() int   { return portStatsLen * len(r) }
func (r QueueStatsReply) Len() int  { return queueStatsLen * len(r) }
func (r VendorStatsReply) Len() int { return 4 + len(r.Data) }

// Len is the encoded length of this entry (ofp_flow_stats.length).
func (f *FlowStats) Len() int { return flowStatsLen + ActionsLen(f.Actions) }

func (r FlowStatsReply) Len() int {
	n := 0
	for i := range r {
		n += r[i].Len()
	}
	return n
}

func (d DescStats) AppendBody(b []byte) []byte {
	b = appendFixedString(b, d.MfrDesc, descStrLen)
	b = appendFixedString(b, d.HwDesc, descStrLen)
	b = appendFixedString(b, d.SwDesc, descStrLen)
	b = appendFixedString(b, d.SerialNum, serialNumLen)
	return appendFixedString(b, d.DpDesc, descStrLen)
}

func (r FlowStatsReply) AppendBody(b []byte) []byte {
	for i := range r {
		f := &r[i]
		b = binary.BigEndian.AppendUint16(b, uint16(f.Len()))
		b = append(b, f.TableID, 0)
		b = f.Match.AppendBinary(b)
		b = binary.BigEndian.AppendUint32(b, f.DurationSec)
		b = binary.BigEndian.AppendUint32(b, f.DurationNsec)
		b = binary.BigEndian.AppendUint16(b, f.Priority)
		b = binary.BigEndian.AppendUint16(b, f.IdleTimeout)
		b = binary.BigEndian.AppendUint16(b, f.HardTimeout)
		b = append(b, 0, 0, 0, 0, 0, 0)
		b = binary.BigEndian.AppendUint64(b, f.Cookie)
		b = binary.BigEndian.AppendUint64(b, f.PacketCount)
		b = binary.BigEndian.AppendUint64(b, f.ByteCount)
		b = AppendActions(b, f.Actions)
	}
	return b
}

func (a AggregateStats) AppendBody(b []byte) []byte {
	b = binary.BigEndian.AppendUint64(b, a.PacketCount)
	b = binary.BigEndian.AppendUint64(b, a.ByteCount)
	b = binary.BigEndian.AppendUint32(b, a.FlowCount)
	return append(b, 0, 0, 0, 0)
}

func (r TableStatsReply) AppendBody(b []byte) []byte {
	for i := range r {
		t := &r[i]
		b = append(b, t.TableID, 0, 0, 0)
		b = appendFixedString(b, t.Name, tableNameLen)
		b = binary.BigEndian.AppendUint32(b, t.Wildcards)
		b = binary.BigEndian.AppendUint32(b, t.MaxEntries)
		b = binary.BigEndian.AppendUint32(b, t.ActiveCount)
		b = binary.BigEndian.AppendUint64(b, t.LookupCount)
		b = binary.BigEndian.AppendUint64(b, t.MatchedCount)
	}
	return b
}

func (r PortStatsReply) AppendBody(b []byte) []byte {
	for i := range r {
		p := &r[i]
		b = append(b, byte(p.PortNo>>8), byte(p.PortNo), 0, 0, 0, 0, 0, 0)
		for _, v := range [...]uint64{p.RxPackets, p.TxPackets, p.RxBytes, p.TxBytes, p.RxDropped, p.TxDropped,
			p.RxErrors, p.TxErrors, p.RxFrameErr, p.RxOverErr, p.RxCRCErr, p.Collisions} {
			b = binary.BigEndian.AppendUint64(b, v)
		}
	}
	return b
}

func (r QueueStatsReply) AppendBody(b []byte) []byte {
	for i := range r {
		q := &r[i]
		b = append(b, byte(q.PortNo>>8), byte(q.PortNo), 0, 0)
		b = binary.BigEndian.AppendUint32(b, q.QueueID)
		b = binary.BigEndian.AppendUint64(b, q.TxBytes)
		b = binary.BigEndian.AppendUint64(b, q.TxPackets)
		b = binary.BigEndian.AppendUint64(b, q.TxErrors)
	}
	return b
}

func (r VendorStatsReply) AppendBody(b []byte) []byte {
	return append(binary.BigEndian.AppendUint32(b, r.Vendor), r.Data...)
}

// DecodeStatsReplyBody decodes the body of a STATS_REPLY of kind t. Lists
// must be a whole number of entries; flow entries are length-checked one by
// one, their actions as in DecodeActions. An empty list decodes to a nil
// slice of the list type (e.g. FlowStatsReply(nil)).
func DecodeStatsReplyBody(t StatsType, b []byte) (StatsReplyBody, error) {
	switch t {
	case StatsTypeDesc:
		if len(b) != descStatsLen {
			return nil, lengthErr("DESC stats reply body", descStatsLen, len(b))
		}
		return DescStats{
			MfrDesc:   cString(b[0:256]),
			HwDesc:    cString(b[256:512]),
			SwDesc:    cString(b[512:768]),
			SerialNum: cString(b[768:800]),
			DpDesc:    cString(b[800:1056]),
		}, nil
	case StatsTypeFlow:
		return decodeFlowStatsReply(b)
	case StatsTypeAggregate:
		if len(b) != aggregateStatsLen {
			return nil, lengthErr("AGGREGATE stats reply body", aggregateStatsLen, len(b))
		}
		return AggregateStats{
			PacketCount: binary.BigEndian.Uint64(b[0:8]),
			ByteCount:   binary.BigEndian.Uint64(b[8:16]),
			FlowCount:   binary.BigEndian.Uint32(b[16:20]),
		}, nil
	case StatsTypeTable:
		if len(b)%tableStatsLen != 0 {
			return nil, lengthErr("TABLE stats reply body (multiple of 64)", len(b)-len(b)%tableStatsLen, len(b))
		}
		var r TableStatsReply
		if n := len(b) / tableStatsLen; n > 0 {
			r = make(TableStatsReply, n)
		}
		for i := range r {
			e := b[i*tableStatsLen:]
			r[i] = TableStats{
				TableID:      e[0],
				Name:         cString(e[4:36]),
				Wildcards:    binary.BigEndian.Uint32(e[36:40]),
				MaxEntries:   binary.BigEndian.Uint32(e[40:44]),
				ActiveCount:  binary.BigEndian.Uint32(e[44:48]),
				LookupCount:  binary.BigEndian.Uint64(e[48:56]),
				MatchedCount: binary.BigEndian.Uint64(e[56:64]),
			}
		}
		return r, nil
	case StatsTypePort:
		if len(b)%portStatsLen != 0 {
			return nil, lengthErr("PORT stats reply body (multiple of 104)", len(b)-len(b)%portStatsLen, len(b))
		}
		var r PortStatsReply
		if n := len(b) / portStatsLen; n > 0 {
			r = make(PortStatsReply, n)
		}
		for i := range r {
			e := b[i*portStatsLen:]
			c := func(k int) uint64 { return binary.BigEndian.Uint64(e[8+8*k : 16+8*k]) }
			r[i] = PortStats{
				PortNo:    binary.BigEndian.Uint16(e[0:2]),
				RxPackets: c(0), TxPackets: c(1), RxBytes: c(2), TxBytes: c(3),
				RxDropped: c(4), TxDropped: c(5), RxErrors: c(6), TxErrors: c(7),
				RxFrameErr: c(8), RxOverErr: c(9), RxCRCErr: c(10), Collisions: c(11),
			}
		}
		return r, nil
	case StatsTypeQueue:
		if len(b)%queueStatsLen != 0 {
			return nil, lengthErr("QUEUE stats reply body (multiple of 32)", len(b)-len(b)%queueStatsLen, len(b))
		}
		var r QueueStatsReply
		if n := len(b) / queueStatsLen; n > 0 {
			r = make(QueueStatsReply, n)
		}
		for i := range r {
			e := b[i*queueStatsLen:]
			r[i] = QueueStats{
				PortNo:    binary.BigEndian.Uint16(e[0:2]),
				QueueID:   binary.BigEndian.Uint32(e[4:8]),
				TxBytes:   binary.BigEndian.Uint64(e[8:16]),
				TxPackets: binary.BigEndian.Uint64(e[16:24]),
				TxErrors:  binary.BigEndian.Uint64(e[24:32]),
			}
		}
		return r, nil
	case StatsTypeVendor:
		if len(b) < 4 {
			return nil, lengthErr("VENDOR stats reply body", 4, len(b))
		}
		return VendorStatsReply{Vendor: binary.BigEndian.Uint32(b[0:4]), Data: nilIfEmpty(b[4:])}, nil
	}
	return nil, &UnknownStatsTypeError{Type: t}
}

func decodeFlowStatsReply(b []byte) (FlowStatsReply, error) {
	var r FlowStatsReply
	for len(b) > 0 {
		if len(b) < flowStatsLen {
			return nil, lengthErr("ofp_flow_stats", flowStatsLen, len(b))
		}
		n := int(binary.BigEndian.Uint16(b[0:2]))
		if n < flowStatsLen || n > len(b) {
			return nil, lengthErr("ofp_flow_stats.length", len(b), n)
		}
		f := FlowStats{
			TableID:      b[2],
			DurationSec:  binary.BigEndian.Uint32(b[44:48]),
			DurationNsec: binary.BigEndian.Uint32(b[48:52]),
			Priority:     binary.BigEndian.Uint16(b[52:54]),
			IdleTimeout:  binary.BigEndian.Uint16(b[54:56]),
			HardTimeout:  binary.BigEndian.Uint16(b[56:58]),
			Cookie:       binary.BigEndian.Uint64(b[64:72]),
			PacketCount:  binary.BigEndian.Uint64(b[72:80]),
			ByteCount:    binary.BigEndian.Uint64(b[80:88]),
		}
		if err := f.Match.DecodeFromBytes(b[4:44]); err != nil {
			return nil, err
		}
		actions, err := DecodeActions(b[flowStatsLen:n])
		if err != nil {
			return nil, err
		}
		f.Actions = actions
		r = append(r, f)
		b = b[n:]
	}
	return r, nil
}
