package packet_test

import (
	"math/rand/v2"

	"github.com/pseudocong/pseudocong/packet"
)

// randPacket is a random well-formed packet: Ethernet, sometimes a VLAN
// tag, then ARP, IPv4 (TCP, UDP, ICMP, a later fragment or another
// protocol) or an unknown EtherType.
func randPacket(r *rand.Rand) packet.Packet {
	var p packet.Packet
	p.Layers = packet.LayerEthernet
	randBytes(r, p.Ethernet.Dst[:])
	randBytes(r, p.Ethernet.Src[:])
	if r.IntN(4) == 0 {
		p.Layers |= packet.LayerDot1Q
		p.Dot1Q = packet.Dot1Q{Priority: uint8(r.IntN(8)), DropEligible: r.IntN(2) == 0, VLANID: uint16(r.IntN(4096))}
	}
	switch r.IntN(10) {
	case 0:
		p.Layers |= packet.LayerARP
		p.ARP.Op = uint16(1 + r.IntN(2))
		randBytes(r, p.ARP.SenderMAC[:])
		randBytes(r, p.ARP.SenderIP[:])
		randBytes(r, p.ARP.TargetMAC[:])
		randBytes(r, p.ARP.TargetIP[:])
	case 1:
		// An EtherType nobody here decodes (not VLAN, ARP or IPv4).
		typ := packet.EtherType(0x0600 + r.IntN(0xf9ff))
		for typ == packet.EtherTypeVLAN || typ == packet.EtherTypeARP || typ == packet.EtherTypeIPv4 {
			typ++
		}
		if p.Layers.Has(packet.LayerDot1Q) {
			p.Dot1Q.EtherType = typ
		} else {
			p.Ethernet.EtherType = typ
		}
		p.Payload = randPayload(r, 80)
	default:
		p.Layers |= packet.LayerIPv4
		randIPv4(r, &p)
	}
	return p
}

func randIPv4(r *rand.Rand, p *packet.Packet) {
	ip := &p.IPv4
	ip.TOS = uint8(r.IntN(256))
	ip.ID = uint16(r.IntN(1 << 16))
	ip.TTL = uint8(r.IntN(256))
	randBytes(r, ip.Src[:])
	randBytes(r, ip.Dst[:])
	if r.IntN(5) == 0 {
		// Record-route-like option, NOP-padded to 4 bytes.
		n := 1 + r.IntN(3)
		ip.Options = append([]byte{7, byte(3 + 4*n), 4}, make([]byte, 4*n)...)
		randBytes(r, ip.Options[3:])
		for len(ip.Options)%4 != 0 {
			ip.Options = append(ip.Options, 1)
		}
	}
	switch r.IntN(5) {
	case 0:
		ip.Flags = packet.IPv4DontFragment
	case 1:
		ip.Flags = packet.IPv4MoreFragments
	}
	p.Payload = randPayload(r, 100)
	switch r.IntN(8) {
	case 0, 1, 2:
		p.Layers |= packet.LayerTCP
		randTCP(r, &p.TCP)
	case 3, 4:
		p.Layers |= packet.LayerUDP
		p.UDP = packet.UDP{SrcPort: uint16(r.IntN(1 << 16)), DstPort: uint16(r.IntN(1 << 16))}
	case 5:
		p.Layers |= packet.LayerICMP
		p.ICMP = packet.ICMP{Type: []uint8{packet.ICMPEchoRequest, packet.ICMPEchoReply}[r.IntN(2)],
			ID: uint16(r.IntN(1 << 16)), Seq: uint16(r.IntN(1 << 16))}
	case 6:
		// A later fragment: the payload is no transport header.
		ip.Protocol = []packet.IPProtocol{packet.IPProtocolTCP, packet.IPProtocolUDP, packet.IPProtocolICMP}[r.IntN(3)]
		ip.FragOffset = uint16(1 + r.IntN(0x1fff))
	default:
		ip.Protocol = packet.IPProtocol(r.IntN(256))
		for ip.Protocol == packet.IPProtocolTCP || ip.Protocol == packet.IPProtocolUDP || ip.Protocol == packet.IPProtocolICMP {
			ip.Protocol++
		}
	}
}

func randTCP(r *rand.Rand, t *packet.TCP) {
	t.SrcPort, t.DstPort = uint16(r.IntN(1<<16)), uint16(r.IntN(1<<16))
	t.Seq, t.Ack = r.Uint32(), r.Uint32()
	t.Flags = packet.TCPFlags(r.IntN(1 << 9))
	t.Window, t.Urgent = uint16(r.IntN(1<<16)), uint16(r.IntN(1<<16))
	o := &t.Options
	o.HasMSS, o.MSS = r.IntN(2) == 0, uint16(r.IntN(1<<16))
	o.HasWindowScale, o.WindowScale = r.IntN(2) == 0, uint8(r.IntN(15))
	o.SACKPermitted = r.IntN(2) == 0
	o.HasTimestamps, o.TSVal, o.TSEcr = r.IntN(2) == 0, r.Uint32(), r.Uint32()
	// Values of absent options are not on the wire.
	if !o.HasMSS {
		o.MSS = 0
	}
	if !o.HasWindowScale {
		o.WindowScale = 0
	}
	if !o.HasTimestamps {
		o.TSVal, o.TSEcr = 0, 0
	}
	// Up to 40 option bytes: what is left after the others bounds the
	// number of SACK blocks (4 + 8n).
	used := 0
	if o.HasMSS {
		used += 4
	}
	if o.SACKPermitted || o.HasTimestamps {
		used += 2
	}
	if o.HasTimestamps {
		used += 10
	}
	if o.SACKPermitted && !o.HasTimestamps {
		used += 2
	}
	if o.HasWindowScale {
		used += 4
	}
	if room := (40 - used - 4) / 8; room > 0 && r.IntN(2) == 0 {
		o.NumSACK = 1 + r.IntN(min(room, 4))
		for i := range o.NumSACK {
			o.SACK[i] = packet.SACKBlock{Left: r.Uint32(), Right: r.Uint32()}
		}
	}
}

func randBytes(r *rand.Rand, b []byte) {
	for i := range b {
		b[i] = byte(r.IntN(256))
	}
}

func randPayload(r *rand.Rand, max int) []byte {
	n := r.IntN(max + 1)
	if n == 0 {
		return nil
	}
	b := make([]byte, n)
	randBytes(r, b)
	return b
}
