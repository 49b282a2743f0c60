package softswitch

import (
	"time"

	"github.com/pseudocong/pseudocong/openflow"
	"github.com/pseudocong/pseudocong/softswitch/flowtable"
)

// Description strings of the DESC stats reply.
const (
	MfrDesc = "pseudocong"
	HwDesc  = "software switch (TCAM model)"
	SwDesc  = "pseudocong softswitch (OpenFlow 1.0)"
)

// statsReplyLimit is the largest STATS_REPLY body put in one message;
// longer replies are split into parts flagged OFPSF_REPLY_MORE.
const statsReplyLimit = openflow.MaxMessageLen - 12

func (s *Switch) statsLocked(ch Channel, req *openflow.StatsRequest) {
	reply := func(body openflow.StatsReplyBody, flags uint16) {
		s.sendLocked(ch, &openflow.StatsReply{
			Header: openflow.Header{Version: openflow.Version, Type: openflow.TypeStatsReply, Xid: req.Xid},
			Flags:  flags,
			Body:   body,
		})
	}
	now := s.clk.Now()
	switch b := req.Body.(type) {
	case openflow.DescStatsRequest:
		reply(openflow.DescStats{MfrDesc: MfrDesc, HwDesc: HwDesc, SwDesc: SwDesc,
			SerialNum: s.cfg.SerialNum, DpDesc: s.cfg.DpDesc}, 0)
	case openflow.FlowStatsRequest:
		parts := splitFlowStats(flowStats(s.selectLocked(b.TableID, b.Match, b.OutPort), now))
		for i, p := range parts {
			var flags uint16
			if i < len(parts)-1 {
				flags = openflow.StatsReplyMore
			}
			reply(p, flags)
		}
	case openflow.AggregateStatsRequest:
		var agg openflow.AggregateStats
		for _, te := range s.selectLocked(b.TableID, b.Match, b.OutPort) {
			agg.PacketCount += te.e.PacketCount
			agg.ByteCount += te.e.ByteCount
			agg.FlowCount++
		}
		reply(agg, 0)
	case openflow.TableStatsRequest:
		reply(openflow.TableStatsReply{{
			TableID:      0,
			Name:         "classifier",
			Wildcards:    openflow.WildcardAll,
			MaxEntries:   uint32(min(s.table.Capacity(), 1<<32-1)),
			ActiveCount:  uint32(s.table.Len()),
			LookupCount:  s.table.Lookups(),
			MatchedCount: s.table.Matched(),
		}}, 0)
	case openflow.PortStatsRequest:
		var r openflow.PortStatsReply
		for _, p := range s.sortedPortsLocked() {
			if b.PortNo == openflow.PortNone || b.PortNo == p.port.No() {
				r = append(r, p.stats)
			}
		}
		// At most 630 ports fit one reply; split like flow stats.
		for len(r) > statsReplyLimit/104 {
			n := statsReplyLimit / 104
			reply(r[:n], openflow.StatsReplyMore)
			r = r[n:]
		}
		reply(r, 0)
	case openflow.QueueStatsRequest:
		r, code, ok := s.queueStatsLocked(b.PortNo, b.QueueID)
		if !ok {
			s.sendErrorLocked(ch, req, openflow.ErrorTypeQueueOpFailed, uint16(code))
			return
		}
		// ofp_queue_stats is 32 bytes; split like port stats.
		for len(r) > statsReplyLimit/32 {
			n := statsReplyLimit / 32
			reply(r[:n], openflow.StatsReplyMore)
			r = r[n:]
		}
		reply(r, 0)
	case openflow.VendorStatsRequest:
		s.sendErrorLocked(ch, req, openflow.ErrorTypeBadRequest, uint16(openflow.BadRequestBadVendor))
	default:
		s.sendErrorLocked(ch, req, openflow.ErrorTypeBadRequest, uint16(openflow.BadRequestBadStat))
	}
}

// tableEntry is an entry with the id of the table holding it.
type tableEntry struct {
	table uint8
	e     *flowtable.Entry
}

// selectLocked returns the entries a flow/aggregate stats request selects:
// table 0 (the flow table), 0xfe (emergency entries) or 0xff (both).
func (s *Switch) selectLocked(tableID uint8, m openflow.Match, outPort uint16) []tableEntry {
	var out []tableEntry
	if tableID == 0 || tableID == openflow.TableAll {
		for _, e := range s.table.Select(m, outPort) {
			out = append(out, tableEntry{0, e})
		}
	}
	if tableID == openflow.TableEmergency || tableID == openflow.TableAll {
		for _, e := range s.emerg.Select(m, outPort) {
			out = append(out, tableEntry{openflow.TableEmergency, e})
		}
	}
	return out
}

func flowStats(entries []tableEntry, now time.Time) openflow.FlowStatsReply {
	r := make(openflow.FlowStatsReply, 0, len(entries))
	for _, te := range entries {
		e := te.e
		d := e.Duration(now)
		r = append(r, openflow.FlowStats{
			TableID: te.table, Match: e.Match,
			DurationSec: uint32(d / time.Second), DurationNsec: uint32(d % time.Second),
			Priority: e.Priority, IdleTimeout: e.IdleTimeout, HardTimeout: e.HardTimeout,
			Cookie: e.Cookie, PacketCount: e.PacketCount, ByteCount: e.ByteCount,
			Actions: e.Actions,
		})
	}
	return r
}

// splitFlowStats cuts a flow stats reply into message-sized parts. There
// is always at least one part (possibly empty).
func splitFlowStats(all openflow.FlowStatsReply) []openflow.FlowStatsReply {
	var parts []openflow.FlowStatsReply
	start, size := 0, 0
	for i := range all {
		n := all[i].Len()
		if size+n > statsReplyLimit && i > start {
			parts = append(parts, all[start:i])
			start, size = i, 0
		}
		size += n
	}
	return append(parts, all[start:])
}

// queueStatsLocked collects QUEUE stats for port (or OFPP_ALL) and queue
// (or OFPQ_ALL), as Open vSwitch answers them: an unknown port is
// BAD_PORT; a queue id that the named port (or, for OFPP_ALL, every port)
// lacks is BAD_QUEUE.
func (s *Switch) queueStatsLocked(port uint16, queue uint32) (openflow.QueueStatsReply, openflow.QueueOpFailedCode, bool) {
	var ports []*portState
	if port == openflow.PortAll || port == openflow.PortNone {
		ports = s.sortedPortsLocked()
	} else {
		ps, ok := s.ports[port]
		if !ok {
			return nil, openflow.QueueOpFailedBadPort, false
		}
		ports = []*portState{ps}
	}
	r := openflow.QueueStatsReply{}
	for _, ps := range ports {
		qp, ok := ps.port.(QueuedPort)
		if !ok {
			continue
		}
		for q := range uint32(qp.NumQueues()) {
			if queue != openflow.QueueAll && queue != q {
				continue
			}
			c := qp.QueueStats(q)
			r = append(r, openflow.QueueStats{PortNo: ps.port.No(), QueueID: q,
				TxBytes: c.TxBytes, TxPackets: c.TxPackets, TxErrors: c.TxErrors})
		}
	}
	if queue != openflow.QueueAll && len(r) == 0 {
		return nil, openflow.QueueOpFailedBadQueue, false
	}
	return r, 0, true
}
