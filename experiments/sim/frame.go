package sim

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"

	"github.com/pseudocong/pseudocong/probes"
)

// Frames: the sim's hosts put real Ethernet II / IPv4 / TCP frames on their
// links, so the switch parses exactly what it would parse in a live run and
// Packet-Ins carry real packet bytes to the controller.

const (
	ethHeaderLen  = 14
	ipv4HeaderLen = 20
	tcpHeaderLen  = 20
	etherTypeIPv4 = 0x0800
)

// TCP flags.
const (
	tcpFIN = 0x01
	tcpSYN = 0x02
	tcpRST = 0x04
	tcpPSH = 0x08
	tcpACK = 0x10
)

// MACFor gives each host address a stable, locally administered MAC
// (02:00 followed by the IPv4 address), so frames need no ARP.
func MACFor(a netip.Addr) [6]byte {
	b := a.As4()
	return [6]byte{0x02, 0x00, b[0], b[1], b[2], b[3]}
}

// EncodeFrame turns a probe packet into the frame its host would send.
func EncodeFrame(p probes.ProbePacket) ([]byte, error) {
	t := p.Tuple
	if !t.SrcIP.Is4() || !t.DstIP.Is4() {
		return nil, fmt.Errorf("frame: tuple %v is not IPv4", t)
	}
	if t.Proto != probes.ProtoTCP {
		return nil, fmt.Errorf("frame: tuple %v is not TCP", t)
	}
	var flags uint8
	payload := 0
	switch p.Type {
	case probes.PacketSYN:
		flags = tcpSYN
	case probes.PacketSYNACK:
		flags = tcpSYN | tcpACK
	case probes.PacketData:
		flags = tcpPSH | tcpACK
		payload = p.PayloadLen
	case probes.PacketACK:
		flags = tcpACK
	default:
		return nil, fmt.Errorf("frame: unknown probe packet type %v", p.Type)
	}
	ipLen := ipv4HeaderLen + tcpHeaderLen + payload
	if ipLen > 0xffff {
		return nil, fmt.Errorf("frame: payload %d too large", payload)
	}
	f := make([]byte, ethHeaderLen+ipLen)
	dst, src := MACFor(t.DstIP), MACFor(t.SrcIP)
	copy(f[0:6], dst[:])
	copy(f[6:12], src[:])
	binary.BigEndian.PutUint16(f[12:14], etherTypeIPv4)

	ip := f[ethHeaderLen:]
	ip[0] = 0x45 // version 4, IHL 5
	binary.BigEndian.PutUint16(ip[2:4], uint16(ipLen))
	binary.BigEndian.PutUint16(ip[4:6], uint16(p.Index)) // identification
	ip[6] = 0x40                                         // don't fragment
	ip[8] = 64                                           // TTL
	ip[9] = probes.ProtoTCP
	s4, d4 := t.SrcIP.As4(), t.DstIP.As4()
	copy(ip[12:16], s4[:])
	copy(ip[16:20], d4[:])
	binary.BigEndian.PutUint16(ip[10:12], checksum(ip[:ipv4HeaderLen], 0))

	tcp := ip[ipv4HeaderLen:]
	binary.BigEndian.PutUint16(tcp[0:2], t.SrcPort)
	binary.BigEndian.PutUint16(tcp[2:4], t.DstPort)
	binary.BigEndian.PutUint32(tcp[4:8], p.Seq)
	binary.BigEndian.PutUint32(tcp[8:12], p.Ack)
	tcp[12] = 5 << 4 // data offset
	tcp[13] = flags
	binary.BigEndian.PutUint16(tcp[14:16], 65535) // window
	// Payload bytes stay zero; the checksum covers them all the same.
	binary.BigEndian.PutUint16(tcp[16:18], checksum(tcp, pseudoHeaderSum(s4, d4, len(tcp))))
	return f, nil
}

// DecodeFrame is the receiving host's stack: it checks the frame and turns
// it back into a probe packet. Index and Attempt are not on the wire and
// come back as zero (the prober matches replies by tuple and ack).
func DecodeFrame(f []byte) (probes.ProbePacket, error) {
	var p probes.ProbePacket
	if len(f) < ethHeaderLen+ipv4HeaderLen+tcpHeaderLen {
		return p, fmt.Errorf("frame: %d bytes, too short for TCP/IPv4", len(f))
	}
	if binary.BigEndian.Uint16(f[12:14]) != etherTypeIPv4 {
		return p, errors.New("frame: not IPv4")
	}
	ip := f[ethHeaderLen:]
	ihl := int(ip[0]&0x0f) * 4
	total := int(binary.BigEndian.Uint16(ip[2:4]))
	if ip[0]>>4 != 4 || ihl < ipv4HeaderLen || total < ihl+tcpHeaderLen || total > len(ip) {
		return p, errors.New("frame: bad IPv4 header")
	}
	if checksum(ip[:ihl], 0) != 0 {
		return p, errors.New("frame: bad IPv4 checksum")
	}
	if ip[9] != probes.ProtoTCP {
		return p, fmt.Errorf("frame: IP protocol %d is not TCP", ip[9])
	}
	var s4, d4 [4]byte
	copy(s4[:], ip[12:16])
	copy(d4[:], ip[16:20])
	tcp := ip[ihl:total]
	if checksum(tcp, pseudoHeaderSum(s4, d4, len(tcp))) != 0 {
		return p, errors.New("frame: bad TCP checksum")
	}
	off := int(tcp[12]>>4) * 4
	if off < tcpHeaderLen || off > len(tcp) {
		return p, errors.New("frame: bad TCP data offset")
	}
	p.Tuple = probes.FiveTuple{
		SrcIP: netip.AddrFrom4(s4), DstIP: netip.AddrFrom4(d4),
		SrcPort: binary.BigEndian.Uint16(tcp[0:2]), DstPort: binary.BigEndian.Uint16(tcp[2:4]),
		Proto: probes.ProtoTCP,
	}
	p.Seq = binary.BigEndian.Uint32(tcp[4:8])
	p.Ack = binary.BigEndian.Uint32(tcp[8:12])
	p.PayloadLen = len(tcp) - off
	flags := tcp[13]
	switch {
	case flags&tcpSYN != 0 && flags&tcpACK != 0:
		p.Type = probes.PacketSYNACK
	case flags&tcpSYN != 0:
		p.Type = probes.PacketSYN
	case p.PayloadLen > 0:
		p.Type = probes.PacketData
	case flags&tcpACK != 0:
		p.Type = probes.PacketACK
	default:
		return p, fmt.Errorf("frame: TCP flags %#x are no probe segment", flags)
	}
	return p, nil
}

func pseudoHeaderSum(src, dst [4]byte, tcpLen int) uint32 {
	s := uint32(src[0])<<8 | uint32(src[1])
	s += uint32(src[2])<<8 | uint32(src[3])
	s += uint32(dst[0])<<8 | uint32(dst[1])
	s += uint32(dst[2])<<8 | uint32(dst[3])
	s += probes.ProtoTCP
	s += uint32(tcpLen)
	return s
}

// checksum is the Internet checksum (RFC 1071) of b, starting from the
// partial sum initial. Over data that includes a correct checksum it is 0.
func checksum(b []byte, initial uint32) uint16 {
	s := initial
	for i := 0; i+1 < len(b); i += 2 {
		s += uint32(b[i])<<8 | uint32(b[i+1])
	}
	if len(b)%2 == 1 {
		s += uint32(b[len(b)-1]) << 8
	}
	for s > 0xffff {
		s = s>>16 + s&0xffff
	}
	return ^uint16(s)
}
