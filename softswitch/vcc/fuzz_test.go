package vcc

import (
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/internal/clock"
	"github.com/pseudocong/pseudocong/packet"
)

// FuzzTranslator: any bytes, either direction, after a translated
// handshake — never a panic, never a length change, and a frame whose
// checksums were right keeps them right.
func FuzzTranslator(f *testing.F) {
	t := &testing.T{}
	f.Add(build(t, seg{flags: packet.TCPFlagSYN, seq: 999}), false)
	f.Add(build(t, seg{toTenant: true, flags: packet.TCPFlagACK | packet.TCPFlagECE, seq: 5001, ack: 1000, window: 100}), true)
	f.Add(build(t, seg{flags: packet.TCPFlagACK, seq: 1000, ack: 5001, payload: 100}), false)
	f.Fuzz(func(t *testing.T, frame []byte, toTenant bool) {
		clk := clock.NewSim(time.Unix(0, 0))
		tr := New(clk, Config{MaxFlows: 4})
		syn := build(t, seg{flags: packet.TCPFlagSYN, seq: 999})
		tr.FromTenant(syn)
		sa := build(t, seg{toTenant: true, flags: packet.TCPFlagSYN | packet.TCPFlagACK | packet.TCPFlagECE, seq: 5000, ack: 1000, window: 100})
		tr.ToTenant(sa)
		var p packet.Packet
		valid := p.DecodeFromBytes(frame) == nil && p.Layers.Has(packet.LayerTCP) && p.VerifyChecksums() == nil
		n := len(frame)
		if toTenant {
			tr.ToTenant(frame)
		} else {
			tr.FromTenant(frame)
		}
		if len(frame) != n {
			t.Fatalf("length %d -> %d", n, len(frame))
		}
		if valid {
			if err := p.DecodeFromBytes(frame); err != nil {
				t.Fatalf("decodes no more: %v", err)
			}
			if err := p.VerifyChecksums(); err != nil {
				t.Fatalf("checksum broken: %v", err)
			}
		}
	})
}
