package sim

import (
	"bytes"
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/internal/clock"
	"github.com/pseudocong/pseudocong/openflow"
	"github.com/pseudocong/pseudocong/probes"
	"github.com/pseudocong/pseudocong/profile"
)

// A message crosses the channel as its encoding: the receiver gets a
// different struct decoded from bytes, after the latency, and the byte
// count is the encoded length.
func TestChannelCarriesEncodedBytes(t *testing.T) {
	clk := clock.NewSim(simStart)
	var got []openflow.Message
	var at []time.Duration
	ch := NewChannel(clk, 100*time.Microsecond, func(m openflow.Message) {
		got = append(got, m)
		at = append(at, clk.Elapsed())
	}, nil)
	sent := &openflow.FlowMod{
		Header: openflow.Header{Xid: 7},
		Match: openflow.Match{InPort: 1, DlType: 0x0800, NwProto: 6, NwSrc: 0x0a000001, NwDst: 0x0a000002,
			TpSrc: 1234, TpDst: 80},
		Command: openflow.FlowModAdd, Priority: 42, BufferID: 9, OutPort: openflow.PortNone,
		Actions: []openflow.Action{openflow.ActionOutput{Port: 2}},
	}
	if err := ch.Send(sent); err != nil {
		t.Fatal(err)
	}
	sent.Priority = 1 // mutating after Send must not reach the receiver
	clk.Run()
	if len(got) != 1 {
		t.Fatalf("received %d messages", len(got))
	}
	fm, ok := got[0].(*openflow.FlowMod)
	if !ok || fm == sent {
		t.Fatalf("received %T %p, want a freshly decoded FlowMod (sent %p)", got[0], got[0], sent)
	}
	if fm.Priority != 42 || fm.Xid != 7 || fm.BufferID != 9 || len(fm.Actions) != 1 {
		t.Errorf("decoded %+v", fm)
	}
	if at[0] != 100*time.Microsecond {
		t.Errorf("delivered after %v, want the 100µs latency", at[0])
	}
	sent.Priority = 42
	want, _ := openflow.Marshal(sent)
	if st := ch.Stats(); st.Bytes != uint64(len(want)) || st.Messages != 1 || st.ByType[openflow.TypeFlowMod] != 1 {
		t.Errorf("stats %+v, want %d bytes of one FLOW_MOD", st, len(want))
	}
	again, _ := openflow.Marshal(fm)
	if !bytes.Equal(again, want) {
		t.Errorf("re-encoding the received message differs from the sent bytes")
	}
}

// Bytes that do not decode never reach the receiver; they are counted and
// reported.
func TestChannelDecodeErrors(t *testing.T) {
	clk := clock.NewSim(simStart)
	var errs []error
	delivered := 0
	ch := NewChannel(clk, 0, func(openflow.Message) { delivered++ }, func(err error) { errs = append(errs, err) })
	ch.SendBytes([]byte{1, 14, 0, 8, 0, 0, 0, 1}) // FLOW_MOD header, no body
	ch.SendBytes([]byte{9, 9, 9})
	clk.Run()
	if delivered != 0 || len(errs) != 2 || ch.Stats().DecodeErrors != 2 {
		t.Errorf("delivered %d, errors %v, stats %+v", delivered, errs, ch.Stats())
	}
}

// In a whole simulated run every Packet-In the agent sent and every
// Flow-Mod the controller sent crossed the channels as bytes, and every
// new flow got its own rule (the controller knew both hosts, whatever the
// switch's speed: the hosts announce themselves after the handshake).
func TestRunUsesTheCodec(t *testing.T) {
	for _, name := range []string{"pica8-p3297", "ideal"} {
		t.Run(name, func(t *testing.T) {
			prof, err := profile.Load(name)
			if err != nil {
				t.Fatal(err)
			}
			o, err := Run(Scenario{Kind: Handshake, Flows: 20, Rate: 100, BaseLoad: 100, Priority: "ascending",
				Profile: prof, ControllerService: 2 * time.Millisecond, LinkLatency: time.Microsecond,
				Timers: probes.Berkeley(), Seed: 3})
			if err != nil {
				t.Fatal(err)
			}
			for i, ok := range o.Delivered {
				if !ok {
					t.Fatalf("handshake %d unanswered", i)
				}
			}
			pins := o.ToCtrl.ByType[openflow.TypePacketIn]
			if pins != o.Agent.Sent || pins != 42 { // 20 SYNs + 20 SYN-ACKs + 2 ARPs
				t.Errorf("Packet-Ins on the wire %d, agent sent %d, want 42", pins, o.Agent.Sent)
			}
			if fms := o.ToSwitch.ByType[openflow.TypeFlowMod]; fms != 40 || o.Controller.FlowMods != 40 {
				t.Errorf("Flow-Mods on the wire %d (controller %d), want 40", fms, o.Controller.FlowMods)
			}
			if po := o.ToSwitch.ByType[openflow.TypePacketOut]; po != 2 {
				t.Errorf("%d Packet-Outs, want 2 (the flooded ARPs)", po)
			}
			// The handshake is openflow.Channel's, as live: HELLO both ways,
			// FEATURES, then the SET_CONFIG the live controller sends too.
			if o.ToCtrl.ByType[openflow.TypeHello] != 1 || o.ToSwitch.ByType[openflow.TypeHello] != 1 ||
				o.ToCtrl.ByType[openflow.TypeFeaturesReply] != 1 || o.ToSwitch.ByType[openflow.TypeFeaturesRequest] != 1 ||
				o.ToSwitch.ByType[openflow.TypeSetConfig] != 1 {
				t.Errorf("not the OpenFlow handshake: %v / %v", o.ToCtrl.ByType, o.ToSwitch.ByType)
			}
			if o.ToCtrl.Bytes < 42*18 || o.ToSwitch.Bytes < 40*72 {
				t.Errorf("bytes %d / %d too few for the messages", o.ToCtrl.Bytes, o.ToSwitch.Bytes)
			}
			if o.InTCAM != 100+40 {
				t.Errorf("TCAM holds %d rules, want base 100 + 40", o.InTCAM)
			}
			if len(o.ControllerTimes) != 40 {
				t.Errorf("%d controller times, want 40", len(o.ControllerTimes))
			}
			for _, ct := range o.ControllerTimes {
				if ct < 2*time.Millisecond {
					t.Errorf("controller time %v below its 2 ms service time", ct)
					break
				}
			}
		})
	}
}
