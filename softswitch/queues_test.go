package softswitch

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/pseudocong/pseudocong/netsim"
	"github.com/pseudocong/pseudocong/openflow"
	"github.com/pseudocong/pseudocong/softswitch/egress"
)

// queuedMemPort is a MemPort behind an egress.Shaper with a prio qdisc, as
// the live switch's emulated ports and a simulated switch's ports are.
type queuedMemPort struct {
	*MemPort
	eg *egress.Shaper
}

func (p *queuedMemPort) Transmit(f []byte) error { return p.eg.Transmit(f) }
func (p *queuedMemPort) NumQueues() int          { return p.eg.NumQueues() }
func (p *queuedMemPort) TransmitQueue(f []byte, q uint32) error {
	return p.eg.TransmitQueue(f, q)
}
func (p *queuedMemPort) QueueStats(q uint32) QueueCounters {
	s := p.eg.QueueStats(int(q))
	return QueueCounters{TxPackets: s.Dequeued, TxBytes: s.DequeuedBytes, TxErrors: s.Dropped}
}

type queueTestRig struct {
	*rig
	met *Metrics
}

// queueRig is a 2-port switch whose port 2 has the given prio qdisc.
func queueRig(t *testing.T, spec string) (*queueTestRig, *queuedMemPort) {
	t.Helper()
	met, err := NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	r := &queueTestRig{newRig(t, 1, Config{Metrics: met}), met}
	q, err := netsim.ParseQdisc(spec)
	if err != nil {
		t.Fatal(err)
	}
	mp := NewMemPort(2, "p2", MemPortMAC(1, 2), nil)
	// The shaper reuses its buffers after send; the MemPort keeps frames.
	send := func(f []byte) error { return mp.Transmit(append([]byte(nil), f...)) }
	eg, err := egress.New(r.sim, send, egress.Config{Qdisc: q})
	if err != nil {
		t.Fatal(err)
	}
	qp := &queuedMemPort{MemPort: mp, eg: eg}
	r.ports[2] = mp
	if err := r.sw.AddPort(qp); err != nil {
		t.Fatal(err)
	}
	r.ctl.take() // PORT_STATUS
	return r, qp
}

// A 100 kbit/s TBF queue (600-byte bucket) and a droptail queue:
// QUEUE_GET_CONFIG lists both; ENQUEUE to queue 0 is shaped on the virtual
// clock, ENQUEUE to queue 1 leaves at once; QUEUE stats count each queue.
func TestEnqueueSelectsPortQueue(t *testing.T) {
	r, _ := queueRig(t, "prio(tbf,rate=100kbit,burst=600,limit=100kb;droptail,limit=100)")

	r.send(&openflow.QueueGetConfigRequest{Header: openflow.Header{Xid: 3}, Port: 2})
	cfg := only[*openflow.QueueGetConfigReply](t, r.ctl)
	if cfg.Port != 2 || len(cfg.Queues) != 2 || cfg.Queues[0].QueueID != 0 || cfg.Queues[1].QueueID != 1 {
		t.Fatalf("queue config %+v, want port 2 with queues 0 and 1", cfg)
	}
	r.send(&openflow.QueueGetConfigRequest{Header: openflow.Header{Xid: 4}, Port: 1})
	if cfg := only[*openflow.QueueGetConfigReply](t, r.ctl); len(cfg.Queues) != 0 {
		t.Fatalf("port without queues reports %+v", cfg.Queues)
	}

	// UDP to port 80 -> queue 0 (shaped), to port 81 -> queue 1.
	match := func(dport uint16) openflow.Match {
		return openflow.Match{Wildcards: openflow.WildcardAll &^ (openflow.WildcardDlType | openflow.WildcardNwProto | openflow.WildcardTpDst),
			DlType: 0x0800, NwProto: 17, TpDst: dport}
	}
	r.send(flowMod(openflow.FlowModAdd, match(80), 10, openflow.ActionEnqueue{Port: 2, QueueID: 0}))
	r.send(flowMod(openflow.FlowModAdd, match(81), 10, openflow.ActionEnqueue{Port: 2, QueueID: 1}))
	if m := r.ctl.take(); len(m) != 0 {
		t.Fatalf("flow mods answered %v", types(m))
	}
	f0, f1 := udpFrame(t, 1, 80), udpFrame(t, 1, 81)
	const n = 30
	for range n {
		r.sw.Receive(1, append([]byte(nil), f0...))
		r.sw.Receive(1, append([]byte(nil), f1...))
	}
	sent := r.sent(2)
	var got0, got1 int
	for _, f := range sent {
		if f[36] == 0 && f[37] == 80 {
			got0++
		} else {
			got1++
		}
	}
	// The bucket starts full (600 bytes) and passes that many bytes at
	// once, then one frame per len*8/100k s; queue 1 sends all at once.
	if got1 != n {
		t.Fatalf("queue 1 (unshaped) sent %d of %d at once", got1, n)
	}
	burst := 600 / len(f0)
	if got0 != min(n, burst) {
		t.Fatalf("queue 0 (shaped) sent %d at once, want the bucket's %d", got0, min(n, burst))
	}
	// The rest of queue 0 leaves at the rate: after the time n frames take.
	r.sim.RunFor(time.Duration(float64(n*len(f0)*8) / 100e3 * float64(time.Second)))
	if rest := len(r.sent(2)); got0+rest != n {
		t.Fatalf("queue 0 sent %d after the shaping time, want %d in all", got0+rest, n)
	}

	r.send(statsReq(5, openflow.QueueStatsRequest{PortNo: openflow.PortAll, QueueID: openflow.QueueAll}))
	qs := only[*openflow.StatsReply](t, r.ctl).Body.(openflow.QueueStatsReply)
	if len(qs) != 2 {
		t.Fatalf("queue stats %+v, want two queues", qs)
	}
	for i, q := range qs {
		if q.PortNo != 2 || q.QueueID != uint32(i) || q.TxPackets != n || q.TxBytes != uint64(n*len(f0)) || q.TxErrors != 0 {
			t.Errorf("queue stats[%d] = %+v, want port 2 queue %d with %d packets, %d bytes", i, q, i, n, n*len(f0))
		}
	}
	r.send(statsReq(6, openflow.QueueStatsRequest{PortNo: 2, QueueID: 1}))
	if qs := only[*openflow.StatsReply](t, r.ctl).Body.(openflow.QueueStatsReply); len(qs) != 1 || qs[0].QueueID != 1 {
		t.Fatalf("queue 1 stats %+v", qs)
	}
	r.send(statsReq(7, openflow.QueueStatsRequest{PortNo: 2, QueueID: 2}))
	expectError(t, r.ctl, openflow.ErrorTypeQueueOpFailed, uint16(openflow.QueueOpFailedBadQueue))
	r.send(statsReq(8, openflow.QueueStatsRequest{PortNo: 9, QueueID: openflow.QueueAll}))
	expectError(t, r.ctl, openflow.ErrorTypeQueueOpFailed, uint16(openflow.QueueOpFailedBadPort))
}

// A queue's drops are its tx_errors; OUTPUT to a queued port uses queue 0.
func TestQueueStatsCountDrops(t *testing.T) {
	r, _ := queueRig(t, "prio(droptail,limit=2;droptail,limit=100)")
	// A rig port has no peer draining it, but the droptail has no rate:
	// frames leave at once. Make queue 0 hold them with a shaper instead.
	r2, _ := queueRig(t, "prio(tbf,rate=1kbit,burst=100,limit=120;droptail)")
	for _, rr := range []*queueTestRig{r, r2} {
		rr.send(flowMod(openflow.FlowModAdd, matchInPort(1), 10, output(2)))
		for range 5 {
			rr.sw.Receive(1, udpFrame(t, 1, 2))
		}
	}
	r.send(statsReq(5, openflow.QueueStatsRequest{PortNo: 2, QueueID: 0}))
	if qs := only[*openflow.StatsReply](t, r.ctl).Body.(openflow.QueueStatsReply); len(qs) != 1 || qs[0].TxPackets != 5 || qs[0].TxErrors != 0 {
		t.Fatalf("unshaped queue 0 stats %+v, want 5 sent", qs)
	}
	r2.send(statsReq(5, openflow.QueueStatsRequest{PortNo: 2, QueueID: 0}))
	qs := only[*openflow.StatsReply](t, r2.ctl).Body.(openflow.QueueStatsReply)
	// The 100-byte bucket passes the first 60-byte frame; the 120-byte
	// queue holds two more; two are dropped.
	if len(qs) != 1 || qs[0].TxPackets != 1 || qs[0].TxErrors != 2 {
		t.Fatalf("shaped queue 0 stats %+v, want 1 sent and 2 dropped", qs)
	}
	r2.send(statsReq(6, openflow.PortStatsRequest{PortNo: 2}))
	ps := only[*openflow.StatsReply](t, r2.ctl).Body.(openflow.PortStatsReply)
	if ps[0].TxDropped != 2 || ps[0].TxPackets != 3 {
		t.Fatalf("port stats %+v, want 3 tx and 2 tx_dropped", ps[0])
	}
}

// ENQUEUE to a queue the port lacks: FLOW_MOD and PACKET_OUT are refused
// with BAD_ACTION/BAD_QUEUE; a flow to IN_PORT (known only per packet)
// drops the frame and counts it. A port without queues takes ENQUEUE as
// OUTPUT.
func TestEnqueueUnknownQueue(t *testing.T) {
	r, _ := queueRig(t, "prio(droptail;droptail)")
	r.send(flowMod(openflow.FlowModAdd, matchInPort(1), 10, openflow.ActionEnqueue{Port: 2, QueueID: 2}))
	expectError(t, r.ctl, openflow.ErrorTypeBadAction, uint16(openflow.BadActionBadQueue))
	r.send(&openflow.PacketOut{Header: openflow.Header{Xid: 9}, BufferID: openflow.NoBuffer, InPort: openflow.PortNone,
		Actions: []openflow.Action{openflow.ActionEnqueue{Port: 2, QueueID: 7}}, Data: udpFrame(t, 1, 2)})
	expectError(t, r.ctl, openflow.ErrorTypeBadAction, uint16(openflow.BadActionBadQueue))

	// From port 2 back out of IN_PORT queue 5: accepted, dropped per packet.
	r.send(flowMod(openflow.FlowModAdd, matchInPort(2), 10, openflow.ActionEnqueue{Port: openflow.PortInPort, QueueID: 5}))
	if m := r.ctl.take(); len(m) != 0 {
		t.Fatalf("flow mod answered %v", types(m))
	}
	r.sw.Receive(2, udpFrame(t, 1, 2))
	if f := r.sent(2); len(f) != 0 {
		t.Fatalf("frame to a missing queue was sent: %d", len(f))
	}
	r.send(statsReq(6, openflow.PortStatsRequest{PortNo: 2}))
	if ps := only[*openflow.StatsReply](t, r.ctl).Body.(openflow.PortStatsReply); ps[0].TxDropped != 1 {
		t.Fatalf("port stats %+v, want 1 tx_dropped", ps[0])
	}
	if got := testutil.ToFloat64(r.met.dropVec.WithLabelValues("2", dropNoSuchQueue)); got != 1 {
		t.Fatalf("no_such_queue drops on port 2 = %v, want 1", got)
	}

	// Port 1 has no queues: ENQUEUE is OUTPUT.
	r.send(flowMod(openflow.FlowModAdd, matchInPort(2), 20, openflow.ActionEnqueue{Port: 1, QueueID: 3}))
	if m := r.ctl.take(); len(m) != 0 {
		t.Fatalf("flow mod answered %v", types(m))
	}
	r.sw.Receive(2, udpFrame(t, 1, 2))
	if f := r.sent(1); len(f) != 1 {
		t.Fatalf("ENQUEUE to a port without queues sent %d frames, want 1", len(f))
	}
}
