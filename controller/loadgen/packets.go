package loadgen

import (
	"encoding/binary"
	"fmt"

	"github.com/pseudocong/pseudocong/openflow"
	"github.com/pseudocong/pseudocong/packet"
)

const (
	frameLen    = packet.MinFrameLen // a minimum Ethernet frame (no FCS)
	packetInLen = 18 + frameLen      // ofp_packet_in (18 bytes) + frame
	nBuffers    = 256
)

// hostMAC is host i of switch sw: locally administered, unique per switch.
func hostMAC(sw, i int) packet.MAC {
	return packet.MAC{0x02, byte(sw >> 8), byte(sw), byte(i >> 16), byte(i >> 8), byte(i)}
}

// hostIP is 10.x.y.z for host i (unique for i < 2^24).
func hostIP(i int) [4]byte {
	var a [4]byte
	binary.BigEndian.PutUint32(a[:], 10<<24|uint32(i)&0xffffff)
	return a
}

// portOf is the switch port host i sits behind.
func portOf(i, ports int) uint16 { return uint16(i%ports + 1) }

// appendPacketIn appends a PACKET_IN (reason no match) carrying the frame
// p describes.
func appendPacketIn(b []byte, xid, bufferID uint32, inPort uint16, p *packet.Packet) []byte {
	var scratch [frameLen]byte
	frame, err := p.AppendBinary(scratch[:0])
	if err == nil && len(frame) != frameLen {
		err = fmt.Errorf("frame of %d bytes, want %d", len(frame), frameLen)
	}
	var m openflow.PacketIn
	if err == nil {
		m = openflow.PacketIn{Header: openflow.Header{Xid: xid}, BufferID: bufferID, TotalLen: uint16(len(frame)),
			InPort: inPort, Reason: openflow.PacketInReasonNoMatch, Data: frame}
		b, err = m.AppendBinary(b)
	}
	if err != nil {
		// The frames here are fixed minimum-size ARP and TCP SYN frames:
		// failing to encode one is a bug, not a runtime condition.
		panic(fmt.Sprintf("loadgen: encoding PACKET_IN xid %d: %v", xid, err))
	}
	return b
}

// appendGratuitousARP appends a PACKET_IN carrying host i's gratuitous ARP
// (broadcast, unbuffered), from which a learning controller learns where i is.
func appendGratuitousARP(b []byte, sw, i, ports int, xid uint32) []byte {
	mac := hostMAC(sw, i)
	p := packet.Packet{Layers: packet.LayerEthernet | packet.LayerARP}
	p.Ethernet = packet.Ethernet{Dst: packet.Broadcast, Src: mac}
	// Target IP = sender IP: gratuitous.
	p.ARP = packet.ARP{Op: packet.ARPRequest, SenderMAC: mac, SenderIP: hostIP(i), TargetIP: hostIP(i)}
	return appendPacketIn(b, xid, openflow.NoBuffer, portOf(i, ports), &p)
}

// appendFlowPacketIn appends a buffered PACKET_IN of a TCP SYN from host src
// to host dst: a new flow for a controller that knows both hosts.
func appendFlowPacketIn(b []byte, sw, src, dst, ports int, xid, bufferID uint32, srcPort uint16) []byte {
	p := packet.Packet{Layers: packet.LayerEthernet | packet.LayerIPv4 | packet.LayerTCP}
	p.Ethernet = packet.Ethernet{Dst: hostMAC(sw, dst), Src: hostMAC(sw, src)}
	p.IPv4 = packet.IPv4{Flags: packet.IPv4DontFragment, TTL: 64, Src: hostIP(src), Dst: hostIP(dst)}
	p.TCP = packet.TCP{SrcPort: srcPort, DstPort: 80, Seq: 1, Flags: packet.TCPFlagSYN, Window: 0xffff}
	return appendPacketIn(b, xid, bufferID, portOf(src, ports), &p)
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
		if data+14 <= len(msg) && packet.EtherType(binary.BigEndian.Uint16(msg[data+12:data+14])) == packet.EtherTypeLLDP {
			return false
		}
		return true
	}
	return false
}
