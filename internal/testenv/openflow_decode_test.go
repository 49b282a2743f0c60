package testenv

import (
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pseudocong/pseudocong/openflow"
)

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
	if testing.Short() {
		t.Skip("-short: runs tshark")
	}
	RequireCommand(t, "tshark")
	data := EthernetTCP(t, Segment{
		Src: net.IPv4(10, 0, 0, 1), Dst: net.IPv4(10, 0, 0, 2),
		SrcPort: 45266, DstPort: 5201, Seq: 1000, Payload: make([]byte, 100),
	})
	pin := marshal(t, &openflow.PacketIn{BufferID: openflow.NoBuffer, TotalLen: uint16(len(data)), InPort: 1, Data: data})
	pout := marshal(t, &openflow.PacketOut{BufferID: openflow.NoBuffer, InPort: 1,
		Actions: []openflow.Action{openflow.ActionOutput{Port: 2}}, Data: data})
	const cut = 40
	lo := net.IPv4(127, 0, 0, 1)
	const sw, ctl = 40000, openflow.DefaultTCPPort
	up := func(seq uint32, p []byte) Segment {
		return Segment{Src: lo, Dst: lo, SrcPort: sw, DstPort: ctl, Seq: seq, Payload: p}
	}
	down := func(seq uint32, p []byte) Segment {
		return Segment{Src: lo, Dst: lo, SrcPort: ctl, DstPort: sw, Seq: seq, Payload: p}
	}
	segs := []Segment{
		up(1, pin),
		down(1, pout[:cut]),
		down(1+cut, pout[cut:]),
		up(1, pin), // the outer segment retransmitted: counted once
	}

	pcap := filepath.Join(t.TempDir(), "split.pcap")
	WritePcap(t, pcap, segs)

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
