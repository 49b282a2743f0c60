package softswitch

import (
	"testing"

	"github.com/pseudocong/pseudocong/internal/clock"
	"github.com/pseudocong/pseudocong/openflow"
)

// BenchmarkReceiveHit measures the ideal data path: parse, classifier
// lookup over 1000 exact-match entries, counters, outbox, transmit.
func BenchmarkReceiveHit(b *testing.B) {
	sw := New(clock.Wall{}, Config{})
	for i := uint16(1); i <= 2; i++ {
		if err := sw.AddPort(NewMemPort(i, "p", MemPortMAC(1, i), func([]byte) {})); err != nil {
			b.Fatal(err)
		}
	}
	ch := &nullChannel{}
	sw.Attach(ch)
	t := &testing.T{}
	frame := udpFrame(t, 5000, 5001)
	for i := range 1000 {
		fm := flowMod(openflow.FlowModAdd, openflow.Match{Wildcards: openflow.WildcardAll &^ openflow.WildcardTpSrc, TpSrc: uint16(4000 + i)}, 1, output(2))
		sw.HandleMessage(ch, fm)
	}
	b.ReportAllocs()
	for b.Loop() {
		sw.Receive(1, frame)
	}
}

// BenchmarkFlowModAdd measures FLOW_MOD ADD of distinct exact-match rules
// through HandleMessage with the ideal installer.
func BenchmarkFlowModAdd(b *testing.B) {
	sw := New(clock.Wall{}, Config{})
	ch := &nullChannel{}
	sw.Attach(ch)
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		m := openflow.Match{DlVlan: openflow.VlanNone, DlType: 0x0800, NwProto: 6, NwSrc: uint32(i), NwDst: uint32(i >> 16), TpSrc: uint16(i), TpDst: 80}
		sw.HandleMessage(ch, flowMod(openflow.FlowModAdd, m, uint16(i), output(2)))
		i++
	}
}

type nullChannel struct{}

func (*nullChannel) Send(openflow.Message) error { return nil }
func (*nullChannel) Role() Role                  { return RoleController }
