package live

import (
	"encoding/binary"
	"net"
	"net/netip"
	"testing"

	"github.com/gopacket/gopacket/layers"

	"github.com/pseudocong/pseudocong/probes"
)

var (
	macA = net.HardwareAddr{0x02, 0, 0, 0, 0, 1}
	macB = net.HardwareAddr{0x02, 0, 0, 0, 0, 2}
)

func tuple() probes.FiveTuple {
	return probes.FiveTuple{
		SrcIP: netip.MustParseAddr("10.0.1.1"), DstIP: netip.MustParseAddr("10.0.1.2"),
		SrcPort: 40000, DstPort: 80, Proto: probes.ProtoTCP,
	}
}

// onesSum is the Internet checksum's one's complement sum, written here
// independently of gopacket so the test can catch a wrong checksum.
func onesSum(sum uint32, b []byte) uint32 {
	for len(b) >= 2 {
		sum += uint32(binary.BigEndian.Uint16(b))
		b = b[2:]
	}
	if len(b) == 1 {
		sum += uint32(b[0]) << 8
	}
	return sum
}

func fold(sum uint32) uint16 {
	for sum>>16 != 0 {
		sum = sum&0xffff + sum>>16
	}
	return uint16(sum)
}

// checksumsValid verifies the IPv4 header and TCP checksums of an
// Ethernet frame: each must sum to 0xffff.
func checksumsValid(t *testing.T, frame []byte) {
	t.Helper()
	ip := frame[14:]
	ihl := int(ip[0]&0x0f) * 4
	total := int(binary.BigEndian.Uint16(ip[2:4]))
	if got := fold(onesSum(0, ip[:ihl])); got != 0xffff {
		t.Errorf("IPv4 header checksum invalid (sum %#04x)", got)
	}
	seg := ip[ihl:total]
	pseudo := onesSum(0, ip[12:20]) + uint32(ip[9]) + uint32(len(seg))
	if got := fold(onesSum(pseudo, seg)); got != 0xffff {
		t.Errorf("TCP checksum invalid (sum %#04x)", got)
	}
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		p    probes.ProbePacket
	}{
		{"syn", probes.ProbePacket{Type: probes.PacketSYN, Tuple: tuple(), Seq: 12345}},
		{"synack", probes.ProbePacket{Type: probes.PacketSYNACK, Tuple: tuple().Reverse(), Seq: 999, Ack: 12346}},
		{"data", probes.ProbePacket{Type: probes.PacketData, Tuple: tuple(), Seq: 0xfffffff0, PayloadLen: 64}},
		{"data odd length", probes.ProbePacket{Type: probes.PacketData, Tuple: tuple(), Seq: 7, PayloadLen: 3}},
		{"ack", probes.ProbePacket{Type: probes.PacketACK, Tuple: tuple().Reverse(), Seq: 1, Ack: 0x30}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			frame, err := EncodeFrame(tt.p, macA, macB)
			if err != nil {
				t.Fatal(err)
			}
			checksumsValid(t, frame)
			d := DecodeFrame(frame)
			if d.Kind != FrameProbe {
				t.Fatalf("kind %v", d.Kind)
			}
			got := d.Probe
			if got.Type != tt.p.Type || got.Tuple != tt.p.Tuple || got.Seq != tt.p.Seq || got.Ack != tt.p.Ack || got.PayloadLen != tt.p.PayloadLen {
				t.Errorf("decoded %+v, want %+v", got, tt.p)
			}
			if d.SrcMAC.String() != macA.String() || d.DstMAC.String() != macB.String() {
				t.Errorf("macs %v %v", d.SrcMAC, d.DstMAC)
			}
		})
	}
}

// A short frame padded to Ethernet's 60-byte minimum must not read the
// padding as payload (an ACK would become DATA).
func TestDecodeIgnoresEthernetPadding(t *testing.T) {
	frame, err := EncodeFrame(probes.ProbePacket{Type: probes.PacketACK, Tuple: tuple(), Ack: 5}, macA, macB)
	if err != nil {
		t.Fatal(err)
	}
	// 54 bytes of headers; gopacket pads to 60 itself, a NIC would too.
	padded := frame
	if len(padded) < 60 {
		padded = append(padded, make([]byte, 60-len(padded))...)
	}
	d := DecodeFrame(padded)
	if d.Kind != FrameProbe || d.Probe.Type != probes.PacketACK || d.Probe.PayloadLen != 0 {
		t.Fatalf("padded ACK decoded as %+v", d)
	}
}

func TestDecodeIgnoresRST(t *testing.T) {
	frame, err := EncodeFrame(probes.ProbePacket{Type: probes.PacketACK, Tuple: tuple()}, macA, macB)
	if err != nil {
		t.Fatal(err)
	}
	frame[14+20+13] |= 0x04 // RST flag
	if d := DecodeFrame(frame); d.Kind != FrameOther {
		t.Fatalf("RST decoded as %v", d.Kind)
	}
}

func TestARPRoundTrip(t *testing.T) {
	a, b := netip.MustParseAddr("10.0.1.1"), netip.MustParseAddr("10.0.1.2")
	req, err := EncodeARP(layers.ARPRequest, macA, a, nil, b)
	if err != nil {
		t.Fatal(err)
	}
	d := DecodeFrame(req)
	if d.Kind != FrameARPRequest || d.SenderIP != a || d.TargetIP != b || d.DstMAC.String() != "ff:ff:ff:ff:ff:ff" {
		t.Fatalf("request decoded as %+v", d)
	}
	rep, err := EncodeARP(layers.ARPReply, macB, b, macA, a)
	if err != nil {
		t.Fatal(err)
	}
	d = DecodeFrame(rep)
	if d.Kind != FrameARPReply || d.SenderIP != b || d.SenderMAC.String() != macB.String() || d.DstMAC.String() != macA.String() {
		t.Fatalf("reply decoded as %+v", d)
	}
}
