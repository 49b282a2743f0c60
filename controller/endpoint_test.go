package controller

import (
	"reflect"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/pseudocong/pseudocong/internal/clock"
	"github.com/pseudocong/pseudocong/openflow"
)

// recordingTransport is what a simulator would do: encode every message
// onto a channel; here the bytes are decoded back for the assertions.
type recordingTransport struct{ sent []openflow.Message }

func (r *recordingTransport) Send(m openflow.Message) error {
	b, err := openflow.Marshal(m)
	if err != nil {
		return err
	}
	back, err := openflow.Unmarshal(b)
	if err != nil {
		return err
	}
	r.sent = append(r.sent, back)
	return nil
}

func (r *recordingTransport) types() []openflow.Type {
	var ts []openflow.Type
	for _, m := range r.sent {
		ts = append(ts, m.MsgType())
	}
	r.sent = nil
	return ts
}

func mustFrame(t *testing.T, m openflow.Message) []byte {
	t.Helper()
	b, err := openflow.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestEndpointHandshakeUnderVirtualClock drives an Endpoint frame by frame
// with a virtual clock, as the simulator will: the handshake, then a
// PACKET_IN whose handling time is the virtual time elapsed (zero here).
func TestEndpointHandshakeUnderVirtualClock(t *testing.T) {
	sim := clock.NewSim(time.Unix(0, 0))
	metrics := mustMetrics(t)
	core := NewCore(Config{App: NewReactive(ReactiveConfig{}), Clock: sim, Metrics: metrics})
	tr := &recordingTransport{}
	ep := NewEndpoint(EndpointConfig{Core: core, Transport: tr, MissSendLen: 0xffff})

	if err := ep.HandleFrame(mustFrame(t, &openflow.Hello{})); err == nil {
		t.Fatal("HandleFrame before Start accepted")
	}
	if err := ep.Start(); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name string
		in   openflow.Message
		want []openflow.Type
	}{
		{"hello → features request", &openflow.Hello{Header: openflow.Header{Xid: 5}}, []openflow.Type{openflow.TypeFeaturesRequest}},
		{"echo during handshake", &openflow.EchoRequest{Header: openflow.Header{Xid: 6}}, []openflow.Type{openflow.TypeEchoReply}},
		{"port status before features is dropped", &openflow.PortStatus{}, nil},
		{"features reply → set config, connected", &openflow.FeaturesReply{DatapathID: 0xab}, []openflow.Type{openflow.TypeSetConfig}},
		{"broadcast packet-in floods", packetIn(7, 3, 1, frame(bcast, macA, 0x0806, nil)), []openflow.Type{openflow.TypePacketOut}},
		{"known destination installs a flow", packetIn(8, 4, 2, tcpFrame(macA, macB, ipB, ipA, 1, 2)), []openflow.Type{openflow.TypeFlowMod}},
	}
	tr.types() // our HELLO
	for _, s := range steps {
		if err := ep.HandleFrame(mustFrame(t, s.in)); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if got := tr.types(); !reflect.DeepEqual(got, s.want) {
			t.Errorf("%s: sent %v, want %v", s.name, got, s.want)
		}
		if s.name == "features reply → set config, connected" {
			if !ep.Connected() || ep.DPID() != 0xab || core.Connected() != 1 {
				t.Fatalf("after FEATURES_REPLY: connected=%v dpid=%x core=%d", ep.Connected(), ep.DPID(), core.Connected())
			}
		}
	}
	var hist dto.Metric
	if err := metrics.handling.Write(&hist); err != nil {
		t.Fatal(err)
	}
	if hist.GetHistogram().GetSampleCount() != 1 || hist.GetHistogram().GetSampleSum() != 0 {
		t.Errorf("handling histogram %d samples, sum %v; want 1 sample of 0 s (virtual time stood still)",
			hist.GetHistogram().GetSampleCount(), hist.GetHistogram().GetSampleSum())
	}
	ep.Close()
	if core.Connected() != 0 {
		t.Errorf("core still has %d switches after Close", core.Connected())
	}
	if err := ep.HandleFrame(mustFrame(t, &openflow.EchoRequest{})); err == nil {
		t.Error("HandleFrame after Close accepted")
	}
}

func TestEndpointRejects(t *testing.T) {
	tests := []struct {
		name    string
		frames  [][]byte
		wantErr bool
		want    []openflow.ErrorType // ERRORs sent
	}{
		{"frame shorter than its header says", [][]byte{header(1, openflow.TypeHello, 16, 1)}, true,
			[]openflow.ErrorType{openflow.ErrorTypeBadRequest}},
		{"first message not hello", [][]byte{header(1, openflow.TypeEchoRequest, 8, 1)}, true,
			[]openflow.ErrorType{openflow.ErrorTypeHelloFailed}},
		{"hello of version 0", [][]byte{header(0, openflow.TypeHello, 8, 1)}, true,
			[]openflow.ErrorType{openflow.ErrorTypeHelloFailed}},
		{"switch refuses the handshake", [][]byte{header(1, openflow.TypeHello, 8, 1),
			append(header(1, openflow.TypeError, 12, 2), 0, 0, 0, 0)}, true, nil},
		{"wrong version before features is answered", [][]byte{header(1, openflow.TypeHello, 8, 1),
			header(2, openflow.TypeEchoRequest, 8, 2)}, false, []openflow.ErrorType{openflow.ErrorTypeBadRequest}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := &recordingTransport{}
			ep := NewEndpoint(EndpointConfig{Core: NewCore(Config{App: &recordingApp{}}), Transport: tr})
			if err := ep.Start(); err != nil {
				t.Fatal(err)
			}
			var err error
			for _, f := range tt.frames {
				if err = ep.HandleFrame(f); err != nil {
					break
				}
			}
			if (err != nil) != tt.wantErr {
				t.Errorf("error = %v, want error %v", err, tt.wantErr)
			}
			var got []openflow.ErrorType
			for _, m := range tr.sent {
				if e, ok := m.(*openflow.ErrorMsg); ok {
					got = append(got, e.Type)
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ERRORs sent %v, want %v", got, tt.want)
			}
		})
	}
}
