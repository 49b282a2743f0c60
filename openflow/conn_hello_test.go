package openflow

import (
	"encoding/binary"
	"errors"
	"testing"
)

// fixLen sets a hand-built message's length field to its length.
func fixLen(b []byte) []byte {
	binary.BigEndian.PutUint16(b[2:4], uint16(len(b)))
	return b
}

// helloWith builds a HELLO of the given header version carrying a version
// bitmap element with the given versions (none: no element at all).
func helloWith(version uint8, bitmapVersions ...int) []byte {
	var body []byte
	if len(bitmapVersions) > 0 {
		words := make([]uint32, 1)
		for _, v := range bitmapVersions {
			for v/32 >= len(words) {
				words = append(words, 0)
			}
			words[v/32] |= 1 << (v % 32)
		}
		n := 4 + 4*len(words)
		body = binary.BigEndian.AppendUint16(body, helloElemVersionBitmap)
		body = binary.BigEndian.AppendUint16(body, uint16(n))
		for _, w := range words {
			body = binary.BigEndian.AppendUint32(body, w)
		}
		for len(body)%8 != 0 {
			body = append(body, 0)
		}
	}
	b := rawMsg(TypeHello, 1, body)
	b[0] = version
	return b
}

func TestNegotiateVersion(t *testing.T) {
	unknownElem := rawMsg(TypeHello, 1, []byte{0, 9, 0, 8, 1, 2, 3, 4, 0, 1, 0, 8, 0, 0, 0, 0x10})
	unknownElem[0] = 4
	malformed := rawMsg(TypeHello, 1, []byte{0, 1, 0, 2})
	malformed[0] = 4
	tests := []struct {
		name  string
		hello []byte
		ok    bool
	}{
		{"OVS 1.0 hello, length 8", helloWith(1), true},
		{"1.3 header only", helloWith(4), true},
		{"1.5 header only", helloWith(6), true},
		{"version 0", helloWith(0), false},
		{"1.3 bitmap with 1.0", helloWith(4, 1, 4), true},
		{"1.4 bitmap 1.0..1.3", helloWith(5, 1, 2, 3, 4, 5), true},
		{"1.3 bitmap without 1.0", helloWith(4, 4), false},
		{"1.5 bitmap 1.3..1.5", helloWith(6, 4, 5, 6), false},
		{"bitmap with second word only", helloWith(4, 33), false},
		{"bitmap after an unknown element", unknownElem, false},
		// One behaviour for both roles: a malformed HELLO is refused
		// (HELLO_FAILED), not guessed at.
		{"malformed element refused", malformed, false},
		{"element longer than the message", append(helloWith(4), 0, 1, 0, 200), false},
		{"stray bytes after the elements", append(helloWith(4, 1), 0, 1), false},
		{"bitmap of odd length", func() []byte { b := rawMsg(TypeHello, 1, []byte{0, 1, 0, 6, 0, 0, 0, 0}); b[0] = 4; return b }(), false},
		{"last element without padding", func() []byte { b := rawMsg(TypeHello, 1, []byte{0, 1, 0, 8, 0, 0, 0, 2}); b[0] = 4; return b }(), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, err := NegotiateHello(fixLen(tc.hello))
			if ok := err == nil; ok != tc.ok {
				t.Fatalf("NegotiateHello = %d, %v; want ok %v", v, err, tc.ok)
			}
			var hf *HelloFailedError
			if err != nil && (!errors.As(err, &hf) || hf.Reason == "") {
				t.Fatalf("refusal %v is not a *HelloFailedError with a reason", err)
			}
			if err == nil && v != Version {
				t.Fatalf("negotiated version %d", v)
			}
		})
	}
}
