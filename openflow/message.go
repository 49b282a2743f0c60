package openflow

import "slices"

// Decoded messages alias the input: byte-slice fields (Data, Elements,
// vendor bodies) point into the buffer given to DecodeFromBytes/Unmarshal,
// so decoding a PACKET_IN allocates nothing. Callers that reuse their read
// buffer must copy those fields (or the buffer) first.

// decodeMsgHeader checks that b holds exactly one message of type t whose
// total length lies in [minLen, maxLen], and stores its header in h.
func decodeMsgHeader(h *Header, b []byte, t Type, minLen, maxLen int) error {
	hdr, err := DecodeHeader(b)
	if err != nil {
		return err
	}
	// HELLO is version-independent: version negotiation must see it.
	if hdr.Version != Version && t != TypeHello {
		return &VersionError{Got: hdr.Version}
	}
	if hdr.Type != t {
		return &TypeMismatchError{Want: t, Got: hdr.Type}
	}
	if int(hdr.Length) != len(b) {
		return lengthErr(t.String()+" ofp_header.length vs bytes present", len(b), int(hdr.Length))
	}
	if len(b) < minLen {
		return lengthErr(t.String(), minLen, len(b))
	}
	if len(b) > maxLen {
		return lengthErr(t.String(), maxLen, len(b))
	}
	*h = hdr
	return nil
}

// beginMsg checks the total length n and appends the header, growing b once
// for the whole message.
func beginMsg(b []byte, t Type, n int, xid uint32) ([]byte, error) {
	if n > MaxMessageLen {
		return b, lengthErr(t.String()+" encoding", MaxMessageLen, n)
	}
	b = slices.Grow(b, n)
	return appendHeader(b, t, n, xid), nil
}

// Marshal encodes m into a new buffer (m.AppendBinary(nil)).
func Marshal(m Message) ([]byte, error) {
	return m.AppendBinary(make([]byte, 0, m.Len()))
}
