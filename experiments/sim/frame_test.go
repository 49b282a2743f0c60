package sim

import (
	"net/netip"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/pseudocong/pseudocong/probes"
)

// Frames are real Ethernet/IPv4/TCP: gopacket decodes them with valid
// checksums, and DecodeFrame gives back the probe packet.
func TestFrameRoundTrip(t *testing.T) {
	tuple := probes.FiveTuple{SrcIP: HostA, DstIP: HostB, SrcPort: 40001, DstPort: 80, Proto: probes.ProtoTCP}
	for _, p := range []probes.ProbePacket{
		{Type: probes.PacketSYN, Tuple: tuple, Seq: 1000},
		{Type: probes.PacketSYNACK, Tuple: tuple.Reverse(), Seq: 5, Ack: 1001},
		{Type: probes.PacketData, Tuple: tuple, Seq: 77, PayloadLen: 64},
		{Type: probes.PacketACK, Tuple: tuple.Reverse(), Ack: 141},
	} {
		t.Run(p.Type.String(), func(t *testing.T) {
			f, err := EncodeFrame(p)
			if err != nil {
				t.Fatal(err)
			}
			pkt := gopacket.NewPacket(f, layers.LayerTypeEthernet, gopacket.Default)
			tcp, ok := pkt.Layer(layers.LayerTypeTCP).(*layers.TCP)
			ip, _ := pkt.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
			if !ok || ip == nil {
				t.Fatalf("gopacket: %v", pkt.ErrorLayer())
			}
			if err := tcp.SetNetworkLayerForChecksum(ip); err != nil {
				t.Fatal(err)
			}
			if tcp.SYN != (p.Type == probes.PacketSYN || p.Type == probes.PacketSYNACK) || int(tcp.SrcPort) != int(p.Tuple.SrcPort) {
				t.Errorf("gopacket sees %+v", tcp)
			}
			back, err := DecodeFrame(f)
			if err != nil {
				t.Fatal(err)
			}
			if back.Type != p.Type || back.Tuple != p.Tuple || back.Seq != p.Seq || back.Ack != p.Ack || back.PayloadLen != p.PayloadLen {
				t.Errorf("round trip %+v -> %+v", p, back)
			}
		})
	}
}

func TestFrameErrors(t *testing.T) {
	good, _ := EncodeFrame(probes.ProbePacket{Type: probes.PacketSYN,
		Tuple: probes.FiveTuple{SrcIP: HostA, DstIP: HostB, SrcPort: 1, DstPort: 2, Proto: 6}})
	corrupt := append([]byte(nil), good...)
	corrupt[len(corrupt)-1] ^= 0xff // TCP header byte: checksum fails
	for name, f := range map[string][]byte{"short": good[:30], "bad checksum": corrupt} {
		if _, err := DecodeFrame(f); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
	v6 := probes.FiveTuple{SrcIP: netip.MustParseAddr("::1"), DstIP: netip.MustParseAddr("::2"), Proto: 6}
	if _, err := EncodeFrame(probes.ProbePacket{Type: probes.PacketSYN, Tuple: v6}); err == nil {
		t.Error("IPv6 tuple encoded")
	}
}
