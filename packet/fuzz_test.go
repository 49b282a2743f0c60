package packet_test

import (
	"math/rand/v2"
	"testing"

	"github.com/pseudocong/pseudocong/packet"
)

// FuzzParse: no input panics the decoder; whatever it accepts re-encodes
// into a frame that decodes to the same fields with valid checksums.
// Seeds: f.Add below plus testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	r := rand.New(rand.NewPCG(31, 32))
	for range 16 {
		p := randPacket(r)
		frame, err := p.AppendBinary(nil)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(frame)
	}
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, frame []byte) {
		var p packet.Packet
		if err := p.DecodeFromBytes(frame); err != nil || p.Truncated {
			_ = p.VerifyChecksums() // must not panic either
			return
		}
		_ = p.VerifyChecksums()
		again, err := p.AppendBinary(nil)
		if err != nil {
			t.Fatalf("re-encoding an accepted frame: %v", err)
		}
		var q packet.Packet
		if err := q.DecodeFromBytes(again); err != nil {
			t.Fatalf("decoding the re-encoded frame: %v\n% x", err, again)
		}
		if d := diffPackets(&p, &q); d != "" {
			t.Fatalf("%s\nfirst  %+v\nsecond %+v", d, p, q)
		}
		if err := q.VerifyChecksums(); err != nil {
			t.Fatalf("re-encoded frame: %v", err)
		}
	})
}
