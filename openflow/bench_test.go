package openflow_test

import (
	"testing"

	of "github.com/pseudocong/pseudocong/openflow"
)

// The controller's hot path: decode a PACKET_IN, answer with a FLOW_MOD and
// a PACKET_OUT appended to a reused buffer. None of it may allocate beyond
// the decoded message struct itself.

func benchFlowMod() *of.FlowMod {
	return &of.FlowMod{Match: matchExact, Command: of.FlowModAdd, IdleTimeout: 10, Priority: 100,
		BufferID: of.NoBuffer, OutPort: of.PortNone, Flags: of.FlowModFlagSendFlowRem,
		Actions: []of.Action{of.ActionOutput{Port: 2}}}
}

func benchPacketOut() *of.PacketOut {
	return &of.PacketOut{BufferID: 0x102, InPort: 1, Actions: []of.Action{of.ActionOutput{Port: 2}}}
}

func TestHotPathAllocations(t *testing.T) {
	raw := mustHex(t, goldenMessageHex["packet_in"])
	var pi of.PacketIn
	if n := testing.AllocsPerRun(1000, func() {
		if err := pi.DecodeFromBytes(raw); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("PacketIn.DecodeFromBytes: %v allocs, want 0", n)
	}
	if n := testing.AllocsPerRun(1000, func() {
		if _, err := of.Unmarshal(raw); err != nil {
			t.Fatal(err)
		}
	}); n > 1 {
		t.Errorf("Unmarshal(PACKET_IN): %v allocs, want at most 1 (the message)", n)
	}
	buf := make([]byte, 0, 4096)
	fm, po := benchFlowMod(), benchPacketOut()
	if n := testing.AllocsPerRun(1000, func() {
		b, err := fm.AppendBinary(buf[:0])
		if err == nil {
			_, err = po.AppendBinary(b)
		}
		if err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("FlowMod+PacketOut AppendBinary: %v allocs, want 0", n)
	}
}

func BenchmarkUnmarshalPacketIn(b *testing.B) {
	raw := mustHex(b, goldenMessageHex["packet_in"])
	b.ReportAllocs()
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if _, err := of.Unmarshal(raw); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodePacketInInPlace(b *testing.B) {
	raw := mustHex(b, goldenMessageHex["packet_in"])
	var pi of.PacketIn
	b.ReportAllocs()
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if err := pi.DecodeFromBytes(raw); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendFlowMod(b *testing.B) {
	m := benchFlowMod()
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	b.SetBytes(int64(m.Len()))
	for b.Loop() {
		var err error
		if buf, err = m.AppendBinary(buf[:0]); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendPacketOut(b *testing.B) {
	m := benchPacketOut()
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	b.SetBytes(int64(m.Len()))
	for b.Loop() {
		var err error
		if buf, err = m.AppendBinary(buf[:0]); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkUnmarshalFlowMod(b *testing.B) {
	raw := mustHex(b, goldenMessageHex["flow_mod"])
	b.ReportAllocs()
	for b.Loop() {
		if _, err := of.Unmarshal(raw); err != nil {
			b.Fatal(err)
		}
	}
}
