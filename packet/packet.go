package packet

import "encoding/binary"

// Layers is a set of layers of a Packet.
type Layers uint8

// The layers a Packet can hold.
const (
	LayerEthernet Layers = 1 << iota
	LayerDot1Q
	LayerARP
	LayerIPv4
	LayerTCP
	LayerUDP
	LayerICMP
)

// Has reports whether all layers of x are in l.
func (l Layers) Has(x Layers) bool { return l&x == x }

// Packet is one frame: Ethernet, an optional 802.1Q tag, then ARP or IPv4,
// then (over IPv4) TCP, UDP or ICMP. Layers says which headers are valid.
//
// Decoding fills it in place and allocates nothing: slices (Payload,
// IPv4.Options, TCP.RawOptions) alias the frame. Reuse one Packet per
// reader; it is not safe for concurrent use.
type Packet struct {
	Layers   Layers
	Ethernet Ethernet
	Dot1Q    Dot1Q
	ARP      ARP
	IPv4     IPv4
	TCP      TCP
	UDP      UDP
	ICMP     ICMP
	// Payload is what follows the last header: the TCP/UDP/ICMP payload,
	// the IPv4 payload of a non-first fragment or an unknown protocol, or
	// the Ethernet payload of an unknown EtherType. After a decode error
	// it holds the bytes of the layer that failed.
	Payload []byte
	// Truncated is set by decoding when the frame ends before the IPv4
	// total length (e.g. a capture with a snap length).
	Truncated bool

	// The decoded IPv4 header and segment, kept for VerifyChecksums.
	ipHeader, segment []byte
}

// DecodeFromBytes decodes frame into p. Unknown EtherTypes and IP
// protocols are not errors: the decode stops there and Payload holds the
// rest, like gopacket's DecodingLayerParser with IgnoreUnsupported. Only one
// 802.1Q tag is decoded (an inner 0x8100 is an unknown EtherType).
//
// On error Layers holds the layers decoded before the one that failed. A
// non-first IPv4 fragment has no transport layer. Checksums are not
// checked here (the switch forwards frames with any checksum); see
// VerifyChecksums.
func (p *Packet) DecodeFromBytes(frame []byte) error {
	p.Layers, p.Payload, p.Truncated = 0, nil, false
	p.ipHeader, p.segment = nil, nil
	if err := p.Ethernet.DecodeFromBytes(frame); err != nil {
		p.Payload = frame
		return err
	}
	p.Layers = LayerEthernet
	rest := frame[EthernetLen:]
	typ := p.Ethernet.EtherType
	if typ == EtherTypeVLAN {
		if err := p.Dot1Q.DecodeFromBytes(rest); err != nil {
			p.Payload = rest
			return err
		}
		p.Layers |= LayerDot1Q
		rest = rest[Dot1QLen:]
		typ = p.Dot1Q.EtherType
	}
	p.Payload = rest
	switch typ {
	case EtherTypeARP:
		if err := p.ARP.DecodeFromBytes(rest); err != nil {
			return err
		}
		p.Layers |= LayerARP
		p.Payload = rest[ARPLen:] // padding
		return nil
	case EtherTypeIPv4:
		return p.decodeIPv4(rest)
	}
	return nil
}

func (p *Packet) decodeIPv4(b []byte) error {
	seg, trunc, err := p.IPv4.DecodeFromBytes(b)
	if err != nil {
		return err
	}
	p.Layers |= LayerIPv4
	p.Truncated = trunc
	p.ipHeader, p.segment = b[:int(p.IPv4.IHL)*4], seg
	p.Payload = seg
	if p.IPv4.FragOffset != 0 {
		return nil // a later fragment: no transport header here
	}
	switch p.IPv4.Protocol {
	case IPProtocolTCP:
		pl, err := p.TCP.DecodeFromBytes(seg)
		if err != nil {
			return err
		}
		p.Layers |= LayerTCP
		p.Payload = pl
	case IPProtocolUDP:
		pl, err := p.UDP.DecodeFromBytes(seg)
		if err != nil {
			return err
		}
		p.Layers |= LayerUDP
		p.Payload = pl
	case IPProtocolICMP:
		pl, err := p.ICMP.DecodeFromBytes(seg)
		if err != nil {
			return err
		}
		p.Layers |= LayerICMP
		p.Payload = pl
	}
	return nil
}

// VerifyChecksums checks the IPv4 header checksum and the TCP, UDP (unless
// 0, "none") or ICMP checksum of the last decoded packet. A truncated or
// fragmented datagram's transport checksum cannot be checked and is
// skipped (fragment) or an error (truncated).
func (p *Packet) VerifyChecksums() error {
	if !p.Layers.Has(LayerIPv4) {
		return nil
	}
	if Checksum(p.ipHeader, 0) != 0 {
		return errIPv4Checksum
	}
	if p.IPv4.IsFragment() {
		return nil
	}
	l4 := p.Layers & (LayerTCP | LayerUDP | LayerICMP)
	if l4 == 0 {
		return nil
	}
	if p.Truncated {
		return errVerifyTrunc
	}
	switch l4 {
	case LayerTCP:
		if Checksum(p.segment, PseudoHeaderSum(p.IPv4.Src, p.IPv4.Dst, IPProtocolTCP, len(p.segment))) != 0 {
			return errTCPChecksum
		}
	case LayerUDP:
		seg := p.segment[:min(int(p.UDP.Length), len(p.segment))]
		if p.UDP.Checksum != 0 && Checksum(seg, PseudoHeaderSum(p.IPv4.Src, p.IPv4.Dst, IPProtocolUDP, len(seg))) != 0 {
			return errUDPChecksum
		}
	case LayerICMP:
		if Checksum(p.segment, 0) != 0 {
			return errICMPChecksum
		}
	}
	return nil
}

// AppendBinary appends the frame p describes to b and returns the
// extended buffer. It derives what the layers imply: the EtherTypes (0x8100
// for a tag, then ARP or IPv4; an EtherType is kept only when no layer
// follows it), the IPv4 protocol, header and total lengths, the TCP data
// offset and UDP length, and every checksum. Frames shorter than 60 bytes
// are zero-padded, as a NIC (and gopacket) does. p is not modified; its
// length and checksum fields are ignored.
func (p *Packet) AppendBinary(b []byte) ([]byte, error) {
	orig := len(b)
	if !p.Layers.Has(LayerEthernet) {
		return b, errBuildNoEth
	}
	l3 := p.Layers & (LayerARP | LayerIPv4)
	l4 := p.Layers & (LayerTCP | LayerUDP | LayerICMP)
	if l3 == LayerARP|LayerIPv4 {
		return b, errBuildL3
	}
	if l4 != 0 && (l3 != LayerIPv4 || l4&(l4-1) != 0) {
		return b, errBuildL4
	}
	typ := p.Ethernet.EtherType
	if p.Layers.Has(LayerDot1Q) {
		typ = p.Dot1Q.EtherType
	}
	switch l3 {
	case LayerARP:
		typ = EtherTypeARP
	case LayerIPv4:
		typ = EtherTypeIPv4
	}
	if p.Layers.Has(LayerDot1Q) {
		b = p.Ethernet.appendTo(b, EtherTypeVLAN)
		b = p.Dot1Q.appendTo(b, typ)
	} else {
		b = p.Ethernet.appendTo(b, typ)
	}
	switch l3 {
	case LayerARP:
		b = p.ARP.appendTo(b)
		b = append(b, p.Payload...)
	case LayerIPv4:
		var err error
		if b, err = p.appendIPv4(b, l4); err != nil {
			return b[:orig], err
		}
	default:
		b = append(b, p.Payload...)
	}
	for len(b)-orig < MinFrameLen {
		b = append(b, 0)
	}
	return b, nil
}

// appendIPv4 appends the IPv4 header and what follows it. The header is
// written first with a guessed length and fixed up once the transport
// segment (whose size depends on TCP options) is in place.
func (p *Packet) appendIPv4(b []byte, l4 Layers) ([]byte, error) {
	ip := &p.IPv4
	proto := ip.Protocol
	switch l4 {
	case LayerTCP:
		proto = IPProtocolTCP
	case LayerUDP:
		proto = IPProtocolUDP
	case LayerICMP:
		proto = IPProtocolICMP
	}
	start := len(b)
	b, err := ip.appendHeader(b, proto, 0)
	if err != nil {
		return b, err
	}
	hl := len(b) - start
	switch l4 {
	case LayerTCP:
		if b, err = p.TCP.appendTo(b, ip.Src, ip.Dst, p.Payload); err != nil {
			return b, err
		}
	case LayerUDP:
		b = p.UDP.appendTo(b, ip.Src, ip.Dst, p.Payload)
	case LayerICMP:
		b = p.ICMP.appendTo(b, p.Payload)
	default:
		b = append(b, p.Payload...)
	}
	total := len(b) - start
	if total > 0xffff {
		return b, errBuildTooLong
	}
	h := b[start : start+hl]
	binary.BigEndian.PutUint16(h[2:], uint16(total))
	h[10], h[11] = 0, 0
	binary.BigEndian.PutUint16(h[10:], Checksum(h, 0))
	return b, nil
}
