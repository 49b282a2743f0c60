package softswitch

import (
	"encoding/binary"

	"github.com/pseudocong/pseudocong/packet"
	"github.com/pseudocong/pseudocong/softswitch/flowtable"
)

// Frame rewrites for the set-field actions. Checksums are updated
// incrementally (RFC 1624), so a frame whose checksums were right stays
// right, and one whose checksums were wrong (e.g. left to an offloading
// NIC) stays wrong by the same amount. The update is packet's
// UpdateChecksum16/32.

// l4ChecksumOffset is the offset of the checksum inside a TCP or UDP
// header, or -1.
func l4ChecksumOffset(proto uint8) int {
	switch proto {
	case uint8(packet.IPProtocolTCP):
		return 16
	case uint8(packet.IPProtocolUDP):
		return 6
	}
	return -1
}

// updateL4Checksum applies a pseudo-header or port change to the TCP/UDP
// checksum. A UDP checksum of 0 means "none" and stays 0; a computed 0
// becomes 0xffff.
func updateL4Checksum(pkt []byte, l flowtable.Layout, proto uint8, update func(uint16) uint16) {
	off := l4ChecksumOffset(proto)
	if off < 0 || l.L4Offset < 0 || len(pkt) < l.L4Offset+off+2 {
		return
	}
	p := pkt[l.L4Offset+off:]
	sum := binary.BigEndian.Uint16(p)
	if proto == uint8(packet.IPProtocolUDP) && sum == 0 {
		return
	}
	sum = update(sum)
	if proto == uint8(packet.IPProtocolUDP) && sum == 0 {
		sum = 0xffff
	}
	binary.BigEndian.PutUint16(p, sum)
}

// setNwAddr rewrites the IPv4 source (at 12) or destination (at 16).
func setNwAddr(pkt []byte, l flowtable.Layout, at int, addr uint32) {
	if !l.IPv4 {
		return
	}
	ip := pkt[l.L3Offset:]
	old := binary.BigEndian.Uint32(ip[at:])
	if old == addr {
		return
	}
	binary.BigEndian.PutUint32(ip[at:], addr)
	binary.BigEndian.PutUint16(ip[10:], packet.UpdateChecksum32(binary.BigEndian.Uint16(ip[10:]), old, addr))
	updateL4Checksum(pkt, l, ip[9], func(sum uint16) uint16 { return packet.UpdateChecksum32(sum, old, addr) })
}

// setNwTos rewrites the DSCP bits and keeps ECN.
func setNwTos(pkt []byte, l flowtable.Layout, tos uint8) {
	if !l.IPv4 {
		return
	}
	ip := pkt[l.L3Offset:]
	oldWord := binary.BigEndian.Uint16(ip[0:])
	ip[1] = ip[1]&0x03 | tos&0xfc
	newWord := binary.BigEndian.Uint16(ip[0:])
	binary.BigEndian.PutUint16(ip[10:], packet.UpdateChecksum16(binary.BigEndian.Uint16(ip[10:]), oldWord, newWord))
}

// setTpPort rewrites the TCP/UDP source (at 0) or destination (at 2) port.
func setTpPort(pkt []byte, l flowtable.Layout, at int, port uint16) {
	if !l.IPv4 || l.L4Offset < 0 {
		return
	}
	proto := pkt[l.L3Offset+9]
	if l4ChecksumOffset(proto) < 0 || len(pkt) < l.L4Offset+4 {
		return
	}
	p := pkt[l.L4Offset+at:]
	old := binary.BigEndian.Uint16(p)
	binary.BigEndian.PutUint16(p, port)
	updateL4Checksum(pkt, l, proto, func(sum uint16) uint16 { return packet.UpdateChecksum16(sum, old, port) })
}

func tagged(pkt []byte) bool {
	return len(pkt) >= packet.EthernetLen+packet.Dot1QLen && packet.EtherType(binary.BigEndian.Uint16(pkt[12:])) == packet.EtherTypeVLAN
}

// setVlanTCI sets the bits of the 802.1Q TCI selected by mask to val,
// pushing a tag (TCI 0 before the change) onto an untagged frame, as
// OpenFlow 1.0's SET_VLAN_VID / SET_VLAN_PCP do.
func setVlanTCI(pkt []byte, mask, val uint16) []byte {
	if len(pkt) < 14 {
		return pkt
	}
	if !tagged(pkt) {
		out := make([]byte, len(pkt)+4)
		copy(out, pkt[:12])
		binary.BigEndian.PutUint16(out[12:], uint16(packet.EtherTypeVLAN))
		copy(out[16:], pkt[12:])
		pkt = out
	}
	tci := binary.BigEndian.Uint16(pkt[14:])
	binary.BigEndian.PutUint16(pkt[14:], tci&^mask|val&mask)
	return pkt
}

// stripVlan pops the outer 802.1Q tag, if any.
func stripVlan(pkt []byte) []byte {
	if !tagged(pkt) {
		return pkt
	}
	copy(pkt[12:], pkt[16:])
	return pkt[:len(pkt)-4]
}
