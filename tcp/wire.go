package tcp

import (
	"fmt"

	"github.com/pseudocong/pseudocong/packet"
)

// This file is the one place a Segment meets a real frame: the live shim
// and anything that wants pcap-able traffic convert here, the simulator
// carries Segments as they are.

// zeros is the payload of segments that carry none (the simulator's):
// shared and read-only (packet's encoder only copies from it).
var zeros [65535]byte

// ToPacket fills p's IPv4 and TCP layers from s (no Ethernet layer: the
// caller adds one if it frames for a link). payload, if not nil, must be
// s.Len bytes long; nil means s.Len zero bytes (the simulator keeps no
// payload).
//
// On a netsim.Host: attach an EndpointFunc that calls FromPacket and then
// Mux.Input, and give each Conn an Output that calls ToPacket with the
// host's addresses and the SendFunc Attach returned.
func ToPacket(s *Segment, src, dst [4]byte, payload []byte, p *packet.Packet) error {
	if payload != nil && len(payload) != s.Len {
		return fmt.Errorf("tcp: to packet: payload of %d bytes for a segment of %d", len(payload), s.Len)
	}
	if payload == nil && s.Len > 0 {
		if s.Len > len(zeros) {
			return fmt.Errorf("tcp: to packet: segment of %d bytes", s.Len)
		}
		payload = zeros[:s.Len:s.Len]
	}
	*p = packet.Packet{Layers: packet.LayerIPv4 | packet.LayerTCP, Payload: payload}
	p.IPv4 = packet.IPv4{TTL: 64, Protocol: packet.IPProtocolTCP, Src: src, Dst: dst, Flags: packet.IPv4DontFragment}
	p.IPv4.SetECN(s.ECN)
	t := &p.TCP
	t.SrcPort, t.DstPort = s.SrcPort, s.DstPort
	t.Seq, t.Ack = s.Seq, s.Ack
	t.Flags = s.Flags
	t.Window = s.Window
	o := &t.Options
	if s.MSS != 0 {
		o.HasMSS, o.MSS = true, s.MSS
	}
	if s.WScale >= 0 {
		o.HasWindowScale, o.WindowScale = true, uint8(s.WScale)
	}
	o.SACKPermitted = s.SACKPermitted
	o.NumSACK = s.NumSACK
	o.SACK = s.SACK
	if s.HasTS {
		o.HasTimestamps, o.TSVal, o.TSEcr = true, s.TSVal, s.TSEcr
	}
	return nil
}

// FromPacket fills s from a decoded packet with IPv4 and TCP layers. The
// payload's bytes are not kept, only its length.
func FromPacket(p *packet.Packet, s *Segment) error {
	if !p.Layers.Has(packet.LayerIPv4 | packet.LayerTCP) {
		return fmt.Errorf("tcp: from packet: not a TCP/IPv4 packet (layers %#x)", p.Layers)
	}
	t := &p.TCP
	*s = Segment{
		SrcPort: t.SrcPort, DstPort: t.DstPort,
		Seq: t.Seq, Ack: t.Ack, Flags: t.Flags, Window: t.Window,
		WScale: -1, Len: len(p.Payload), ECN: p.IPv4.ECN(),
	}
	o := &t.Options
	if o.HasMSS {
		s.MSS = o.MSS
	}
	if o.HasWindowScale {
		s.WScale = int8(min(o.WindowScale, 14)) // RFC 7323 §2.3: larger shifts are taken as 14
	}
	s.SACKPermitted = o.SACKPermitted
	s.NumSACK = min(max(o.NumSACK, 0), len(s.SACK))
	s.SACK = o.SACK
	if o.HasTimestamps {
		s.HasTS, s.TSVal, s.TSEcr = true, o.TSVal, o.TSEcr
	}
	return nil
}
