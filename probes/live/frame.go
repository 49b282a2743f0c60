package live

import (
	"fmt"
	"net"
	"net/netip"

	"github.com/pseudocong/pseudocong/packet"
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
	pkt := packet.Packet{Layers: packet.LayerEthernet | packet.LayerIPv4 | packet.LayerTCP}
	if err := setMACs(&pkt.Ethernet, src, dst); err != nil {
		return nil, fmt.Errorf("encode %v %v: %w", p.Type, p.Tuple, err)
	}
	pkt.IPv4 = packet.IPv4{TTL: 64, Flags: packet.IPv4DontFragment, ID: uint16(p.Index),
		Src: p.Tuple.SrcIP.As4(), Dst: p.Tuple.DstIP.As4()}
	tcp := &pkt.TCP
	*tcp = packet.TCP{SrcPort: p.Tuple.SrcPort, DstPort: p.Tuple.DstPort, Seq: p.Seq, Ack: p.Ack, Window: 65535}
	switch p.Type {
	case probes.PacketSYN:
		tcp.Flags = packet.TCPFlagSYN
		tcp.Options = packet.TCPOptions{HasMSS: true, MSS: synMSS}
	case probes.PacketSYNACK:
		tcp.Flags = packet.TCPFlagSYN | packet.TCPFlagACK
		tcp.Options = packet.TCPOptions{HasMSS: true, MSS: synMSS}
	case probes.PacketData:
		tcp.Flags = packet.TCPFlagPSH | packet.TCPFlagACK
		if p.PayloadLen < 0 {
			return nil, fmt.Errorf("encode %v %v: payload length %d", p.Type, p.Tuple, p.PayloadLen)
		}
		pkt.Payload = make([]byte, p.PayloadLen)
	case probes.PacketACK:
		tcp.Flags = packet.TCPFlagACK
	default:
		return nil, fmt.Errorf("encode: packet type %v", p.Type)
	}
	frame, err := pkt.AppendBinary(make([]byte, 0, packet.EthernetLen+packet.IPv4MinLen+packet.TCPMinLen+4+len(pkt.Payload)))
	if err != nil {
		return nil, fmt.Errorf("encode %v %v: %w", p.Type, p.Tuple, err)
	}
	return frame, nil
}

// setMACs copies src and dst, which must be Ethernet (6-byte) addresses.
func setMACs(e *packet.Ethernet, src, dst net.HardwareAddr) error {
	if len(src) != 6 {
		return fmt.Errorf("invalid src MAC: %v", src)
	}
	if len(dst) != 6 {
		return fmt.Errorf("invalid dst MAC: %v", dst)
	}
	copy(e.Src[:], src)
	copy(e.Dst[:], dst)
	return nil
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

// frameParser decodes frames into one reused packet.Packet, without
// allocating per layer; not safe for concurrent use (one per endpoint
// reader).
type frameParser struct {
	pkt packet.Packet
}

func newFrameParser() *frameParser { return &frameParser{} }

// decode classifies frame. TCP segments become probe packets: SYN (SYN
// without ACK), SYN-ACK, DATA (any payload) or ACK (ACK, no payload);
// RST and FIN segments are FrameOther. So are 802.1Q-tagged frames (the
// endpoints' links are untagged) and IP fragments.
func (f *frameParser) decode(frame []byte) Decoded {
	p := &f.pkt
	_ = p.DecodeFromBytes(frame) // partial decodes are classified below
	var d Decoded
	if !p.Layers.Has(packet.LayerEthernet) {
		return d
	}
	d.SrcMAC = append(net.HardwareAddr(nil), p.Ethernet.Src[:]...)
	d.DstMAC = append(net.HardwareAddr(nil), p.Ethernet.Dst[:]...)
	if p.Layers.Has(packet.LayerDot1Q) {
		return d
	}
	switch {
	case p.Layers.Has(packet.LayerARP):
		a := &p.ARP
		d.SenderIP, d.TargetIP = netip.AddrFrom4(a.SenderIP), netip.AddrFrom4(a.TargetIP)
		d.SenderMAC = append(net.HardwareAddr(nil), a.SenderMAC[:]...)
		switch a.Op {
		case packet.ARPRequest:
			d.Kind = FrameARPRequest
		case packet.ARPReply:
			d.Kind = FrameARPReply
		}
		return d
	case p.Layers.Has(packet.LayerTCP):
		if p.IPv4.IsFragment() {
			return d
		}
		t := &p.TCP
		pp := probes.ProbePacket{
			Tuple: probes.FiveTuple{SrcIP: p.IPv4.SrcAddr(), DstIP: p.IPv4.DstAddr(), SrcPort: t.SrcPort, DstPort: t.DstPort, Proto: probes.ProtoTCP},
			Seq:   t.Seq, Ack: t.Ack, PayloadLen: len(p.Payload),
		}
		switch {
		case t.Flags&(packet.TCPFlagRST|packet.TCPFlagFIN) != 0:
			return d
		case t.Flags.Has(packet.TCPFlagSYN) && !t.Flags.Has(packet.TCPFlagACK):
			pp.Type = probes.PacketSYN
		case t.Flags.Has(packet.TCPFlagSYN | packet.TCPFlagACK):
			pp.Type = probes.PacketSYNACK
		case len(p.Payload) > 0:
			pp.Type = probes.PacketData
		case t.Flags.Has(packet.TCPFlagACK):
			pp.Type = probes.PacketACK
		default:
			return d
		}
		d.Kind, d.Probe = FrameProbe, pp
	}
	return d
}

// DecodeFrame classifies one frame (convenience wrapper; endpoints reuse
// a parser).
func DecodeFrame(frame []byte) Decoded { return newFrameParser().decode(frame) }

// EncodeARP builds an ARP request (to broadcast) or reply (to dstMAC).
func EncodeARP(op uint16, srcMAC net.HardwareAddr, srcIP netip.Addr, dstMAC net.HardwareAddr, dstIP netip.Addr) ([]byte, error) {
	if !srcIP.Is4() || !dstIP.Is4() {
		return nil, fmt.Errorf("encode arp %v -> %v: only IPv4", srcIP, dstIP)
	}
	pkt := packet.Packet{Layers: packet.LayerEthernet | packet.LayerARP}
	pkt.ARP = packet.ARP{Op: op, SenderIP: srcIP.As4(), TargetIP: dstIP.As4()}
	if op == packet.ARPRequest {
		// Ask everyone; the target MAC is what we want to know.
		dstMAC = net.HardwareAddr(packet.Broadcast[:])
	} else if len(dstMAC) == 6 {
		copy(pkt.ARP.TargetMAC[:], dstMAC)
	}
	if err := setMACs(&pkt.Ethernet, srcMAC, dstMAC); err != nil {
		return nil, fmt.Errorf("encode arp: %w", err)
	}
	pkt.ARP.SenderMAC = pkt.Ethernet.Src
	frame, err := pkt.AppendBinary(make([]byte, 0, packet.MinFrameLen))
	if err != nil {
		return nil, fmt.Errorf("encode arp: %w", err)
	}
	return frame, nil
}
