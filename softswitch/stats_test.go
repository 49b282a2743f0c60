package softswitch

import (
	"testing"

	"github.com/pseudocong/pseudocong/openflow"
)

func TestStatsReplies(t *testing.T) {
	r := newRig(t, 3, Config{TableCapacity: 5000})
	r.send(flowMod(openflow.FlowModAdd, matchInPort(1), 10, output(2)))
	r.send(flowMod(openflow.FlowModAdd, matchInPort(2), 20, output(3)))
	r.sw.Receive(1, udpFrame(t, 1, 2))
	r.sw.Receive(1, udpFrame(t, 1, 2))
	r.sw.Receive(3, udpFrame(t, 1, 2)) // miss
	r.ctl.take()

	r.send(statsReq(1, openflow.DescStatsRequest{}))
	d := only[*openflow.StatsReply](t, r.ctl).Body.(openflow.DescStats)
	if d.MfrDesc != "pseudocong" || d.HwDesc != "software switch (TCAM model)" {
		t.Fatalf("desc %+v", d)
	}

	r.send(statsReq(2, openflow.FlowStatsRequest{Match: matchInPort(1), TableID: 0, OutPort: openflow.PortNone}))
	fs := only[*openflow.StatsReply](t, r.ctl).Body.(openflow.FlowStatsReply)
	if len(fs) != 1 || fs[0].Priority != 10 || fs[0].PacketCount != 2 {
		t.Fatalf("flow stats %+v", fs)
	}
	r.send(statsReq(3, openflow.FlowStatsRequest{Match: openflow.MatchAll(), TableID: 0xff, OutPort: 3}))
	if fs := only[*openflow.StatsReply](t, r.ctl).Body.(openflow.FlowStatsReply); len(fs) != 1 || fs[0].Priority != 20 {
		t.Fatalf("out_port filter: %+v", fs)
	}

	r.send(statsReq(4, openflow.AggregateStatsRequest{Match: openflow.MatchAll(), TableID: 0xff, OutPort: openflow.PortNone}))
	agg := only[*openflow.StatsReply](t, r.ctl).Body.(openflow.AggregateStats)
	if agg.FlowCount != 2 || agg.PacketCount != 2 {
		t.Fatalf("aggregate %+v", agg)
	}

	r.send(statsReq(5, openflow.TableStatsRequest{}))
	ts := only[*openflow.StatsReply](t, r.ctl).Body.(openflow.TableStatsReply)
	if len(ts) != 1 || ts[0].ActiveCount != 2 || ts[0].LookupCount != 3 || ts[0].MatchedCount != 2 || ts[0].MaxEntries != 5000 {
		t.Fatalf("table stats %+v", ts)
	}

	r.send(statsReq(6, openflow.PortStatsRequest{PortNo: openflow.PortNone}))
	ps := only[*openflow.StatsReply](t, r.ctl).Body.(openflow.PortStatsReply)
	if len(ps) != 3 || ps[0].RxPackets != 2 || ps[1].TxPackets != 2 || ps[2].RxPackets != 1 {
		t.Fatalf("port stats %+v", ps)
	}
	r.send(statsReq(7, openflow.PortStatsRequest{PortNo: 2}))
	if ps := only[*openflow.StatsReply](t, r.ctl).Body.(openflow.PortStatsReply); len(ps) != 1 || ps[0].PortNo != 2 {
		t.Fatalf("port 2 stats %+v", ps)
	}

	r.send(statsReq(8, openflow.QueueStatsRequest{PortNo: openflow.PortAll, QueueID: openflow.QueueAll}))
	if q := only[*openflow.StatsReply](t, r.ctl).Body.(openflow.QueueStatsReply); len(q) != 0 {
		t.Fatalf("queues %+v", q)
	}
	r.send(statsReq(9, openflow.QueueStatsRequest{PortNo: 1, QueueID: 3}))
	expectError(t, r.ctl, openflow.ErrorTypeQueueOpFailed, uint16(openflow.QueueOpFailedBadQueue))
	r.send(&openflow.QueueGetConfigRequest{Header: openflow.Header{Xid: 10}, Port: 1})
	if q := only[*openflow.QueueGetConfigReply](t, r.ctl); q.Port != 1 || len(q.Queues) != 0 {
		t.Fatalf("queue config %+v", q)
	}
}

func TestFlowStatsSplitWithReplyMore(t *testing.T) {
	r := newRig(t, 1, Config{})
	const n = 2000
	// Each entry: 88 bytes + 4 actions (32 bytes) = 120 bytes: 2000 entries
	// need 240 000 bytes, i.e. four messages.
	for i := range n {
		m := openflow.Match{Wildcards: openflow.WildcardAll &^ openflow.WildcardTpDst, TpDst: uint16(i)}
		r.send(flowMod(openflow.FlowModAdd, m, 1, output(1), output(2), output(3), output(4)))
	}
	r.ctl.take()
	r.send(statsReq(77, openflow.FlowStatsRequest{Match: openflow.MatchAll(), TableID: 0xff, OutPort: openflow.PortNone}))
	msgs := r.ctl.take()
	total := 0
	seen := map[uint16]bool{}
	for i, m := range msgs {
		sr := m.(*openflow.StatsReply)
		more := sr.Flags&openflow.StatsReplyMore != 0
		if more != (i < len(msgs)-1) || sr.Xid != 77 || sr.Len() > openflow.MaxMessageLen {
			t.Fatalf("part %d/%d: flags %#x xid %d len %d", i, len(msgs), sr.Flags, sr.Xid, sr.Len())
		}
		for _, f := range sr.Body.(openflow.FlowStatsReply) {
			seen[f.Match.TpDst] = true
			total++
		}
	}
	if len(msgs) != 4 || total != n || len(seen) != n {
		t.Fatalf("%d parts, %d entries (%d distinct), want 4 parts and %d", len(msgs), total, len(seen), n)
	}
}
