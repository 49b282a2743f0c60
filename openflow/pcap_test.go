package openflow_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/pseudocong/pseudocong/internal/pcapstream"
	"github.com/pseudocong/pseudocong/openflow"
)

const (
	goldenPcap    = "testdata/of10-ovs-and-ovs-testcontroller.pcap"
	malformedPcap = "testdata/of10-malformed-samples.pcap"
)

// pcapMessages returns every framed OpenFlow message of every stream in the
// capture, plus the framing errors and unframed tails per stream.
func pcapMessages(t *testing.T, path string) (msgs [][]byte, framingErrs []error) {
	t.Helper()
	msgs, framingErrs, _ = pcapMessagesAndRests(t, path)
	return msgs, framingErrs
}

// pcapMessagesAndRests is pcapMessages that also returns the bytes that
// could not be framed (from a bad header on).
func pcapMessagesAndRests(t *testing.T, path string) (msgs [][]byte, framingErrs []error, rests [][]byte) {
	t.Helper()
	streams, err := pcapstream.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range streams {
		m, rest, err := pcapstream.SplitOpenFlow(s.Data)
		msgs = append(msgs, m...)
		if len(rest) != 0 {
			rests = append(rests, rest)
		}
		if err != nil {
			framingErrs = append(framingErrs, err)
		} else if len(rest) != 0 {
			framingErrs = append(framingErrs, errors.New(s.String()+": truncated final message"))
		}
	}
	return msgs, framingErrs, rests
}

// TestGoldenPcapRoundTrip decodes every message Open vSwitch and
// ovs-testcontroller exchanged and re-encodes it byte for byte.
func TestGoldenPcapRoundTrip(t *testing.T) {
	msgs, framingErrs := pcapMessages(t, goldenPcap)
	for _, err := range framingErrs {
		t.Errorf("framing: %v", err)
	}
	counts := map[openflow.Type]int{}
	for i, raw := range msgs {
		m, err := openflow.Unmarshal(raw)
		if err != nil {
			t.Errorf("message %d (% x...): %v", i, raw[:min(len(raw), 16)], err)
			continue
		}
		counts[m.MsgType()]++
		if m.Len() != len(raw) {
			t.Errorf("message %d %v: Len() = %d, wire %d", i, m.MsgType(), m.Len(), len(raw))
		}
		out, err := openflow.Marshal(m)
		if err != nil {
			t.Errorf("message %d %v: re-encode: %v", i, m.MsgType(), err)
			continue
		}
		if !bytes.Equal(out, raw) {
			t.Errorf("message %d %v: re-encoding differs\n got % x\nwant % x", i, m.MsgType(), out, raw)
		}
	}
	// The capture README lists these counts; check we saw the whole capture.
	want := map[openflow.Type]int{
		openflow.TypePacketIn:  78,
		openflow.TypePacketOut: 78,
		openflow.TypeFlowMod:   77,
	}
	for typ, n := range want {
		if counts[typ] != n {
			t.Errorf("%v: decoded %d, want %d", typ, counts[typ], n)
		}
	}
	for _, typ := range []openflow.Type{openflow.TypeHello, openflow.TypeFeaturesRequest, openflow.TypeFeaturesReply,
		openflow.TypeSetConfig, openflow.TypeEchoRequest, openflow.TypeEchoReply} {
		if counts[typ] == 0 {
			t.Errorf("%v: none decoded", typ)
		}
	}
	t.Logf("decoded and re-encoded %d messages: %v", len(msgs), counts)
}

// TestMalformedPcapRejected checks every hand-made bad message is refused
// with a typed error.
func TestMalformedPcapRejected(t *testing.T) {
	msgs, framingErrs, rests := pcapMessagesAndRests(t, malformedPcap)
	var good, bad int
	for i, raw := range msgs {
		m, err := openflow.Unmarshal(raw)
		if err == nil {
			// Streams open with a valid HELLO before the bad sample.
			if m.MsgType() != openflow.TypeHello {
				t.Errorf("message %d (% x): accepted as %v", i, raw, m.MsgType())
			}
			good++
			continue
		}
		bad++
		var (
			le *openflow.LengthError
			ue *openflow.UnknownTypeError
			ae *openflow.ActionError
		)
		if !errors.As(err, &le) && !errors.As(err, &ue) && !errors.As(err, &ae) {
			t.Errorf("message %d (% x): untyped error %T %v", i, raw, err, err)
		}
		t.Logf("rejected % x: %v", raw[:min(len(raw), 24)], err)
	}
	// A header whose length is below 8 cannot be framed: the framer reports
	// it, and DecodeHeader must reject it too.
	for _, err := range framingErrs {
		t.Logf("framing: %v", err)
	}
	for _, rest := range rests {
		var le *openflow.LengthError
		if _, err := openflow.Unmarshal(rest); !errors.As(err, &le) {
			t.Errorf("unframable bytes % x: got %v, want *LengthError", rest, err)
		}
		if _, err := openflow.DecodeHeader(rest); !errors.As(err, &le) {
			t.Errorf("DecodeHeader(% x): got %v, want *LengthError", rest, err)
		}
	}
	if bad < 4 {
		t.Errorf("rejected %d messages, want at least 4 (truncated FEATURES_REPLY, short FLOW_MOD, bogus PACKET_OUT actions_len, type 99)", bad)
	}
	if len(framingErrs) == 0 {
		t.Errorf("the header shorter than 8 bytes was not detected")
	}
}
