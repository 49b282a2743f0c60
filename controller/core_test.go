package controller

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/pseudocong/pseudocong/controller/flowsyntax"
	"github.com/pseudocong/pseudocong/openflow"
)

// TestHandlingTimeUsesCoreClock: the Packet-In → FLOW_MOD time comes from
// the injected clock (so the simulator measures modelled time), and only
// PACKET_INs that produce a FLOW_MOD are observed.
func TestHandlingTimeUsesCoreClock(t *testing.T) {
	reg := prometheus.NewRegistry()
	metrics, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	clk := &stepClock{now: time.Unix(1000, 0), step: 3 * time.Millisecond}
	sess := NewCore(Config{App: NewReactive(ReactiveConfig{}), Clock: clk, Metrics: metrics}).Connect(newFakeSwitch(1))
	sess.Handle(packetIn(1, 1, 1, frame(bcast, macA, 0x0806, nil)))                      // flood: no FLOW_MOD
	sess.Handle(packetIn(2, 2, 2, tcpFrame(macA, macB, ipB, ipA, 1, 2)))                 // FLOW_MOD
	sess.Handle(packetIn(3, openflow.NoBuffer, 2, tcpFrame(macA, macB, ipB, ipA, 3, 4))) // FLOW_MOD + PACKET_OUT

	if n := testutil.CollectAndCount(metrics.handling); n != 1 {
		t.Fatalf("histogram series = %d", n)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "pseudocong_controller_packet_in_handling_seconds" {
			continue
		}
		h := mf.GetMetric()[0].GetHistogram()
		if h.GetSampleCount() != 2 {
			t.Errorf("handling samples = %d, want 2 (floods are not FLOW_MODs)", h.GetSampleCount())
		}
		if got := h.GetSampleSum(); got < 0.00599 || got > 0.00601 {
			t.Errorf("handling sum = %v s, want 2 × 3 ms from the step clock", got)
		}
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP pseudocong_controller_flow_mods_total FLOW_MOD messages sent to switches.
# TYPE pseudocong_controller_flow_mods_total counter
pseudocong_controller_flow_mods_total 2
# HELP pseudocong_controller_connected_switches Switches that completed the OpenFlow handshake and are connected.
# TYPE pseudocong_controller_connected_switches gauge
pseudocong_controller_connected_switches 1
`), "pseudocong_controller_flow_mods_total", "pseudocong_controller_connected_switches"); err != nil {
		t.Error(err)
	}
	if got := testutil.ToFloat64(metrics.messages[dirIn][openflow.TypePacketIn]); got != 3 {
		t.Errorf("messages_total{in,PACKET_IN} = %v, want 3", got)
	}
	if got := testutil.ToFloat64(metrics.messages[dirOut][openflow.TypePacketOut]); got != 2 {
		t.Errorf("messages_total{out,PACKET_OUT} = %v, want 2", got)
	}
}

// recordingApp records the calls the core makes.
type recordingApp struct {
	events []string
}

func (a *recordingApp) SwitchConnected(sw Switch)    { a.events = append(a.events, "connected") }
func (a *recordingApp) SwitchDisconnected(sw Switch) { a.events = append(a.events, "disconnected") }
func (a *recordingApp) HandleMessage(sw Switch, m openflow.Message) {
	a.events = append(a.events, m.MsgType().String())
}

func TestCoreLeavesEchoAndCountsErrors(t *testing.T) {
	metrics := mustMetrics(t)
	app := &recordingApp{}
	core := NewCore(Config{App: app, Metrics: metrics})
	sw := newFakeSwitch(7)
	sess := core.Connect(sw)
	if core.Connected() != 1 {
		t.Fatalf("Connected = %d", core.Connected())
	}
	sess.Handle(&openflow.EchoRequest{Header: openflow.Header{Xid: 42}, Data: []byte("ping")})
	sess.Handle(&openflow.EchoReply{Header: openflow.Header{Xid: 43}})
	sess.Handle(&openflow.ErrorMsg{Header: openflow.Header{Xid: 44}, Type: openflow.ErrorTypeFlowModFailed, Code: 0})
	sess.Handle(&openflow.PortStatus{})
	sess.Disconnect()
	sess.Disconnect() // idempotent

	// Echo traffic is the transport's openflow.Channel's: the session
	// neither answers it nor passes it to the app.
	if sent := sw.take(); len(sent) != 0 {
		t.Fatalf("sent %s, want nothing", dump(sent))
	}
	wantEvents := []string{"connected", "ERROR", "PORT_STATUS", "disconnected"}
	if !reflect.DeepEqual(app.events, wantEvents) {
		t.Errorf("app saw %v, want %v", app.events, wantEvents)
	}
	if got := testutil.ToFloat64(metrics.errorsReceived.WithLabelValues("FLOW_MOD_FAILED")); got != 1 {
		t.Errorf("errors_received_total{FLOW_MOD_FAILED} = %v", got)
	}
	if core.Connected() != 0 || testutil.ToFloat64(metrics.connected) != 0 {
		t.Errorf("after disconnect: Connected=%d gauge=%v", core.Connected(), testutil.ToFloat64(metrics.connected))
	}
}

func TestProactivePushesRulesThenBarrier(t *testing.T) {
	flows, err := flowsyntax.Parse(strings.NewReader(`
# web to h2, everything else dropped
priority=100,tcp,nw_dst=10.0.0.2,tp_dst=80,actions=output:2
priority=0,actions=drop
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, keep := range []bool{false, true} {
		app := NewProactive(ProactiveConfig{Flows: flows, KeepExisting: keep})
		sw := newFakeSwitch(3)
		sess := NewCore(Config{App: app}).Connect(sw)
		sent := sw.take()
		if !keep {
			del, ok := sent[0].(*openflow.FlowMod)
			if !ok || del.Command != openflow.FlowModDelete || del.Match.Wildcards != openflow.WildcardAll || del.OutPort != openflow.PortNone {
				t.Fatalf("first message %s, want a delete-all FLOW_MOD", dump(sent[:1]))
			}
			sent = sent[1:]
		}
		if len(sent) != 3 {
			t.Fatalf("keep=%v: sent %s, want 2 FLOW_MODs and a BARRIER", keep, dump(sent))
		}
		for i, f := range flows {
			fm, ok := sent[i].(*openflow.FlowMod)
			if !ok || fm.Command != openflow.FlowModAdd || fm.Match != f.Match || fm.Priority != f.Priority ||
				!reflect.DeepEqual(fm.Actions, f.Actions) {
				t.Errorf("rule %d: sent %s, want %s", i+1, dump(sent[i:i+1]), f.String())
			}
		}
		barrier, ok := sent[2].(*openflow.BarrierRequest)
		if !ok {
			t.Fatalf("last message %s, want BARRIER_REQUEST", dump(sent[2:]))
		}
		// A stray barrier reply does not count; the matching one does.
		sess.Handle(&openflow.BarrierReply{Header: openflow.Header{Xid: barrier.Xid + 1000}})
		if app.Installed() != 0 {
			t.Fatal("a barrier reply with the wrong xid marked the rules installed")
		}
		sess.Handle(&openflow.PacketIn{Data: tcpFrame(macA, macB, 1, 2, 3, 4)}) // ignored
		sess.Handle(&openflow.BarrierReply{Header: openflow.Header{Xid: barrier.Xid}})
		if app.Installed() != 1 {
			t.Fatal("matching barrier reply did not mark the rules installed")
		}
		if got := sw.take(); len(got) != 0 {
			t.Errorf("proactive app answered a PACKET_IN or reply: %s", dump(got))
		}
	}
}
