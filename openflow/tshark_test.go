package openflow_test

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/pseudocong/pseudocong/internal/testenv"
	of "github.com/pseudocong/pseudocong/openflow"
)

// writeOpenFlowPcap writes each message as one TCP segment 127.0.0.1:40000 ->
// 127.0.0.1:6653 (the IANA OpenFlow port tshark dissects by default).
func writeOpenFlowPcap(t *testing.T, path string, msgs [][]byte) {
	t.Helper()
	lo := net.IPv4(127, 0, 0, 1)
	seq := uint32(1000)
	segs := make([]testenv.Segment, len(msgs))
	for i, m := range msgs {
		segs[i] = testenv.Segment{Src: lo, Dst: lo, SrcPort: 40000, DstPort: of.DefaultTCPPort, Seq: seq, Payload: m}
		seq += uint32(len(m))
	}
	testenv.WritePcap(t, path, segs)
}

// tsharkKnownMalformed lists vectors that are valid OpenFlow 1.0 but trip a
// limitation of Wireshark's openflow_v1 dissector: it reads one action after
// the FLOW_MOD flags unconditionally, so a FLOW_MOD without actions (what
// `ovs-ofctl del-flows` sends) is reported as malformed.
var tsharkKnownMalformed = map[string]bool{"flow_mod_delete": true}

// TestTsharkDissectsOurEncodings hands every golden message, encoded by this
// package, to Wireshark's independent OpenFlow 1.0 dissector and requires
// that it names the right message type and reports no malformed packet or
// expert error. Skipped without tshark.
func TestTsharkDissectsOurEncodings(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs tshark")
	}
	tshark := testenv.RequireCommandPath(t, "tshark")
	cases := goldenMessages()
	sort.Slice(cases, func(i, j int) bool { return cases[i].name < cases[j].name })
	var msgs [][]byte
	for _, tc := range cases {
		tc.want.SetXid(tc.xid)
		b, err := of.Marshal(tc.want)
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, b)
	}
	path := filepath.Join(t.TempDir(), "ours.pcap")
	if p := os.Getenv("OF_TSHARK_KEEP"); p != "" {
		path = p
	}
	writeOpenFlowPcap(t, path, msgs)

	out, err := exec.Command(tshark, "-n", "-r", path, "-T", "fields", "-E", "separator=|",
		"-e", "frame.number", "-e", "openflow_1_0.type", "-e", "_ws.malformed", "-e", "_ws.expert.severity",
		"-e", "openflow.wildcards", "-e", "openflow.ofp_match.dest_addr", "-e", "openflow.ofp_match.dest_port",
		"-e", "openflow.priority", "-e", "openflow.idle_timeout", "-e", "openflow.buffer_id").CombinedOutput()
	if err != nil {
		t.Fatalf("tshark: %v\n%s", err, out)
	}
	var lines []string
	for _, l := range strings.Split(string(bytes.TrimSpace(out)), "\n") {
		if l != "" && !strings.HasPrefix(l, "Running as user") {
			lines = append(lines, l)
		}
	}
	if len(lines) != len(cases) {
		t.Fatalf("tshark printed %d lines for %d packets:\n%s", len(lines), len(cases), out)
	}
	for i, l := range lines {
		f := strings.Split(l, "|")
		if len(f) < 10 {
			t.Errorf("%s: unexpected tshark line %q", cases[i].name, l)
			continue
		}
		wantType := uint8(cases[i].want.MsgType())
		if f[1] != strconv.Itoa(int(wantType)) {
			t.Errorf("%s: tshark says type %q, want %d", cases[i].name, f[1], wantType)
		}
		if fm, ok := cases[i].want.(*of.FlowMod); ok {
			// Field by field, as Wireshark reads them.
			want := []string{strconv.Itoa(int(fm.Match.Wildcards)), of.FormatIPv4(fm.Match.NwDst),
				strconv.Itoa(int(fm.Match.TpDst)), strconv.Itoa(int(fm.Priority)), strconv.Itoa(int(fm.IdleTimeout)),
				fmt.Sprintf("0x%08x", fm.BufferID)}
			if got := f[4:10]; !slices.Equal(got, want) {
				t.Errorf("%s: tshark reads wildcards,nw_dst,tp_dst,priority,idle,buffer = %v, want %v", cases[i].name, got, want)
			}
		}
		if tsharkKnownMalformed[cases[i].name] {
			continue
		}
		if f[2] != "" {
			t.Errorf("%s: tshark: malformed packet", cases[i].name)
		}
		// Severity 8388608 is "error"; warnings (e.g. TCP analysis of our
		// synthetic stream) are tolerated.
		for _, sev := range strings.Split(f[3], ",") {
			if sev == "8388608" {
				t.Errorf("%s: tshark expert error (%q)", cases[i].name, l)
			}
		}
	}
}
