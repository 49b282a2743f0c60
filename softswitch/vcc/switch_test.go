package vcc

import (
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/internal/clock"
	"github.com/pseudocong/pseudocong/packet"
	"github.com/pseudocong/pseudocong/softswitch"
)

// The Translator as the switch's PortFilter on tenant port 1 (fabric on
// port 2, no filter): the SYN leaves port 2 asking for ECN, the SYN-ACK
// reaches port 1 without ECE, a frame between unfiltered ports is not
// touched.
func TestAsSwitchPortFilter(t *testing.T) {
	clk := clock.NewSim(time.Unix(0, 0))
	sw := softswitch.New(clk, softswitch.Config{FailMode: softswitch.FailStandalone})
	ports := map[uint16]*softswitch.MemPort{}
	for no := uint16(1); no <= 3; no++ {
		ports[no] = softswitch.NewMemPort(no, "p", softswitch.MemPortMAC(1, no), nil)
		if err := sw.AddPort(ports[no]); err != nil {
			t.Fatal(err)
		}
	}
	tr := New(clk, Config{})
	if err := sw.SetPortFilter(1, PortFilter{tr}); err != nil {
		t.Fatal(err)
	}
	if err := sw.SetPortFilter(9, PortFilter{tr}); err == nil {
		t.Fatal("filter on a missing port accepted")
	}
	decode := func(frames [][]byte) *packet.Packet {
		t.Helper()
		if len(frames) != 1 {
			t.Fatalf("%d frames, want 1", len(frames))
		}
		var p packet.Packet
		if err := p.DecodeFromBytes(frames[0]); err != nil {
			t.Fatal(err)
		}
		if err := p.VerifyChecksums(); err != nil {
			t.Fatal(err)
		}
		return &p
	}
	// Teach the learning switch where the remote is, then open the flow.
	sw.Receive(2, build(t, seg{toTenant: true, flags: packet.TCPFlagRST, seq: 1}))
	ports[1].Take()
	ports[3].Take()
	sw.Receive(1, build(t, seg{flags: packet.TCPFlagSYN, seq: 999}))
	if p := decode(ports[2].Take()); !p.TCP.Flags.Has(packet.TCPFlagECE | packet.TCPFlagCWR) {
		t.Fatalf("SYN on the fabric port has flags %#x, want ECE|CWR", p.TCP.Flags)
	}
	sw.Receive(2, build(t, seg{toTenant: true, flags: packet.TCPFlagSYN | packet.TCPFlagACK | packet.TCPFlagECE, seq: 5000, ack: 1000, window: 100}))
	if p := decode(ports[1].Take()); p.TCP.Flags != packet.TCPFlagSYN|packet.TCPFlagACK {
		t.Fatalf("SYN-ACK at the tenant has flags %#x", p.TCP.Flags)
	}
	if tr.Stats().TranslatedSYNs != 1 || tr.Flows() != 1 {
		t.Fatalf("stats %+v", tr.Stats())
	}
}
