package openflow_test

import (
	"bytes"
	"encoding/hex"
	"reflect"
	"testing"

	of "github.com/pseudocong/pseudocong/openflow"
)

// Fuzz properties: decoders never panic; whatever decodes re-encodes to the
// same length, and decoding that encoding gives an equal value (padding
// bytes are the only thing allowed to change).

// addGoldenSeeds adds the golden vectors; testdata/fuzz/<Name>/ holds more
// (the messages of the Open vSwitch capture, see corpus_test.go).
func addGoldenSeeds(f *testing.F) {
	for _, h := range goldenMessageHex {
		b, _ := hex.DecodeString(h)
		f.Add(b)
	}
}

func FuzzUnmarshal(f *testing.F) {
	addGoldenSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := of.Unmarshal(b)
		if err != nil {
			if m != nil {
				t.Fatal("message returned with error")
			}
			of.ErrorCodeFor(err) // must not panic either
			return
		}
		enc, err := of.Marshal(m)
		if err != nil {
			t.Fatalf("decoded %T does not encode: %v", m, err)
		}
		if len(enc) != len(b) || m.Len() != len(b) {
			t.Fatalf("%T: input %d bytes, Len %d, encoded %d", m, len(b), m.Len(), len(enc))
		}
		m2, err := of.Unmarshal(enc)
		if err != nil {
			t.Fatalf("re-encoding of %T does not decode: %v", m, err)
		}
		m.Hdr().Version = of.Version // HELLO of another version re-encodes as 0x01
		if !reflect.DeepEqual(m, m2) {
			t.Fatalf("decode(encode(m)) != m\n m  %+v\n m2 %+v", m, m2)
		}
		if enc2, _ := of.Marshal(m2); !bytes.Equal(enc, enc2) {
			t.Fatal("encoding not stable")
		}
	})
}

func FuzzMatch(f *testing.F) {
	f.Add(make([]byte, 40))
	all := of.MatchAll()
	f.Add(all.AppendBinary(nil))
	f.Add(matchTCP.AppendBinary(nil))
	f.Add(matchExact.AppendBinary(nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		var m of.Match
		if err := m.DecodeFromBytes(b); err != nil {
			if len(b) >= of.MatchLen {
				t.Fatalf("rejected %d bytes: %v", len(b), err)
			}
			return
		}
		enc := m.AppendBinary(nil)
		if len(enc) != of.MatchLen {
			t.Fatalf("encoded %d bytes", len(enc))
		}
		var m2 of.Match
		if err := m2.DecodeFromBytes(enc); err != nil || m2 != m {
			t.Fatalf("round trip: %v, %+v != %+v", err, m2, m)
		}
		for _, n := range []int{m.NwSrcPrefixLen(), m.NwDstPrefixLen()} {
			if n < 0 || n > 32 {
				t.Fatalf("prefix length %d", n)
			}
		}
		_ = m.String()
	})
}

func FuzzActions(f *testing.F) {
	for _, h := range goldenActionHex {
		b, _ := hex.DecodeString(h)
		f.Add(b)
	}
	f.Add(of.AppendActions(nil, allActions()))
	f.Fuzz(func(t *testing.T, b []byte) {
		acts, err := of.DecodeActions(b)
		if err != nil {
			return
		}
		if n := of.ActionsLen(acts); n != len(b) {
			t.Fatalf("ActionsLen %d, input %d", n, len(b))
		}
		enc := of.AppendActions(nil, acts)
		if len(enc) != len(b) {
			t.Fatalf("encoded %d bytes, input %d", len(enc), len(b))
		}
		acts2, err := of.DecodeActions(enc)
		if err != nil || !reflect.DeepEqual(acts, acts2) {
			t.Fatalf("round trip: %v\n%v\n%v", err, acts, acts2)
		}
		_ = of.FormatActions(acts)
	})
}

func statsSeeds(f *testing.F, typ of.Type) {
	for _, h := range goldenMessageHex {
		b, _ := hex.DecodeString(h)
		if of.Type(b[1]) == typ {
			f.Add(uint16(b[8])<<8|uint16(b[9]), b[12:])
		}
	}
}

func FuzzStatsRequestBody(f *testing.F) {
	statsSeeds(f, of.TypeStatsRequest)
	f.Fuzz(func(t *testing.T, st uint16, b []byte) {
		body, err := of.DecodeStatsRequestBody(of.StatsType(st), b)
		if err != nil {
			return
		}
		if body.StatsType() != of.StatsType(st) {
			t.Fatalf("body %T for stats type %d", body, st)
		}
		enc := body.AppendBody(nil)
		if len(enc) != len(b) || body.Len() != len(b) {
			t.Fatalf("%T: input %d, Len %d, encoded %d", body, len(b), body.Len(), len(enc))
		}
		body2, err := of.DecodeStatsRequestBody(of.StatsType(st), enc)
		if err != nil || !reflect.DeepEqual(body, body2) {
			t.Fatalf("round trip: %v\n%+v\n%+v", err, body, body2)
		}
	})
}

func FuzzStatsReplyBody(f *testing.F) {
	statsSeeds(f, of.TypeStatsReply)
	f.Fuzz(func(t *testing.T, st uint16, b []byte) {
		body, err := of.DecodeStatsReplyBody(of.StatsType(st), b)
		if err != nil {
			return
		}
		if body.StatsType() != of.StatsType(st) {
			t.Fatalf("body %T for stats type %d", body, st)
		}
		enc := body.AppendBody(nil)
		if len(enc) != len(b) || body.Len() != len(b) {
			t.Fatalf("%T: input %d, Len %d, encoded %d", body, len(b), body.Len(), len(enc))
		}
		body2, err := of.DecodeStatsReplyBody(of.StatsType(st), enc)
		if err != nil || !reflect.DeepEqual(body, body2) {
			t.Fatalf("round trip: %v\n%+v\n%+v", err, body, body2)
		}
	})
}
