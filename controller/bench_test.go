package controller

import (
	"testing"

	"github.com/pseudocong/pseudocong/openflow"
)

// encodingSwitch encodes what it is sent into a reused buffer, the work
// the TCP shell does, without a socket.
type encodingSwitch struct {
	features openflow.FeaturesReply
	buf      []byte
	sent     int
}

func (s *encodingSwitch) DPID() uint64                      { return 1 }
func (s *encodingSwitch) Features() *openflow.FeaturesReply { return &s.features }
func (s *encodingSwitch) Send(m openflow.Message) error {
	var err error
	s.buf, err = m.AppendBinary(s.buf[:0])
	s.sent++
	return err
}

// BenchmarkReactivePacketIn is the per-PACKET_IN cost of the core and the
// reactive app (decode, learn, build and encode the FLOW_MOD, metrics).
func BenchmarkReactivePacketIn(b *testing.B) {
	metrics, err := NewMetrics(nil)
	if err != nil {
		b.Fatal(err)
	}
	sw := &encodingSwitch{}
	sess := NewCore(Config{App: NewReactive(ReactiveConfig{}), Metrics: metrics}).Connect(sw)
	sess.Handle(packetIn(1, 1, 1, frame(bcast, macA, 0x0806, nil)))
	wire, err := openflow.Marshal(packetIn(2, 7, 2, tcpFrame(macA, macB, ipB, ipA, 1000, 80)))
	if err != nil {
		b.Fatal(err)
	}
	var pi openflow.PacketIn
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := pi.DecodeFromBytes(wire); err != nil {
			b.Fatal(err)
		}
		sess.Handle(&pi)
	}
	if sw.sent < b.N {
		b.Fatalf("sent %d messages for %d PACKET_INs", sw.sent, b.N)
	}
}
