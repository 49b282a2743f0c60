package testenv

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// Wireshark expert severities as printed by `-e _ws.expert.severity`.
const (
	SeverityChat    = 0x00200000
	SeverityNote    = 0x00400000
	SeverityWarning = 0x00600000
	SeverityError   = 0x00800000
)

// OpenFlowRecord is one OpenFlow 1.0 message as Wireshark dissected it.
// Malformed, MaxSeverity and Expert describe the whole frame, which may
// carry several messages.
type OpenFlowRecord struct {
	Frame   int
	Version int
	// Type is the OFPT_* number (0 HELLO, 10 PACKET_IN, 14 FLOW_MOD ...).
	Type   int
	XID    uint32
	Length int
	// Malformed is set when Wireshark flagged the frame as malformed.
	Malformed bool
	// MaxSeverity is the highest expert severity in the frame (0 if none).
	// Undissected bodies (ERROR, ECHO data, VENDOR, STATS) are warnings.
	MaxSeverity int
	// Expert holds the frame's expert messages.
	Expert []string
}

// ofptFlowModNoActionsLen is the size of an OF1.0 FLOW_MOD without
// actions (8 header + 40 match + 24 body).
const ofptFlowModNoActionsLen = 72

// Broken reports whether Wireshark flagged the message's frame as
// malformed or with an error-level expert item, ignoring Wireshark 4.0's
// known false positive: it calls every valid 72-byte FLOW_MOD (no actions,
// e.g. a DELETE) malformed.
func (r OpenFlowRecord) Broken() bool {
	if r.Type == 14 && r.Length == ofptFlowModNoActionsLen {
		return false
	}
	return r.Malformed || r.MaxSeverity >= SeverityError
}

// The order of these fields is the column order parseOpenFlowFields reads.
var openFlowFields = []string{
	"frame.number", "openflow.version", "openflow_1_0.type", "openflow.xid",
	"openflow.length", "_ws.malformed", "_ws.expert.severity", "_ws.expert.message",
}

// aggregator separates several occurrences of a field in one frame; it
// must not appear in expert messages, which may contain commas.
const aggregator = "|"

// DecodeOpenFlow dissects a capture file with tshark, decoding TCP traffic
// on ports as OpenFlow (6653 and 6633 are decoded by default), and returns
// every OpenFlow 1.0 message in frame order. It fails the test if tshark
// cannot read the file.
//
// Caveat: a message whose length field exceeds the bytes that follow makes
// TCP reassembly wait forever, so it and the rest of that stream do not
// appear at all; check UndecodedOpenFlowBytes to catch that.
func DecodeOpenFlow(t testing.TB, pcap string, ports ...int) []OpenFlowRecord {
	t.Helper()
	RequireCommand(t, "tshark")
	args := decodeArgs(pcap, ports)
	args = append(args, "-Y", "openflow_v1", "-T", "fields",
		"-E", "header=n", "-E", "separator=/t", "-E", "occurrence=a", "-E", "aggregator="+aggregator)
	for _, f := range openFlowFields {
		args = append(args, "-e", f)
	}
	out, err := runStdout("tshark", args...)
	if err != nil {
		t.Fatalf("decode openflow: %v", err)
	}
	recs, err := parseOpenFlowFields(out)
	if err != nil {
		t.Fatalf("decode openflow %s: %v", pcap, err)
	}
	return recs
}

// UndecodedOpenFlowBytes returns the TCP payload bytes on ports minus the
// bytes Wireshark decoded as OpenFlow 1.0 messages: 0 for a clean capture
// of OpenFlow 1.0 connections that were captured from their first byte.
// Retransmitted segments are left out; each frame with undecoded bytes is
// logged.
func UndecodedOpenFlowBytes(t testing.TB, pcap string, ports ...int) int {
	t.Helper()
	RequireCommand(t, "tshark")
	// A TCP retransmission carries bytes already counted (and decoded)
	// once: a loaded machine retransmits even on loopback (a tail loss
	// probe when an ACK is late), and Wireshark rightly does not decode
	// the copy as OpenFlow. Count each byte of the stream once.
	//
	// Only the outer TCP layer (#1) decides. A PACKET_OUT that returns a
	// data segment a PACKET_IN brought up carries that segment a second
	// time, so Wireshark flags the inner TCP layer as a retransmission;
	// leaving such a frame out drops the end of a message an earlier
	// frame began, which then counts as undecoded (a soak failure, round
	// 11 of docs/ci.md).
	args := append(decodeArgs(pcap, ports), "-Y", "!tcp.analysis.retransmission#1 && !tcp.analysis.spurious_retransmission#1",
		"-T", "fields",
		"-E", "aggregator="+aggregator, "-e", "tcp.len", "-e", "openflow.version", "-e", "openflow.length",
		"-e", "frame.number", "-e", "tcp.srcport", "-e", "tcp.seq")
	out, err := runStdout("tshark", args...)
	if err != nil {
		t.Fatalf("decode openflow: %v", err)
	}
	undecoded := 0
	for _, line := range strings.Split(out, "\n") {
		cols := strings.Split(line, "\t")
		if len(cols) < 3 || cols[0] == "" {
			continue
		}
		// A PACKET_IN or PACKET_OUT carrying a TCP segment adds the
		// inner tcp.len after the outer one; only the outer counts.
		payload, err := strconv.Atoi(splitAgg(cols[0])[0])
		if err != nil {
			t.Fatalf("tcp.len %q: %v", cols[0], err)
		}
		left := payload
		versions, lengths := splitAgg(cols[1]), splitAgg(cols[2])
		for i, l := range lengths {
			n, err := strconv.Atoi(l)
			if err != nil {
				t.Fatalf("openflow.length %q: %v", l, err)
			}
			if i < len(versions) && versions[i] == "0x01" {
				left -= n
			}
		}
		if left != 0 && len(cols) >= 6 {
			t.Logf("frame %s (from port %s, seq %s): %d of %d payload bytes not decoded as OpenFlow 1.0 (versions %v, lengths %v)",
				cols[3], cols[4], cols[5], left, payload, versions, lengths)
		}
		undecoded += left
	}
	return undecoded
}

func decodeArgs(pcap string, ports []int) []string {
	args := []string{"-r", pcap}
	for _, p := range ports {
		args = append(args, "-d", fmt.Sprintf("tcp.port==%d,openflow", p))
	}
	return args
}

func splitAgg(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, aggregator)
}

// parseOpenFlowFields turns tshark -T fields output (columns as in
// openFlowFields) into one record per message.
func parseOpenFlowFields(out string) ([]OpenFlowRecord, error) {
	var recs []OpenFlowRecord
	for _, line := range strings.Split(out, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		cols := strings.Split(line, "\t")
		for len(cols) < len(openFlowFields) {
			cols = append(cols, "")
		}
		frame, err := strconv.Atoi(cols[0])
		if err != nil {
			return nil, fmt.Errorf("frame number %q: %w", cols[0], err)
		}
		versions, types, xids, lengths := splitAgg(cols[1]), splitAgg(cols[2]), splitAgg(cols[3]), splitAgg(cols[4])
		if len(types) != len(lengths) || len(types) != len(xids) || len(types) != len(versions) {
			return nil, fmt.Errorf("frame %d: %d versions, %d types, %d xids, %d lengths",
				frame, len(versions), len(types), len(xids), len(lengths))
		}
		maxSev := 0
		for _, s := range splitAgg(cols[6]) {
			v, err := strconv.ParseInt(s, 0, 64)
			if err != nil {
				return nil, fmt.Errorf("frame %d: severity %q: %w", frame, s, err)
			}
			maxSev = max(maxSev, int(v))
		}
		expert := splitAgg(cols[7])
		for i := range types {
			var r OpenFlowRecord
			r.Frame, r.Malformed, r.MaxSeverity, r.Expert = frame, cols[5] != "", maxSev, expert
			var vals [4]int64
			for j, s := range []string{versions[i], types[i], xids[i], lengths[i]} {
				v, err := strconv.ParseInt(s, 0, 64)
				if err != nil {
					return nil, fmt.Errorf("frame %d: field %q: %w", frame, s, err)
				}
				vals[j] = v
			}
			r.Version, r.Type, r.XID, r.Length = int(vals[0]), int(vals[1]), uint32(vals[2]), int(vals[3])
			recs = append(recs, r)
		}
	}
	return recs, nil
}
