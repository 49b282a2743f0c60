package egress

import (
	"encoding/binary"

	"github.com/pseudocong/pseudocong/netsim"
	"github.com/pseudocong/pseudocong/packet"
)

// The ECN field of a frame's IP header, read for the qdisc and set to CE
// when a marking qdisc (RED with ecn) marks the packet. Only the header
// is touched, at most one VLAN tag deep; anything else is Not-ECT, which a
// marking qdisc drops instead of marking, as Linux does.

// ipHeader returns the offset of the IP header and its version (4, 6, or
// 0 if the frame carries neither).
func ipHeader(f []byte) (int, int) {
	if len(f) < packet.EthernetLen {
		return 0, 0
	}
	off, et := packet.EthernetLen, packet.EtherType(binary.BigEndian.Uint16(f[12:14]))
	if et == packet.EtherTypeVLAN {
		if len(f) < packet.EthernetLen+packet.Dot1QLen {
			return 0, 0
		}
		off, et = packet.EthernetLen+packet.Dot1QLen, packet.EtherType(binary.BigEndian.Uint16(f[16:18]))
	}
	switch {
	case et == packet.EtherTypeIPv4 && len(f) >= off+packet.IPv4MinLen && f[off]>>4 == 4:
		return off, 4
	case et == packet.EtherTypeIPv6 && len(f) >= off+40 && f[off]>>4 == 6:
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
// incrementally (RFC 1624, packet.UpdateChecksum16).
func setCE(f []byte) {
	off, v := ipHeader(f)
	switch v {
	case 4:
		old := binary.BigEndian.Uint16(f[off : off+2])
		f[off+1] |= 3
		nw := binary.BigEndian.Uint16(f[off : off+2])
		binary.BigEndian.PutUint16(f[off+10:off+12], packet.UpdateChecksum16(binary.BigEndian.Uint16(f[off+10:off+12]), old, nw))
	case 6:
		f[off+1] |= 3 << 4
	}
}
