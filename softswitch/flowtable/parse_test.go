package flowtable

import (
	"net"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/pseudocong/pseudocong/openflow"
	"github.com/pseudocong/pseudocong/tcam"
)

var (
	macA = net.HardwareAddr{0x02, 0, 0, 0, 0, 0xa}
	macB = net.HardwareAddr{0x02, 0, 0, 0, 0, 0xb}
)

func serialize(t *testing.T, ls ...gopacket.SerializableLayer) []byte {
	t.Helper()
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, ls...); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func ipv4(proto layers.IPProtocol) *layers.IPv4 {
	return &layers.IPv4{Version: 4, IHL: 5, TTL: 64, TOS: 0xb9, Protocol: proto,
		SrcIP: net.IP{10, 0, 0, 1}, DstIP: net.IP{10, 0, 0, 2}}
}

func TestExtract(t *testing.T) {
	eth := func(typ layers.EthernetType) *layers.Ethernet {
		return &layers.Ethernet{SrcMAC: macA, DstMAC: macB, EthernetType: typ}
	}
	base := tcam.Fields{InPort: 3, DlSrc: [6]byte(macA), DlDst: [6]byte(macB), DlVlan: openflow.VlanNone}
	with := func(f func(*tcam.Fields)) tcam.Fields { c := base; f(&c); return c }
	tcp := &layers.TCP{SrcPort: 1234, DstPort: 80, Window: 100}
	udp := &layers.UDP{SrcPort: 53, DstPort: 5353}
	ipT, ipU, ipI := ipv4(layers.IPProtocolTCP), ipv4(layers.IPProtocolUDP), ipv4(layers.IPProtocolICMPv4)
	_ = tcp.SetNetworkLayerForChecksum(ipT)
	_ = udp.SetNetworkLayerForChecksum(ipU)
	ipFields := func(proto uint8, sp, dp uint16) tcam.Fields {
		return with(func(f *tcam.Fields) {
			f.DlType, f.NwTos, f.NwProto = 0x0800, 0xb8, proto
			f.NwSrc, f.NwDst, f.TpSrc, f.TpDst = ip(10, 0, 0, 1), ip(10, 0, 0, 2), sp, dp
		})
	}
	frag := ipv4(layers.IPProtocolTCP)
	frag.FragOffset = 100
	cases := []struct {
		name  string
		frame []byte
		want  tcam.Fields
	}{
		{"tcp", serialize(t, eth(layers.EthernetTypeIPv4), ipT, tcp, gopacket.Payload("x")), ipFields(6, 1234, 80)},
		{"udp", serialize(t, eth(layers.EthernetTypeIPv4), ipU, udp, gopacket.Payload("x")), ipFields(17, 53, 5353)},
		{"icmp type/code", serialize(t, eth(layers.EthernetTypeIPv4), ipI,
			&layers.ICMPv4{TypeCode: layers.CreateICMPv4TypeCode(3, 4)}), ipFields(1, 3, 4)},
		{"non-first fragment has no ports", serialize(t, eth(layers.EthernetTypeIPv4), frag, gopacket.Payload(make([]byte, 24))), ipFields(6, 0, 0)},
		{"arp", serialize(t, eth(layers.EthernetTypeARP), &layers.ARP{AddrType: layers.LinkTypeEthernet, Protocol: layers.EthernetTypeIPv4,
			HwAddressSize: 6, ProtAddressSize: 4, Operation: 2, SourceHwAddress: macA, SourceProtAddress: []byte{10, 0, 0, 7},
			DstHwAddress: macB, DstProtAddress: []byte{10, 0, 0, 8}}),
			with(func(f *tcam.Fields) {
				f.DlType, f.NwProto, f.NwSrc, f.NwDst = 0x0806, 2, ip(10, 0, 0, 7), ip(10, 0, 0, 8)
			})},
		{"vlan", serialize(t, eth(layers.EthernetTypeDot1Q), &layers.Dot1Q{Priority: 5, VLANIdentifier: 42, Type: layers.EthernetTypeIPv4}, ipT, tcp),
			with(func(f *tcam.Fields) { *f = ipFields(6, 1234, 80); f.DlVlan, f.DlVlanPcp = 42, 5 })},
		{"802.3 without snap", serialize(t, &layers.Ethernet{SrcMAC: macA, DstMAC: macB, EthernetType: layers.EthernetTypeLLC, Length: 3},
			&layers.LLC{DSAP: 0x42, SSAP: 0x42, Control: 3}, gopacket.Payload(make([]byte, 40))),
			with(func(f *tcam.Fields) { f.DlType = 0x05ff })},
		{"truncated ip", serialize(t, eth(layers.EthernetTypeIPv4), gopacket.Payload([]byte{0x45, 0})), with(func(f *tcam.Fields) { f.DlType = 0x0800 })},
		{"runt", []byte{1, 2, 3}, tcam.Fields{InPort: 3, DlVlan: openflow.VlanNone}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, _ := Extract(c.frame, 3)
			if got != c.want {
				t.Fatalf("got  %+v\nwant %+v", got, c.want)
			}
		})
	}
}

func TestExtractSNAP(t *testing.T) {
	frame := make([]byte, 0, 64)
	frame = append(frame, macB...)
	frame = append(frame, macA...)
	frame = append(frame, 0, 30, 0xaa, 0xaa, 0x03, 0, 0, 0, 0x08, 0x06)
	frame = append(frame, make([]byte, 28)...)
	f, _ := Extract(frame, 1)
	if f.DlType != 0x0806 {
		t.Fatalf("snap type %#x", f.DlType)
	}
}

func FuzzExtract(f *testing.F) {
	f.Add([]byte{})
	f.Add(make([]byte, 60))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, l := Extract(b, 1)
		if l.L4Offset >= 0 && l.L4Offset > len(b) {
			t.Fatalf("L4 offset %d beyond %d", l.L4Offset, len(b))
		}
	})
}

func BenchmarkExtractAndLookup(b *testing.B) {
	tb := New(Config{CacheSlots: 4096})
	for i := range 1000 {
		m := exactMatch(1, ip(10, 0, byte(i>>8), byte(i)), ip(10, 0, 0, 2), 1234, 80)
		if _, err := tb.Apply(fm(openflow.FlowModAdd, m, 1, out(2)), t0); err != nil {
			b.Fatal(err)
		}
	}
	frame := make([]byte, 64)
	copy(frame[12:], []byte{0x08, 0x00, 0x45, 0, 0, 50, 0, 0, 0, 0, 64, 6})
	b.ReportAllocs()
	for b.Loop() {
		f, _ := Extract(frame, 1)
		tb.Lookup(&f)
	}
}
