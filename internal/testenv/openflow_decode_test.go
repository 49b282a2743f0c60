package testenv

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/pseudocong/pseudocong/openflow"
)

// segment is one TCP segment of a synthetic capture.
type segment struct {
	src, dst net.IP
	sport    uint16
	dport    uint16
	seq      uint32
	payload  []byte
}

// ethFrame serialises s as Ethernet/IPv4/TCP, as a capture on lo sees it.
func ethFrame(t *testing.T, s segment) []byte {
	t.Helper()
	eth := &layers.Ethernet{SrcMAC: make(net.HardwareAddr, 6), DstMAC: make(net.HardwareAddr, 6), EthernetType: layers.EthernetTypeIPv4}
	ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolTCP, SrcIP: s.src, DstIP: s.dst}
	tcp := &layers.TCP{SrcPort: layers.TCPPort(s.sport), DstPort: layers.TCPPort(s.dport), Seq: s.seq, Ack: 1, ACK: true, PSH: true, Window: 65535}
	if err := tcp.SetNetworkLayerForChecksum(ip); err != nil {
		t.Fatal(err)
	}
	buf := gopacket.NewSerializeBuffer()
	opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
	if err := gopacket.SerializeLayers(buf, opts, eth, ip, tcp, gopacket.Payload(s.payload)); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func marshal(t *testing.T, m openflow.Message) []byte {
	t.Helper()
	b, err := openflow.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestUndecodedOpenFlowBytesCountsOuterLayer replays, as a written pcap,
// the control-channel pattern of ovs-testcontroller forwarding a data
// segment: the switch sends it up in a PACKET_IN, the controller sends it
// back in a PACKET_OUT that straddles two frames. Wireshark flags the
// second frame's inner TCP layer as a retransmission (it saw that data
// segment in the PACKET_IN); the frame still completes the PACKET_OUT and
// must count. A real retransmission of the outer segment must not.
func TestUndecodedOpenFlowBytesCountsOuterLayer(t *testing.T) {
	RequireCommand(t, "tshark")
	data := ethFrame(t, segment{
		src: net.IPv4(10, 0, 0, 1), dst: net.IPv4(10, 0, 0, 2),
		sport: 45266, dport: 5201, seq: 1000, payload: make([]byte, 100),
	})
	pin := marshal(t, &openflow.PacketIn{BufferID: openflow.NoBuffer, TotalLen: uint16(len(data)), InPort: 1, Data: data})
	pout := marshal(t, &openflow.PacketOut{BufferID: openflow.NoBuffer, InPort: 1,
		Actions: []openflow.Action{openflow.ActionOutput{Port: 2}}, Data: data})
	const cut = 40
	lo := net.IPv4(127, 0, 0, 1)
	const sw, ctl = 40000, 6653
	up := func(seq uint32, p []byte) segment {
		return segment{src: lo, dst: lo, sport: sw, dport: ctl, seq: seq, payload: p}
	}
	down := func(seq uint32, p []byte) segment {
		return segment{src: lo, dst: lo, sport: ctl, dport: sw, seq: seq, payload: p}
	}
	segs := []segment{
		up(1, pin),
		down(1, pout[:cut]),
		down(1+cut, pout[cut:]),
		up(1, pin), // the outer segment retransmitted: counted once
	}

	pcap := filepath.Join(t.TempDir(), "split.pcap")
	f, err := os.Create(pcap)
	if err != nil {
		t.Fatal(err)
	}
	w := pcapgo.NewWriter(f)
	if err := w.WriteFileHeader(65536, layers.LinkTypeEthernet); err != nil {
		t.Fatal(err)
	}
	at := time.Unix(1_700_000_000, 0)
	for i, s := range segs {
		b := ethFrame(t, s)
		ci := gopacket.CaptureInfo{Timestamp: at.Add(time.Duration(i) * time.Millisecond), CaptureLength: len(b), Length: len(b)}
		if err := w.WritePacket(ci, b); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}

	// The premise: Wireshark does flag frame 3, by its inner layer only.
	out, err := runStdout("tshark", "-r", pcap, "-Y", "tcp.analysis.retransmission", "-T", "fields", "-e", "frame.number")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Fields(out); len(got) != 2 || got[0] != "3" || got[1] != "4" {
		t.Fatalf("frames flagged as retransmissions = %q, want 3 (inner layer) and 4 (outer)", got)
	}
	if n := UndecodedOpenFlowBytes(t, pcap, ctl); n != 0 {
		t.Errorf("UndecodedOpenFlowBytes = %d, want 0", n)
	}
}
