package packet_test

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/pseudocong/pseudocong/openflow"
	"github.com/pseudocong/pseudocong/packet"
	"github.com/pseudocong/pseudocong/softswitch/flowtable"
	"github.com/pseudocong/pseudocong/tcam"
)

// The software switch keeps its own zero-allocation 12-tuple extractor
// (flowtable.Extract). This property test keeps it equal to this package's
// parser: on random frames — well-formed, with random header bytes changed,
// and cut short — every frame packet accepts must give the same OpenFlow
// 1.0 fields and header offsets, and every frame gives the same Ethernet
// addresses.

// ofFields is the OpenFlow 1.0 12-tuple of a packet decoded without error,
// by the rules flowtable.Extract documents.
func ofFields(p *packet.Packet, inPort uint16) (tcam.Fields, flowtable.Layout) {
	f := tcam.Fields{InPort: inPort, DlSrc: p.Ethernet.Src, DlDst: p.Ethernet.Dst, DlVlan: openflow.VlanNone}
	l := flowtable.Layout{VLANOffset: -1, L3Offset: -1, L4Offset: -1}
	typ, off := p.Ethernet.EtherType, packet.EthernetLen
	if p.Layers.Has(packet.LayerDot1Q) {
		f.DlVlan, f.DlVlanPcp = p.Dot1Q.VLANID, p.Dot1Q.Priority
		l.VLANOffset = 12
		typ, off = p.Dot1Q.EtherType, off+packet.Dot1QLen
	}
	f.DlType = uint16(typ)
	switch {
	case p.Layers.Has(packet.LayerARP):
		l.L3Offset = off
		f.NwProto = uint8(p.ARP.Op)
		f.NwSrc, f.NwDst = binary.BigEndian.Uint32(p.ARP.SenderIP[:]), binary.BigEndian.Uint32(p.ARP.TargetIP[:])
	case p.Layers.Has(packet.LayerIPv4):
		ip := &p.IPv4
		l.L3Offset, l.IPv4 = off, true
		f.NwTos = ip.DSCP() << 2
		f.NwProto = uint8(ip.Protocol)
		f.NwSrc, f.NwDst = binary.BigEndian.Uint32(ip.Src[:]), binary.BigEndian.Uint32(ip.Dst[:])
		l4 := off + int(ip.IHL)*4
		switch {
		case p.Layers.Has(packet.LayerTCP):
			f.TpSrc, f.TpDst, l.L4Offset = p.TCP.SrcPort, p.TCP.DstPort, l4
		case p.Layers.Has(packet.LayerUDP):
			f.TpSrc, f.TpDst, l.L4Offset = p.UDP.SrcPort, p.UDP.DstPort, l4
		case p.Layers.Has(packet.LayerICMP):
			f.TpSrc, f.TpDst, l.L4Offset = uint16(p.ICMP.Type), uint16(p.ICMP.Code), l4
		}
	}
	return f, l
}

func TestFlowtableExtractEqualsParser(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	var p packet.Packet
	var compared, total int
	for i := range 30000 {
		want := randPacket(r)
		frame, err := want.AppendBinary(nil)
		if err != nil {
			t.Fatal(err)
		}
		switch i % 3 {
		case 1: // change up to 3 header bytes
			for range 1 + r.IntN(3) {
				frame[r.IntN(min(len(frame), 80))] = byte(r.IntN(256))
			}
		case 2: // cut short
			frame = frame[:r.IntN(len(frame)+1)]
		}
		inPort := uint16(r.IntN(1 << 16))
		got, gotLayout := flowtable.Extract(frame, inPort)
		total++
		err = p.DecodeFromBytes(frame)
		typ := p.Ethernet.EtherType
		if p.Layers.Has(packet.LayerDot1Q) {
			typ = p.Dot1Q.EtherType
		}
		if err != nil || typ < packet.EtherTypeMin {
			// Not accepted (or 802.3, whose LLC/SNAP this package leaves
			// undecoded): only the Ethernet addresses must agree.
			if len(frame) >= packet.EthernetLen && (got.DlSrc != p.Ethernet.Src || got.DlDst != p.Ethernet.Dst) {
				t.Fatalf("frame %d: addresses differ\n% x", i, frame)
			}
			continue
		}
		compared++
		wantF, wantLayout := ofFields(&p, inPort)
		if got != wantF || gotLayout != wantLayout {
			t.Fatalf("frame %d:\nflowtable %+v %+v\npacket    %+v %+v\n% x", i, got, gotLayout, wantF, wantLayout, frame)
		}
	}
	// Most frames must be compared in full, or the test proves little.
	if compared < total/2 {
		t.Fatalf("only %d of %d frames compared in full", compared, total)
	}
	t.Logf("%d of %d frames compared in full", compared, total)
}
