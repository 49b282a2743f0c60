package loadgen

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/pseudocong/pseudocong/openflow"
	"github.com/pseudocong/pseudocong/packet"
)

// The PACKET_INs used to be written byte by byte. The old writers are kept
// here (renamed) as the reference: the openflow codec and the packet
// builder must produce the same messages, except that the TCP SYN now
// carries a correct TCP checksum where the old one left 0.

func rawAppendPacketIn(b []byte, xid, bufferID uint32, inPort uint16) []byte {
	b = append(b, openflow.Version, byte(openflow.TypePacketIn), 0, packetInLen, 0, 0, 0, 0)
	binary.BigEndian.PutUint32(b[len(b)-4:], xid)
	b = binary.BigEndian.AppendUint32(b, bufferID)
	b = binary.BigEndian.AppendUint16(b, frameLen)
	b = binary.BigEndian.AppendUint16(b, inPort)
	return append(b, openflow.PacketInReasonNoMatch, 0)
}

func rawHostIP(i int) uint32 { return 10<<24 | uint32(i)&0xffffff }

func rawGratuitousARP(b []byte, sw, i, ports int, xid uint32) []byte {
	b = rawAppendPacketIn(b, xid, openflow.NoBuffer, portOf(i, ports))
	mac := hostMAC(sw, i)
	start := len(b)
	b = append(b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff)
	b = append(b, mac[:]...)
	b = append(b, 0x08, 0x06)
	b = append(b, 0, 1, 0x08, 0, 6, 4, 0, 1)
	b = append(b, mac[:]...)
	b = binary.BigEndian.AppendUint32(b, rawHostIP(i))
	b = append(b, 0, 0, 0, 0, 0, 0)
	b = binary.BigEndian.AppendUint32(b, rawHostIP(i))
	for len(b)-start < frameLen {
		b = append(b, 0)
	}
	return b
}

func rawFlowPacketIn(b []byte, sw, src, dst, ports int, xid, bufferID uint32, srcPort uint16) []byte {
	b = rawAppendPacketIn(b, xid, bufferID, portOf(src, ports))
	srcMAC, dstMAC := hostMAC(sw, src), hostMAC(sw, dst)
	start := len(b)
	b = append(b, dstMAC[:]...)
	b = append(b, srcMAC[:]...)
	b = append(b, 0x08, 0x00)
	ip := len(b)
	b = append(b, 0x45, 0, 0, 40, 0, 0, 0x40, 0, 64, 6, 0, 0)
	b = binary.BigEndian.AppendUint32(b, rawHostIP(src))
	b = binary.BigEndian.AppendUint32(b, rawHostIP(dst))
	binary.BigEndian.PutUint16(b[ip+10:], rawIPChecksum(b[ip:ip+20]))
	b = binary.BigEndian.AppendUint16(b, srcPort)
	b = binary.BigEndian.AppendUint16(b, 80)
	b = append(b, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x02, 0xff, 0xff, 0, 0, 0, 0)
	for len(b)-start < frameLen {
		b = append(b, 0)
	}
	return b
}

func rawIPChecksum(h []byte) uint16 {
	var sum uint32
	for i := 0; i+1 < len(h); i += 2 {
		sum += uint32(binary.BigEndian.Uint16(h[i:]))
	}
	for sum > 0xffff {
		sum = sum&0xffff + sum>>16
	}
	return ^uint16(sum)
}

func TestGratuitousARPMatchesRawEncoding(t *testing.T) {
	for _, c := range []struct{ sw, i, ports int }{{0, 0, 1}, {1, 5, 4}, {300, 70000, 16}, {65535, 1<<24 - 1, 7}} {
		want := rawGratuitousARP(nil, c.sw, c.i, c.ports, uint32(c.i+1))
		got := appendGratuitousARP(nil, c.sw, c.i, c.ports, uint32(c.i+1))
		if !bytes.Equal(got, want) {
			t.Fatalf("%+v:\nraw   % x\ncodec % x", c, want, got)
		}
	}
}

// tcpChecksumAt is the offset of the TCP checksum inside a flow PACKET_IN.
const tcpChecksumAt = 18 + packet.EthernetLen + packet.IPv4MinLen + 16

func TestFlowTemplatesMatchRawEncoding(t *testing.T) {
	const sw, macs, ports, n = 3, 100, 4, 1000
	got := flowTemplates(sw, macs, ports, n)
	if len(got) != n*packetInLen {
		t.Fatalf("%d bytes, want %d", len(got), n*packetInLen)
	}
	var want []byte
	for k := range n {
		src := k % macs
		dst := (src + 1 + ports*(k/macs)) % macs
		for portOf(dst, ports) == portOf(src, ports) {
			dst = (dst + 1) % macs
		}
		want = rawFlowPacketIn(want, sw, src, dst, ports, uint32(k+1), uint32(k%nBuffers), uint16(1024+k%60000))
	}
	var pi openflow.PacketIn
	var p packet.Packet
	for k := range n {
		g, w := got[k*packetInLen:(k+1)*packetInLen], want[k*packetInLen:(k+1)*packetInLen]
		// The old writer left the TCP checksum 0; otherwise byte-identical.
		w = append([]byte(nil), w...)
		copy(w[tcpChecksumAt:tcpChecksumAt+2], g[tcpChecksumAt:tcpChecksumAt+2])
		if !bytes.Equal(g, w) {
			t.Fatalf("template %d:\nraw   % x\ncodec % x", k, w, g)
		}
		if err := pi.DecodeFromBytes(g); err != nil {
			t.Fatalf("template %d: %v", k, err)
		}
		if err := p.DecodeFromBytes(pi.Data); err != nil || !p.Layers.Has(packet.LayerTCP) || p.TCP.Flags != packet.TCPFlagSYN {
			t.Fatalf("template %d: frame %v, layers %b", k, err, p.Layers)
		}
		if err := p.VerifyChecksums(); err != nil {
			t.Fatalf("template %d: %v", k, err)
		}
	}
}
