package pcapstream

import (
	"bytes"
	"net"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// goldenPcap is the real Open vSwitch capture kept by the openflow package.
const goldenPcap = "../../openflow/testdata/of10-ovs-and-ovs-testcontroller.pcap"

func TestReadFileGolden(t *testing.T) {
	streams, err := ReadFile(goldenPcap)
	if err != nil {
		t.Fatal(err)
	}
	if len(streams) < 2 {
		t.Fatalf("got %d streams, want at least the two directions of the OpenFlow session", len(streams))
	}
	for _, s := range streams {
		msgs, rest, err := SplitOpenFlow(s.Data)
		if err != nil {
			t.Errorf("%v: %v", &s, err)
		}
		if len(rest) != 0 {
			t.Errorf("%v: %d trailing bytes", &s, len(rest))
		}
		if len(msgs) == 0 || msgs[0][1] != 0 { // every OpenFlow stream starts with HELLO
			t.Errorf("%v: first message is not a HELLO", &s)
		}
	}
}

type seg struct {
	srcPort, dstPort uint16
	seq              uint32
	syn              bool
	payload          string
}

// capture builds a classic pcap of the given TCP segments between two
// loopback addresses.
func capture(t *testing.T, segs []seg) []byte {
	t.Helper()
	var out bytes.Buffer
	w := pcapgo.NewWriter(&out)
	if err := w.WriteFileHeader(65536, layers.LinkTypeEthernet); err != nil {
		t.Fatal(err)
	}
	for i, s := range segs {
		eth := &layers.Ethernet{SrcMAC: net.HardwareAddr{0, 0, 0, 0, 0, 1}, DstMAC: net.HardwareAddr{0, 0, 0, 0, 0, 2}, EthernetType: layers.EthernetTypeIPv4}
		ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolTCP, SrcIP: net.IPv4(127, 0, 0, 1), DstIP: net.IPv4(127, 0, 0, 2)}
		tcp := &layers.TCP{SrcPort: layers.TCPPort(s.srcPort), DstPort: layers.TCPPort(s.dstPort), Seq: s.seq, SYN: s.syn, ACK: !s.syn, Window: 1000}
		if err := tcp.SetNetworkLayerForChecksum(ip); err != nil {
			t.Fatal(err)
		}
		buf := gopacket.NewSerializeBuffer()
		if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true},
			eth, ip, tcp, gopacket.Payload(s.payload)); err != nil {
			t.Fatal(err)
		}
		ci := gopacket.CaptureInfo{Timestamp: time.Unix(1, int64(i)), CaptureLength: len(buf.Bytes()), Length: len(buf.Bytes())}
		if err := w.WritePacket(ci, buf.Bytes()); err != nil {
			t.Fatal(err)
		}
	}
	return out.Bytes()
}

func TestReadReassembles(t *testing.T) {
	var isnA, isnB uint32 = 0xfffffff8, 500 // A's sequence numbers wrap around inside "efgh"
	pcap := capture(t, []seg{
		{srcPort: 1000, dstPort: 6653, seq: isnA, syn: true},
		{srcPort: 6653, dstPort: 1000, seq: isnB, syn: true},
		{srcPort: 1000, dstPort: 6653, seq: isnA + 1 + 4, payload: "efgh"}, // out of order
		{srcPort: 1000, dstPort: 6653, seq: isnA + 1, payload: "abcd"},
		{srcPort: 6653, dstPort: 1000, seq: isnB + 1, payload: "reply"},
		{srcPort: 1000, dstPort: 6653, seq: isnA + 1 + 2, payload: "cdef"}, // overlap
		{srcPort: 1000, dstPort: 6653, seq: isnA + 1 + 8, payload: "ij"},   // across the wrap
		{srcPort: 1000, dstPort: 6653, seq: isnA + 1 + 8, payload: "ij"},   // retransmission
		{srcPort: 2000, dstPort: 6653, seq: 77, syn: true},                 // second connection
		{srcPort: 2000, dstPort: 6653, seq: 78, payload: "second"},
		{srcPort: 1000, dstPort: 6653, seq: 9000, syn: true}, // same 4-tuple, new connection
		{srcPort: 1000, dstPort: 6653, seq: 9001, payload: "again"},
	})
	streams, err := Read(bytes.NewReader(pcap))
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		src, dst uint16
		data     string
	}{
		{1000, 6653, "abcdefghij"},
		{6653, 1000, "reply"},
		{2000, 6653, "second"},
		{1000, 6653, "again"},
	}
	if len(streams) != len(want) {
		t.Fatalf("got %d streams %v, want %d", len(streams), streams, len(want))
	}
	for i, w := range want {
		s := streams[i]
		if s.Src.Port() != w.src || s.Dst.Port() != w.dst || string(s.Data) != w.data {
			t.Errorf("stream %d: %v %q, want %d->%d %q", i, &s, s.Data, w.src, w.dst, w.data)
		}
	}
}

func TestReadReportsGap(t *testing.T) {
	pcap := capture(t, []seg{
		{srcPort: 1000, dstPort: 6653, seq: 10, syn: true},
		{srcPort: 1000, dstPort: 6653, seq: 11, payload: "abc"},
		{srcPort: 1000, dstPort: 6653, seq: 20, payload: "xyz"}, // bytes 3..8 lost
	})
	if _, err := Read(bytes.NewReader(pcap)); err == nil {
		t.Fatal("gap not reported")
	}
}

func TestReadRejectsGarbage(t *testing.T) {
	if _, err := Read(bytes.NewReader([]byte("not a capture file"))); err == nil {
		t.Fatal("garbage accepted")
	}
}

func TestSplitOpenFlow(t *testing.T) {
	hello := []byte{1, 0, 0, 8, 0, 0, 0, 1}
	echo := []byte{1, 2, 0, 10, 0, 0, 0, 2, 0xaa, 0xbb}
	tests := []struct {
		name     string
		in       []byte
		wantMsgs int
		wantRest int
		wantErr  bool
	}{
		{"empty", nil, 0, 0, false},
		{"two whole", append(append([]byte{}, hello...), echo...), 2, 0, false},
		{"truncated tail", append(append([]byte{}, hello...), echo[:9]...), 1, 9, false},
		{"short header tail", append(append([]byte{}, hello...), 1, 0, 0), 1, 3, false},
		{"bad length", append(append([]byte{}, hello...), 1, 0, 0, 4, 0, 0, 0, 0), 1, 8, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			msgs, rest, err := SplitOpenFlow(tc.in)
			if len(msgs) != tc.wantMsgs || len(rest) != tc.wantRest || (err != nil) != tc.wantErr {
				t.Fatalf("got %d msgs, %d rest, err %v; want %d, %d, err %v", len(msgs), len(rest), err, tc.wantMsgs, tc.wantRest, tc.wantErr)
			}
			if tc.wantMsgs > 0 && !bytes.Equal(msgs[0], hello) {
				t.Errorf("first message %x, want %x", msgs[0], hello)
			}
		})
	}
}
