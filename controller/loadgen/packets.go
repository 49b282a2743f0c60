package loadgen

import (
	"encoding/binary"

	"github.com/pseudocong/pseudocong/openflow"
)

const (
	frameLen    = 60 // a minimum Ethernet frame (no FCS)
	packetInLen = 18 + frameLen
	nBuffers    = 256
)

// hostMAC is host i of switch sw: locally administered, unique per switch.
func hostMAC(sw, i int) [6]byte {
	return [6]byte{0x02, byte(sw >> 8), byte(sw), byte(i >> 16), byte(i >> 8), byte(i)}
}

// hostIP is 10.x.y.z for host i (unique for i < 2^24).
func hostIP(i int) uint32 { return 10<<24 | uint32(i)&0xffffff }

// portOf is the switch port host i sits behind.
func portOf(i, ports int) uint16 { return uint16(i%ports + 1) }

// appendPacketIn appends a PACKET_IN header for a frame of frameLen bytes.
func appendPacketIn(b []byte, xid, bufferID uint32, inPort uint16) []byte {
	b = append(b, openflow.Version, byte(openflow.TypePacketIn), 0, packetInLen, 0, 0, 0, 0)
	binary.BigEndian.PutUint32(b[len(b)-4:], xid)
	b = binary.BigEndian.AppendUint32(b, bufferID)
	b = binary.BigEndian.AppendUint16(b, frameLen)
	b = binary.BigEndian.AppendUint16(b, inPort)
	return append(b, openflow.PacketInReasonNoMatch, 0)
}

// appendGratuitousARP appends a PACKET_IN carrying host i's gratuitous ARP
// (broadcast, unbuffered), from which a learning controller learns where i is.
func appendGratuitousARP(b []byte, sw, i, ports int, xid uint32) []byte {
	b = appendPacketIn(b, xid, openflow.NoBuffer, portOf(i, ports))
	mac := hostMAC(sw, i)
	start := len(b)
	b = append(b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff)
	b = append(b, mac[:]...)
	b = append(b, 0x08, 0x06)                       // ARP
	b = append(b, 0, 1, 0x08, 0, 6, 4, 0, 1)        // Ethernet/IPv4, request
	b = append(b, mac[:]...)                        // sender MAC
	b = binary.BigEndian.AppendUint32(b, hostIP(i)) // sender IP
	b = append(b, 0, 0, 0, 0, 0, 0)                 // target MAC
	b = binary.BigEndian.AppendUint32(b, hostIP(i)) // target IP = sender: gratuitous
	for len(b)-start < frameLen {
		b = append(b, 0)
	}
	return b
}

// appendFlowPacketIn appends a buffered PACKET_IN of a TCP SYN from host src
// to host dst: a new flow for a controller that knows both hosts.
func appendFlowPacketIn(b []byte, sw, src, dst, ports int, xid, bufferID uint32, srcPort uint16) []byte {
	b = appendPacketIn(b, xid, bufferID, portOf(src, ports))
	srcMAC, dstMAC := hostMAC(sw, src), hostMAC(sw, dst)
	start := len(b)
	b = append(b, dstMAC[:]...)
	b = append(b, srcMAC[:]...)
	b = append(b, 0x08, 0x00)
	ip := len(b)
	b = append(b, 0x45, 0, 0, 40, 0, 0, 0x40, 0, 64, 6, 0, 0) // 20+20 bytes, DF, TTL 64, TCP
	b = binary.BigEndian.AppendUint32(b, hostIP(src))
	b = binary.BigEndian.AppendUint32(b, hostIP(dst))
	binary.BigEndian.PutUint16(b[ip+10:], ipChecksum(b[ip:ip+20]))
	b = binary.BigEndian.AppendUint16(b, srcPort)
	b = binary.BigEndian.AppendUint16(b, 80)
	b = append(b, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x02, 0xff, 0xff, 0, 0, 0, 0) // seq 1, SYN
	for len(b)-start < frameLen {
		b = append(b, 0)
	}
	return b
}

func ipChecksum(h []byte) uint16 {
	var sum uint32
	for i := 0; i+1 < len(h); i += 2 {
		sum += uint32(binary.BigEndian.Uint16(h[i:]))
	}
	for sum > 0xffff {
		sum = sum&0xffff + sum>>16
	}
	return ^uint16(sum)
}

// flowTemplates pre-encodes n PACKET_INs of distinct flows between hosts on
// different ports, so that sending is a plain write of prepared bytes.
func flowTemplates(sw, macs, ports, n int) []byte {
	b := make([]byte, 0, n*packetInLen)
	for k := range n {
		src := k % macs
		dst := (src + 1 + ports*(k/macs)) % macs
		for portOf(dst, ports) == portOf(src, ports) {
			dst = (dst + 1) % macs
		}
		b = appendFlowPacketIn(b, sw, src, dst, ports, uint32(k+1), uint32(k%nBuffers), uint16(1024+k%60000))
	}
	return b
}

// isResponse reports whether a controller message counts as a response as
// cbench counts them: a FLOW_MOD that adds (ADD or MODIFY_STRICT), or a
// PACKET_OUT that is not LLDP (topology discovery is not an answer).
func isResponse(msg []byte) bool {
	switch openflow.Type(msg[1]) {
	case openflow.TypeFlowMod:
		if len(msg) < 58 {
			return false
		}
		cmd := binary.BigEndian.Uint16(msg[56:58])
		return cmd == openflow.FlowModAdd || cmd == openflow.FlowModModifyStrict
	case openflow.TypePacketOut:
		if len(msg) < 16 {
			return false
		}
		data := 16 + int(binary.BigEndian.Uint16(msg[14:16]))
		if data+14 <= len(msg) && binary.BigEndian.Uint16(msg[data+12:data+14]) == 0x88cc {
			return false
		}
		return true
	}
	return false
}
