package live

import (
	"fmt"
	"net"
	"net/netip"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/pseudocong/pseudocong/probes"
)

// synMSS is the MSS option a probe SYN carries, like a real stack's.
const synMSS = 1460

// EncodeFrame builds the Ethernet/IPv4/TCP frame for p, with correct IP
// and TCP checksums. Data segments carry PayloadLen zero bytes.
func EncodeFrame(p probes.ProbePacket, src, dst net.HardwareAddr) ([]byte, error) {
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

// Decoded is a received frame as the endpoint sees it.
type Decoded struct {
	// Kind tells which of the fields below are set.
	Kind   FrameKind
	SrcMAC net.HardwareAddr
	DstMAC net.HardwareAddr
	// Probe is set for FrameProbe.
	Probe probes.ProbePacket
	// ARP fields, for FrameARPRequest / FrameARPReply.
	SenderIP, TargetIP netip.Addr
	SenderMAC          net.HardwareAddr
}

// FrameKind classifies a received frame.
type FrameKind uint8

const (
	FrameOther FrameKind = iota
	FrameProbe
	FrameARPRequest
	FrameARPReply
)

// frameParser decodes frames without allocating per layer; not safe for
// concurrent use (one per endpoint reader).
type frameParser struct {
	eth     layers.Ethernet
	ip4     layers.IPv4
	tcp     layers.TCP
	arp     layers.ARP
	payload gopacket.Payload
	parser  *gopacket.DecodingLayerParser
	decoded []gopacket.LayerType
}

func newFrameParser() *frameParser {
	f := &frameParser{}
	f.parser = gopacket.NewDecodingLayerParser(layers.LayerTypeEthernet, &f.eth, &f.ip4, &f.tcp, &f.arp, &f.payload)
	f.parser.IgnoreUnsupported = true
	return f
}

// decode classifies frame. TCP segments become probe packets: SYN (SYN
// without ACK), SYN-ACK, DATA (any payload) or ACK (ACK, no payload);
// RST and FIN segments are FrameOther.
func (f *frameParser) decode(frame []byte) Decoded {
	f.decoded = f.decoded[:0]
	_ = f.parser.DecodeLayers(frame, &f.decoded) // partial decodes are classified below
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

// DecodeFrame classifies one frame (convenience wrapper; endpoints reuse
// a parser).
func DecodeFrame(frame []byte) Decoded { return newFrameParser().decode(frame) }

var broadcastMAC = net.HardwareAddr{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}

// EncodeARP builds an ARP request (to broadcast) or reply (to dstMAC).
func EncodeARP(op uint16, srcMAC net.HardwareAddr, srcIP netip.Addr, dstMAC net.HardwareAddr, dstIP netip.Addr) ([]byte, error) {
	ethDst, arpDst := dstMAC, dstMAC
	if op == layers.ARPRequest {
		ethDst, arpDst = broadcastMAC, net.HardwareAddr{0, 0, 0, 0, 0, 0}
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
