package egress

import (
	"encoding/binary"

	"github.com/pseudocong/pseudocong/netsim"
)

// The ECN field of a frame's IP header, read for the qdisc and set to CE
// when a marking qdisc (RED with ecn) marks the packet. Only the header
// is touched, at most one VLAN tag deep; anything else is Not-ECT, which a
// marking qdisc drops instead of marking, as Linux does.

const (
	etherTypeIPv4 = 0x0800
	etherTypeIPv6 = 0x86dd
	etherTypeVLAN = 0x8100
)

// ipHeader returns the offset of the IP header and its version (4, 6, or
// 0 if the frame carries neither).
func ipHeader(f []byte) (int, int) {
	if len(f) < 14 {
		return 0, 0
	}
	off, et := 14, binary.BigEndian.Uint16(f[12:14])
	if et == etherTypeVLAN {
		if len(f) < 18 {
			return 0, 0
		}
		off, et = 18, binary.BigEndian.Uint16(f[16:18])
	}
	switch {
	case et == etherTypeIPv4 && len(f) >= off+20 && f[off]>>4 == 4:
		return off, 4
	case et == etherTypeIPv6 && len(f) >= off+40 && f[off]>>4 == 6:
		return off, 6
	}
	return 0, 0
}

func frameECN(f []byte) netsim.ECN {
	off, v := ipHeader(f)
	switch v {
	case 4:
		return netsim.ECN(f[off+1] & 3)
	case 6:
		return netsim.ECN(f[off+1] >> 4 & 3)
	}
	return netsim.NotECT
}

// setCE sets the ECN field to CE, updating the IPv4 header checksum
// incrementally (RFC 1624: HC' = ~(~HC + ~m + m')).
func setCE(f []byte) {
	off, v := ipHeader(f)
	switch v {
	case 4:
		old := binary.BigEndian.Uint16(f[off : off+2])
		f[off+1] |= 3
		nw := binary.BigEndian.Uint16(f[off : off+2])
		sum := uint32(^binary.BigEndian.Uint16(f[off+10:off+12])) + uint32(^old) + uint32(nw)
		for sum>>16 != 0 {
			sum = sum&0xffff + sum>>16
		}
		binary.BigEndian.PutUint16(f[off+10:off+12], ^uint16(sum))
	case 6:
		f[off+1] |= 3 << 4
	}
}
