package live

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"reflect"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/pseudocong/pseudocong/probes"
)

// frame.go moved from gopacket to the packet package. The tests below keep
// the gopacket implementation it replaced (verbatim, renamed) and require
// the same bytes from the encoders and the same classification from the
// decoder, over random probe packets and random damage to their frames.

func gopacketEncodeFrame(p probes.ProbePacket, src, dst net.HardwareAddr) ([]byte, error) {
	if !p.Tuple.SrcIP.Is4() || !p.Tuple.DstIP.Is4() {
		return nil, fmt.Errorf("encode %v: only IPv4 tuples", p.Tuple)
	}
	eth := &layers.Ethernet{SrcMAC: src, DstMAC: dst, EthernetType: layers.EthernetTypeIPv4}
	ip := &layers.IPv4{
		Version: 4, TTL: 64, Protocol: layers.IPProtocolTCP, Flags: layers.IPv4DontFragment,
		Id:    uint16(p.Index),
		SrcIP: p.Tuple.SrcIP.AsSlice(), DstIP: p.Tuple.DstIP.AsSlice(),
	}
	tcp := &layers.TCP{
		SrcPort: layers.TCPPort(p.Tuple.SrcPort), DstPort: layers.TCPPort(p.Tuple.DstPort),
		Seq: p.Seq, Ack: p.Ack, Window: 65535,
	}
	var payload []byte
	switch p.Type {
	case probes.PacketSYN:
		tcp.SYN = true
		tcp.Options = []layers.TCPOption{{OptionType: layers.TCPOptionKindMSS, OptionLength: 4, OptionData: []byte{synMSS >> 8, synMSS & 0xff}}}
	case probes.PacketSYNACK:
		tcp.SYN, tcp.ACK = true, true
		tcp.Options = []layers.TCPOption{{OptionType: layers.TCPOptionKindMSS, OptionLength: 4, OptionData: []byte{synMSS >> 8, synMSS & 0xff}}}
	case probes.PacketData:
		tcp.PSH, tcp.ACK = true, true
		payload = make([]byte, p.PayloadLen)
	case probes.PacketACK:
		tcp.ACK = true
	default:
		return nil, fmt.Errorf("encode: packet type %v", p.Type)
	}
	if err := tcp.SetNetworkLayerForChecksum(ip); err != nil {
		return nil, err
	}
	buf := gopacket.NewSerializeBuffer()
	opts := gopacket.SerializeOptions{ComputeChecksums: true, FixLengths: true}
	if err := gopacket.SerializeLayers(buf, opts, eth, ip, tcp, gopacket.Payload(payload)); err != nil {
		return nil, fmt.Errorf("encode %v %v: %w", p.Type, p.Tuple, err)
	}
	return buf.Bytes(), nil
}

type gopacketFrameParser struct {
	eth     layers.Ethernet
	ip4     layers.IPv4
	tcp     layers.TCP
	arp     layers.ARP
	payload gopacket.Payload
	parser  *gopacket.DecodingLayerParser
	decoded []gopacket.LayerType
}

func newGopacketFrameParser() *gopacketFrameParser {
	f := &gopacketFrameParser{}
	f.parser = gopacket.NewDecodingLayerParser(layers.LayerTypeEthernet, &f.eth, &f.ip4, &f.tcp, &f.arp, &f.payload)
	f.parser.IgnoreUnsupported = true
	return f
}

func (f *gopacketFrameParser) decode(frame []byte) Decoded {
	f.decoded = f.decoded[:0]
	_ = f.parser.DecodeLayers(frame, &f.decoded)
	var d Decoded
	var haveEth, haveIP, haveTCP, haveARP bool
	for _, lt := range f.decoded {
		switch lt {
		case layers.LayerTypeEthernet:
			haveEth = true
		case layers.LayerTypeIPv4:
			haveIP = true
		case layers.LayerTypeTCP:
			haveTCP = true
		case layers.LayerTypeARP:
			haveARP = true
		}
	}
	if !haveEth {
		return d
	}
	d.SrcMAC = append(net.HardwareAddr(nil), f.eth.SrcMAC...)
	d.DstMAC = append(net.HardwareAddr(nil), f.eth.DstMAC...)
	switch {
	case haveARP:
		if f.arp.AddrType != layers.LinkTypeEthernet || f.arp.Protocol != layers.EthernetTypeIPv4 ||
			len(f.arp.SourceProtAddress) != 4 || len(f.arp.DstProtAddress) != 4 {
			return d
		}
		d.SenderIP, _ = netip.AddrFromSlice(f.arp.SourceProtAddress)
		d.TargetIP, _ = netip.AddrFromSlice(f.arp.DstProtAddress)
		d.SenderMAC = append(net.HardwareAddr(nil), f.arp.SourceHwAddress...)
		switch f.arp.Operation {
		case layers.ARPRequest:
			d.Kind = FrameARPRequest
		case layers.ARPReply:
			d.Kind = FrameARPReply
		}
		return d
	case haveIP && haveTCP:
		if f.ip4.Flags&layers.IPv4MoreFragments != 0 || f.ip4.FragOffset != 0 {
			return d
		}
		src, _ := netip.AddrFromSlice(f.ip4.SrcIP.To4())
		dst, _ := netip.AddrFromSlice(f.ip4.DstIP.To4())
		t := &f.tcp
		p := probes.ProbePacket{
			Tuple: probes.FiveTuple{SrcIP: src, DstIP: dst, SrcPort: uint16(t.SrcPort), DstPort: uint16(t.DstPort), Proto: probes.ProtoTCP},
			Seq:   t.Seq, Ack: t.Ack, PayloadLen: len(t.Payload),
		}
		switch {
		case t.RST || t.FIN:
			return d
		case t.SYN && !t.ACK:
			p.Type = probes.PacketSYN
		case t.SYN && t.ACK:
			p.Type = probes.PacketSYNACK
		case len(t.Payload) > 0:
			p.Type = probes.PacketData
		case t.ACK:
			p.Type = probes.PacketACK
		default:
			return d
		}
		d.Kind, d.Probe = FrameProbe, p
	}
	return d
}

func gopacketEncodeARP(op uint16, srcMAC net.HardwareAddr, srcIP netip.Addr, dstMAC net.HardwareAddr, dstIP netip.Addr) ([]byte, error) {
	ethDst, arpDst := dstMAC, dstMAC
	if op == layers.ARPRequest {
		ethDst, arpDst = net.HardwareAddr{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, net.HardwareAddr{0, 0, 0, 0, 0, 0}
	}
	eth := &layers.Ethernet{SrcMAC: srcMAC, DstMAC: ethDst, EthernetType: layers.EthernetTypeARP}
	arp := &layers.ARP{
		AddrType: layers.LinkTypeEthernet, Protocol: layers.EthernetTypeIPv4,
		HwAddressSize: 6, ProtAddressSize: 4, Operation: op,
		SourceHwAddress: srcMAC, SourceProtAddress: srcIP.AsSlice(),
		DstHwAddress: arpDst, DstProtAddress: dstIP.AsSlice(),
	}
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true}, eth, arp); err != nil {
		return nil, fmt.Errorf("encode arp: %w", err)
	}
	return buf.Bytes(), nil
}

func randMAC(r *rand.Rand) net.HardwareAddr {
	m := make(net.HardwareAddr, 6)
	for i := range m {
		m[i] = byte(r.IntN(256))
	}
	return m
}

func randAddr(r *rand.Rand) netip.Addr {
	var a [4]byte
	for i := range a {
		a[i] = byte(r.IntN(256))
	}
	return netip.AddrFrom4(a)
}

func randProbe(r *rand.Rand) probes.ProbePacket {
	p := probes.ProbePacket{
		Type:  []probes.PacketType{probes.PacketSYN, probes.PacketSYNACK, probes.PacketData, probes.PacketACK}[r.IntN(4)],
		Index: r.IntN(1 << 20),
		Tuple: probes.FiveTuple{SrcIP: randAddr(r), DstIP: randAddr(r), SrcPort: uint16(r.IntN(1 << 16)),
			DstPort: uint16(r.IntN(1 << 16)), Proto: probes.ProtoTCP},
		Seq: r.Uint32(), Ack: r.Uint32(),
	}
	if p.Type == probes.PacketData {
		p.PayloadLen = r.IntN(1500)
	}
	return p
}

// sameDecoded compares two Decoded values, treating nil and empty MACs
// alike.
func sameDecoded(a, b Decoded) bool {
	norm := func(d *Decoded) {
		for _, m := range []*net.HardwareAddr{&d.SrcMAC, &d.DstMAC, &d.SenderMAC} {
			if len(*m) == 0 {
				*m = nil
			}
		}
	}
	norm(&a)
	norm(&b)
	return reflect.DeepEqual(a, b)
}

func TestEncodersMatchGopacket(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for i := range 3000 {
		p, src, dst := randProbe(r), randMAC(r), randMAC(r)
		want, err := gopacketEncodeFrame(p, src, dst)
		if err != nil {
			t.Fatal(err)
		}
		got, err := EncodeFrame(p, src, dst)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("probe %d %+v: %v\ngopacket % x\npacket   % x", i, p, err, want, got)
		}
		op := uint16(1 + r.IntN(2))
		wantARP, err := gopacketEncodeARP(op, src, p.Tuple.SrcIP, dst, p.Tuple.DstIP)
		if err != nil {
			t.Fatal(err)
		}
		gotARP, err := EncodeARP(op, src, p.Tuple.SrcIP, dst, p.Tuple.DstIP)
		if err != nil || !bytes.Equal(gotARP, wantARP) {
			t.Fatalf("arp %d: %v\ngopacket % x\npacket   % x", i, err, wantARP, gotARP)
		}
	}
	if _, err := EncodeFrame(randProbe(r), net.HardwareAddr{1, 2, 3}, randMAC(r)); err == nil {
		t.Fatal("a 3-byte source MAC was accepted")
	}
}

// TestDecodeMatchesGopacket: the same classification as the gopacket
// parser on probe and ARP frames, damaged in random header bytes or cut
// short. The known differences are left out and pinned down by their own
// tests below: ARP with a hardware address size other than 6, and IPv4
// frames whose version field is not 4.
func TestDecodeMatchesGopacket(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	old, cur := newGopacketFrameParser(), newFrameParser()
	kinds := map[FrameKind]int{}
	for i := range 40000 {
		p, src, dst := randProbe(r), randMAC(r), randMAC(r)
		var frame []byte
		var err error
		if r.IntN(5) == 0 {
			frame, err = EncodeARP(uint16(1+r.IntN(2)), src, p.Tuple.SrcIP, dst, p.Tuple.DstIP)
		} else {
			frame, err = EncodeFrame(p, src, dst)
		}
		if err != nil {
			t.Fatal(err)
		}
		switch i % 3 {
		case 1:
			for range 1 + r.IntN(2) {
				frame[r.IntN(min(len(frame), 60))] = byte(r.IntN(256))
			}
		case 2:
			frame = frame[:r.IntN(len(frame)+1)]
		}
		if len(frame) >= 20 && frame[12] == 0x08 && frame[13] == 0x06 && frame[18] != 6 {
			continue // ARP hardware size not 6: see TestDecodeARPHardwareSize
		}
		if len(frame) >= 15 && frame[12] == 0x08 && frame[13] == 0x00 && frame[14]>>4 != 4 {
			continue // IP version not 4: see TestDecodeIPVersion
		}
		want, got := old.decode(frame), cur.decode(frame)
		if !sameDecoded(want, got) {
			t.Fatalf("frame %d:\ngopacket %+v\npacket   %+v\n% x", i, want, got, frame)
		}
		kinds[got.Kind]++
	}
	t.Logf("kinds compared: %v", kinds)
}

// TestDecodeARPHardwareSize: an "Ethernet" ARP whose hardware address size
// is not 6 is not an ARP the endpoint can answer. The gopacket parser took
// its sender address of whatever size as the host's MAC; now it is
// FrameOther.
func TestDecodeARPHardwareSize(t *testing.T) {
	frame, err := EncodeARP(1, macA, netip.MustParseAddr("10.0.1.1"), nil, netip.MustParseAddr("10.0.1.2"))
	if err != nil {
		t.Fatal(err)
	}
	frame[18] = 4 // hardware size: the addresses shift
	if d := DecodeFrame(frame); d.Kind != FrameOther || d.SenderMAC != nil {
		t.Fatalf("decoded as %+v, want FrameOther", d)
	}
}

// TestDecodeTaggedIsOther: the endpoints' links are untagged; a tagged
// probe frame was FrameOther with gopacket (no 802.1Q decoder) and stays so.
func TestDecodeTaggedIsOther(t *testing.T) {
	frame, err := EncodeFrame(probes.ProbePacket{Type: probes.PacketACK, Tuple: tuple()}, macA, macB)
	if err != nil {
		t.Fatal(err)
	}
	tagged := append(append(append([]byte(nil), frame[:12]...), 0x81, 0x00, 0, 5), frame[12:]...)
	for _, d := range []Decoded{newGopacketFrameParser().decode(tagged), DecodeFrame(tagged)} {
		if d.Kind != FrameOther {
			t.Fatalf("tagged frame decoded as %+v", d)
		}
	}
}

// TestDecodeIPVersion: gopacket's IPv4 decoder does not look at the
// version field, so a frame with EtherType IPv4 and version 15 was a probe
// segment. Linux drops it (ip_rcv), and so does the endpoint now.
func TestDecodeIPVersion(t *testing.T) {
	frame, err := EncodeFrame(probes.ProbePacket{Type: probes.PacketACK, Tuple: tuple()}, macA, macB)
	if err != nil {
		t.Fatal(err)
	}
	frame[14] = 0xf5
	if d := DecodeFrame(frame); d.Kind != FrameOther {
		t.Fatalf("IP version 15 decoded as %+v, want FrameOther", d)
	}
}
