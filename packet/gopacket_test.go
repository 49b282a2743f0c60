package packet_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/pseudocong/pseudocong/packet"
)

// gopacket is the reference: packets built here must decode there with the
// same fields and valid checksums, and packets gopacket serializes (with
// ComputeChecksums and FixLengths) must decode here with the same fields,
// pass VerifyChecksums and re-encode to the same bytes.

func TestBuildHereDecodeWithGopacket(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for i := range 5000 {
		p := randPacket(r)
		frame, err := p.AppendBinary(nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := checkWithGopacket(&p, frame); err != nil {
			t.Fatalf("packet %d: %v\n% x", i, err, frame)
		}
	}
}

func checkWithGopacket(p *packet.Packet, frame []byte) error {
	gp := gopacket.NewPacket(frame, layers.LayerTypeEthernet, gopacket.DecodeOptions{NoCopy: true})
	eth, _ := gp.Layer(layers.LayerTypeEthernet).(*layers.Ethernet)
	if eth == nil {
		return fmt.Errorf("gopacket: no Ethernet layer: %v", gp.ErrorLayer())
	}
	if !bytes.Equal(eth.DstMAC, p.Ethernet.Dst[:]) || !bytes.Equal(eth.SrcMAC, p.Ethernet.Src[:]) {
		return fmt.Errorf("MACs %v %v", eth.DstMAC, eth.SrcMAC)
	}
	if p.Layers.Has(packet.LayerDot1Q) {
		q, _ := gp.Layer(layers.LayerTypeDot1Q).(*layers.Dot1Q)
		if q == nil || eth.EthernetType != layers.EthernetTypeDot1Q || q.Priority != p.Dot1Q.Priority ||
			q.DropEligible != p.Dot1Q.DropEligible || q.VLANIdentifier != p.Dot1Q.VLANID {
			return fmt.Errorf("802.1Q: %+v", q)
		}
	}
	if p.Layers.Has(packet.LayerARP) {
		a, _ := gp.Layer(layers.LayerTypeARP).(*layers.ARP)
		if a == nil || a.AddrType != layers.LinkTypeEthernet || a.Protocol != layers.EthernetTypeIPv4 ||
			a.Operation != p.ARP.Op || !bytes.Equal(a.SourceHwAddress, p.ARP.SenderMAC[:]) ||
			!bytes.Equal(a.SourceProtAddress, p.ARP.SenderIP[:]) || !bytes.Equal(a.DstHwAddress, p.ARP.TargetMAC[:]) ||
			!bytes.Equal(a.DstProtAddress, p.ARP.TargetIP[:]) {
			return fmt.Errorf("ARP: %+v", a)
		}
		return nil
	}
	if !p.Layers.Has(packet.LayerIPv4) {
		return nil
	}
	ip, _ := gp.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
	if ip == nil {
		return fmt.Errorf("gopacket: no IPv4 layer: %v", gp.ErrorLayer())
	}
	want := &p.IPv4
	if ip.TOS != want.TOS || ip.Id != want.ID || uint8(ip.Flags) != want.Flags || ip.FragOffset != want.FragOffset ||
		ip.TTL != want.TTL || !bytes.Equal(ip.SrcIP, want.Src[:]) || !bytes.Equal(ip.DstIP, want.Dst[:]) ||
		int(ip.IHL)*4 != 20+len(want.Options) {
		return fmt.Errorf("IPv4: %+v", ip)
	}
	if err, res := ip.VerifyChecksum(); err != nil || !res.Valid {
		return fmt.Errorf("IPv4 checksum %#04x, gopacket computes %#04x (%v)", res.Actual, res.Correct, err)
	}
	if want.IsFragment() {
		// gopacket leaves every fragment, even the first, undecoded.
		return nil
	}
	switch {
	case p.Layers.Has(packet.LayerTCP):
		tcp, _ := gp.Layer(layers.LayerTypeTCP).(*layers.TCP)
		if tcp == nil || ip.Protocol != layers.IPProtocolTCP {
			return fmt.Errorf("gopacket: no TCP layer: %v", gp.ErrorLayer())
		}
		if err := compareTCP(&p.TCP, tcp); err != nil {
			return err
		}
		if !bytes.Equal(tcp.Payload, p.Payload) {
			return fmt.Errorf("TCP payload % x", tcp.Payload)
		}
		if err := tcp.SetNetworkLayerForChecksum(ip); err != nil {
			return err
		}
		if err, res := tcp.VerifyChecksum(); err != nil || !res.Valid {
			return fmt.Errorf("TCP checksum %#04x, gopacket computes %#04x (%v)", res.Actual, res.Correct, err)
		}
	case p.Layers.Has(packet.LayerUDP):
		udp, _ := gp.Layer(layers.LayerTypeUDP).(*layers.UDP)
		if udp == nil || ip.Protocol != layers.IPProtocolUDP {
			return fmt.Errorf("gopacket: no UDP layer: %v", gp.ErrorLayer())
		}
		if uint16(udp.SrcPort) != p.UDP.SrcPort || uint16(udp.DstPort) != p.UDP.DstPort ||
			int(udp.Length) != 8+len(p.Payload) || !bytes.Equal(udp.Payload, p.Payload) {
			return fmt.Errorf("UDP: %+v", udp)
		}
		if err := udp.SetNetworkLayerForChecksum(ip); err != nil {
			return err
		}
		if err, res := udp.VerifyChecksum(); err != nil || !res.Valid {
			return fmt.Errorf("UDP checksum %#04x, gopacket computes %#04x (%v)", res.Actual, res.Correct, err)
		}
	case p.Layers.Has(packet.LayerICMP):
		icmp, _ := gp.Layer(layers.LayerTypeICMPv4).(*layers.ICMPv4)
		if icmp == nil || ip.Protocol != layers.IPProtocolICMPv4 {
			return fmt.Errorf("gopacket: no ICMP layer: %v", gp.ErrorLayer())
		}
		if icmp.TypeCode.Type() != p.ICMP.Type || icmp.TypeCode.Code() != p.ICMP.Code ||
			icmp.Id != p.ICMP.ID || icmp.Seq != p.ICMP.Seq || !bytes.Equal(icmp.Payload, p.Payload) {
			return fmt.Errorf("ICMP: %+v", icmp)
		}
		if err, res := icmp.VerifyChecksum(); err != nil || !res.Valid {
			return fmt.Errorf("ICMP checksum %#04x, gopacket computes %#04x (%v)", res.Actual, res.Correct, err)
		}
	default:
		if uint8(ip.Protocol) != uint8(want.Protocol) || !bytes.Equal(ip.Payload, p.Payload) {
			return fmt.Errorf("IPv4 protocol %v payload % x", ip.Protocol, ip.Payload)
		}
	}
	return nil
}

func compareTCP(want *packet.TCP, tcp *layers.TCP) error {
	var flags packet.TCPFlags
	for _, f := range []struct {
		on  bool
		bit packet.TCPFlags
	}{
		{tcp.FIN, packet.TCPFlagFIN}, {tcp.SYN, packet.TCPFlagSYN}, {tcp.RST, packet.TCPFlagRST},
		{tcp.PSH, packet.TCPFlagPSH}, {tcp.ACK, packet.TCPFlagACK}, {tcp.URG, packet.TCPFlagURG},
		{tcp.ECE, packet.TCPFlagECE}, {tcp.CWR, packet.TCPFlagCWR}, {tcp.NS, packet.TCPFlagNS},
	} {
		if f.on {
			flags |= f.bit
		}
	}
	if uint16(tcp.SrcPort) != want.SrcPort || uint16(tcp.DstPort) != want.DstPort || tcp.Seq != want.Seq ||
		tcp.Ack != want.Ack || flags != want.Flags || tcp.Window != want.Window || tcp.Urgent != want.Urgent {
		return fmt.Errorf("TCP: %+v, flags %#x", tcp, flags)
	}
	var o packet.TCPOptions
	for _, opt := range tcp.Options {
		d := opt.OptionData
		switch uint8(opt.OptionType) {
		case packet.TCPOptionMSS:
			o.HasMSS, o.MSS = true, uint16(d[0])<<8|uint16(d[1])
		case packet.TCPOptionWindowScale:
			o.HasWindowScale, o.WindowScale = true, d[0]
		case packet.TCPOptionSACKPermitted:
			o.SACKPermitted = true
		case packet.TCPOptionSACK:
			for i := 0; i+8 <= len(d); i += 8 {
				o.SACK[o.NumSACK] = packet.SACKBlock{Left: be32(d[i:]), Right: be32(d[i+4:])}
				o.NumSACK++
			}
		case packet.TCPOptionTimestamps:
			o.HasTimestamps, o.TSVal, o.TSEcr = true, be32(d), be32(d[4:])
		case packet.TCPOptionNOP, packet.TCPOptionEnd:
		default:
			o.Unknown++
		}
	}
	if o != want.Options {
		return fmt.Errorf("TCP options: gopacket %+v, want %+v", o, want.Options)
	}
	return nil
}

func be32(b []byte) uint32 {
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

func TestBuildWithGopacketDecodeHere(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	var got packet.Packet
	for i := range 5000 {
		want := randPacket(r)
		ls := toGopacket(r, &want)
		buf := gopacket.NewSerializeBuffer()
		if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{ComputeChecksums: true, FixLengths: true}, ls...); err != nil {
			t.Fatalf("packet %d: gopacket: %v", i, err)
		}
		frame := buf.Bytes()
		if err := got.DecodeFromBytes(frame); err != nil {
			t.Fatalf("packet %d: decode: %v\n% x", i, err, frame)
		}
		if d := diffPackets(&want, &got); d != "" {
			t.Fatalf("packet %d: %s\nwant %+v\ngot  %+v\n% x", i, d, want, got, frame)
		}
		if err := got.VerifyChecksums(); err != nil {
			t.Fatalf("packet %d: checksums of gopacket's frame: %v\n% x", i, err, frame)
		}
		// Same checksums as gopacket computed, byte for byte.
		again, err := got.AppendBinary(nil)
		if err != nil || !bytes.Equal(again, frame) {
			t.Fatalf("packet %d: re-encoding differs from gopacket's: %v\n% x\n% x", i, err, frame, again)
		}
	}
}

// toGopacket is p as gopacket layers. TCP options go in a random order,
// with NOPs and an unknown option mixed in, which p's Options then count.
func toGopacket(r *rand.Rand, p *packet.Packet) []gopacket.SerializableLayer {
	eth := &layers.Ethernet{SrcMAC: net.HardwareAddr(p.Ethernet.Src[:]), DstMAC: net.HardwareAddr(p.Ethernet.Dst[:]),
		EthernetType: layers.EthernetType(p.Ethernet.EtherType)}
	ls := []gopacket.SerializableLayer{eth}
	typ := &eth.EthernetType
	if p.Layers.Has(packet.LayerDot1Q) {
		eth.EthernetType = layers.EthernetTypeDot1Q
		q := &layers.Dot1Q{Priority: p.Dot1Q.Priority, DropEligible: p.Dot1Q.DropEligible, VLANIdentifier: p.Dot1Q.VLANID,
			Type: layers.EthernetType(p.Dot1Q.EtherType)}
		ls = append(ls, q)
		typ = &q.Type
	}
	switch {
	case p.Layers.Has(packet.LayerARP):
		*typ = layers.EthernetTypeARP
		a := &p.ARP
		return append(ls, &layers.ARP{AddrType: layers.LinkTypeEthernet, Protocol: layers.EthernetTypeIPv4,
			HwAddressSize: 6, ProtAddressSize: 4, Operation: a.Op,
			SourceHwAddress: a.SenderMAC[:], SourceProtAddress: a.SenderIP[:],
			DstHwAddress: a.TargetMAC[:], DstProtAddress: a.TargetIP[:]})
	case !p.Layers.Has(packet.LayerIPv4):
		return append(ls, gopacket.Payload(p.Payload))
	}
	*typ = layers.EthernetTypeIPv4
	w := &p.IPv4
	ip := &layers.IPv4{Version: 4, TOS: w.TOS, Id: w.ID, Flags: layers.IPv4Flag(w.Flags), FragOffset: w.FragOffset,
		TTL: w.TTL, Protocol: layers.IPProtocol(w.Protocol), SrcIP: w.Src[:], DstIP: w.Dst[:]}
	if len(w.Options) > 0 {
		// gopacket writes options from the parsed list: the record-route
		// option and its NOP padding.
		o := w.Options
		for len(o) > 0 {
			if o[0] == 1 {
				ip.Options = append(ip.Options, layers.IPv4Option{OptionType: 1, OptionLength: 1})
				o = o[1:]
				continue
			}
			ip.Options = append(ip.Options, layers.IPv4Option{OptionType: o[0], OptionLength: o[1], OptionData: o[2:o[1]]})
			o = o[o[1]:]
		}
	}
	ls = append(ls, ip)
	switch {
	case p.Layers.Has(packet.LayerTCP):
		ip.Protocol = layers.IPProtocolTCP
		tcp := toGopacketTCP(r, &p.TCP)
		_ = tcp.SetNetworkLayerForChecksum(ip)
		ls = append(ls, tcp)
	case p.Layers.Has(packet.LayerUDP):
		ip.Protocol = layers.IPProtocolUDP
		udp := &layers.UDP{SrcPort: layers.UDPPort(p.UDP.SrcPort), DstPort: layers.UDPPort(p.UDP.DstPort)}
		_ = udp.SetNetworkLayerForChecksum(ip)
		ls = append(ls, udp)
	case p.Layers.Has(packet.LayerICMP):
		ip.Protocol = layers.IPProtocolICMPv4
		ls = append(ls, &layers.ICMPv4{TypeCode: layers.CreateICMPv4TypeCode(p.ICMP.Type, p.ICMP.Code), Id: p.ICMP.ID, Seq: p.ICMP.Seq})
	}
	return append(ls, gopacket.Payload(p.Payload))
}

func toGopacketTCP(r *rand.Rand, t *packet.TCP) *layers.TCP {
	f := t.Flags
	tcp := &layers.TCP{SrcPort: layers.TCPPort(t.SrcPort), DstPort: layers.TCPPort(t.DstPort), Seq: t.Seq, Ack: t.Ack,
		FIN: f.Has(packet.TCPFlagFIN), SYN: f.Has(packet.TCPFlagSYN), RST: f.Has(packet.TCPFlagRST), PSH: f.Has(packet.TCPFlagPSH),
		ACK: f.Has(packet.TCPFlagACK), URG: f.Has(packet.TCPFlagURG), ECE: f.Has(packet.TCPFlagECE), CWR: f.Has(packet.TCPFlagCWR),
		NS: f.Has(packet.TCPFlagNS), Window: t.Window, Urgent: t.Urgent}
	o := &t.Options
	var opts []layers.TCPOption
	add := func(kind uint8, data []byte) {
		opts = append(opts, layers.TCPOption{OptionType: layers.TCPOptionKind(kind), OptionLength: uint8(2 + len(data)), OptionData: data})
	}
	if o.HasMSS {
		add(packet.TCPOptionMSS, []byte{byte(o.MSS >> 8), byte(o.MSS)})
	}
	if o.HasWindowScale {
		add(packet.TCPOptionWindowScale, []byte{o.WindowScale})
	}
	if o.SACKPermitted {
		add(packet.TCPOptionSACKPermitted, nil)
	}
	if o.HasTimestamps {
		add(packet.TCPOptionTimestamps, append(be32b(o.TSVal), be32b(o.TSEcr)...))
	}
	if o.NumSACK > 0 {
		var d []byte
		for _, s := range o.SACK[:o.NumSACK] {
			d = append(append(d, be32b(s.Left)...), be32b(s.Right)...)
		}
		add(packet.TCPOptionSACK, d)
	}
	r.Shuffle(len(opts), func(i, j int) { opts[i], opts[j] = opts[j], opts[i] })
	n := 0
	for _, op := range opts {
		n += int(op.OptionLength)
	}
	if n+4 <= 40 && r.IntN(2) == 0 {
		// An experimental option (RFC 6994) nobody here knows.
		opts = append(opts, layers.TCPOption{OptionType: 254, OptionLength: 4, OptionData: []byte{0xf9, 0x89}})
		o.Unknown++
		n += 4
	}
	for n < 40 && r.IntN(3) == 0 {
		at := r.IntN(len(opts) + 1)
		opts = append(opts[:at], append([]layers.TCPOption{{OptionType: layers.TCPOptionKindNop, OptionLength: 1}}, opts[at:]...)...)
		n++
	}
	tcp.Options = opts
	return tcp
}

func be32b(v uint32) []byte { return []byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)} }

// BenchmarkDecodeTCPGopacket is BenchmarkDecodeTCP with gopacket's
// DecodingLayerParser, for comparison.
func BenchmarkDecodeTCPGopacket(b *testing.B) {
	p := packet.Packet{Layers: packet.LayerEthernet | packet.LayerIPv4 | packet.LayerTCP, Payload: make([]byte, 1400)}
	p.TCP.Flags = packet.TCPFlagACK
	p.TCP.Options = packet.TCPOptions{HasTimestamps: true, NumSACK: 2}
	frame, err := p.AppendBinary(nil)
	if err != nil {
		b.Fatal(err)
	}
	var (
		eth layers.Ethernet
		ip  layers.IPv4
		tcp layers.TCP
		pl  gopacket.Payload
	)
	parser := gopacket.NewDecodingLayerParser(layers.LayerTypeEthernet, &eth, &ip, &tcp, &pl)
	decoded := make([]gopacket.LayerType, 0, 4)
	b.ReportAllocs()
	for b.Loop() {
		if err := parser.DecodeLayers(frame, &decoded); err != nil {
			b.Fatal(err)
		}
	}
}
