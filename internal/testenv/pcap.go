package testenv

import (
	"net"
	"os"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// Segment is one TCP segment of a capture that WritePcap makes up.
type Segment struct {
	Src, Dst         net.IP
	SrcPort, DstPort uint16
	Seq              uint32
	Payload          []byte
}

// WritePcap writes segs as Ethernet/IPv4/TCP frames (ACK and PSH set,
// checksums right), one millisecond apart, into a pcap file at path: a
// capture built to order, for checking what tshark makes of bytes or of a
// pattern of segments without a live peer.
func WritePcap(t testing.TB, path string, segs []Segment) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := pcapgo.NewWriter(f)
	if err := w.WriteFileHeader(65536, layers.LinkTypeEthernet); err != nil {
		t.Fatal(err)
	}
	ts := time.Unix(1_700_000_000, 0)
	for i, s := range segs {
		b := EthernetTCP(t, s)
		ci := gopacket.CaptureInfo{Timestamp: ts.Add(time.Duration(i) * time.Millisecond), CaptureLength: len(b), Length: len(b)}
		if err := w.WritePacket(ci, b); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// EthernetTCP serialises s as one Ethernet/IPv4/TCP frame.
func EthernetTCP(t testing.TB, s Segment) []byte {
	t.Helper()
	eth := &layers.Ethernet{SrcMAC: net.HardwareAddr{0, 0, 0, 0, 0, 1}, DstMAC: net.HardwareAddr{0, 0, 0, 0, 0, 2}, EthernetType: layers.EthernetTypeIPv4}
	ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolTCP, SrcIP: s.Src, DstIP: s.Dst}
	tcp := &layers.TCP{SrcPort: layers.TCPPort(s.SrcPort), DstPort: layers.TCPPort(s.DstPort), Seq: s.Seq, Ack: 1, PSH: true, ACK: true, Window: 65535}
	if err := tcp.SetNetworkLayerForChecksum(ip); err != nil {
		t.Fatal(err)
	}
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true},
		eth, ip, tcp, gopacket.Payload(s.Payload)); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
