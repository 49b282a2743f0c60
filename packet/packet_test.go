package packet_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/pseudocong/pseudocong/packet"
)

// diffPackets compares the fields of the layers in want.Layers, leaving out
// what building derives (lengths, checksums, EtherTypes and IP protocol
// implied by the next layer); "" if equal.
func diffPackets(want, got *packet.Packet) string {
	if want.Layers != got.Layers {
		return "layers differ"
	}
	l := want.Layers
	we, ge := want.Ethernet, got.Ethernet
	if l&(packet.LayerDot1Q|packet.LayerARP|packet.LayerIPv4) != 0 {
		we.EtherType, ge.EtherType = 0, 0
	}
	if we != ge {
		return "ethernet differs"
	}
	if l.Has(packet.LayerDot1Q) {
		wv, gv := want.Dot1Q, got.Dot1Q
		if l&(packet.LayerARP|packet.LayerIPv4) != 0 {
			wv.EtherType, gv.EtherType = 0, 0
		}
		if wv != gv {
			return "802.1q differs"
		}
	}
	if l.Has(packet.LayerARP) && want.ARP != got.ARP {
		return "arp differs"
	}
	if l.Has(packet.LayerIPv4) {
		wi, gi := want.IPv4, got.IPv4
		if !bytes.Equal(wi.Options, gi.Options) {
			return "ipv4 options differ"
		}
		wi.Options, gi.Options = nil, nil
		wi.TotalLength, wi.IHL, wi.Checksum = 0, 0, 0
		gi.TotalLength, gi.IHL, gi.Checksum = 0, 0, 0
		if l&(packet.LayerTCP|packet.LayerUDP|packet.LayerICMP) != 0 {
			wi.Protocol, gi.Protocol = 0, 0
		}
		if !reflect.DeepEqual(wi, gi) {
			return "ipv4 differs"
		}
	}
	if l.Has(packet.LayerTCP) {
		wt, gt := want.TCP, got.TCP
		wt.RawOptions, gt.RawOptions = nil, nil
		wt.DataOffset, wt.Checksum, gt.DataOffset, gt.Checksum = 0, 0, 0, 0
		if !reflect.DeepEqual(wt, gt) {
			return "tcp differs"
		}
	}
	if l.Has(packet.LayerUDP) {
		wu, gu := want.UDP, got.UDP
		wu.Length, wu.Checksum, gu.Length, gu.Checksum = 0, 0, 0, 0
		if wu != gu {
			return "udp differs"
		}
	}
	if l.Has(packet.LayerICMP) {
		wc, gc := want.ICMP, got.ICMP
		wc.Checksum, gc.Checksum = 0, 0
		if wc != gc {
			return "icmp differs"
		}
	}
	// Outside IPv4 the Ethernet padding is part of the payload.
	if l.Has(packet.LayerIPv4) && !bytes.Equal(want.Payload, got.Payload) ||
		!bytes.HasPrefix(got.Payload, want.Payload) {
		return "payload differs"
	}
	return ""
}

func TestRoundTripRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var got packet.Packet
	for i := range 5000 {
		want := randPacket(r)
		frame, err := want.AppendBinary(nil)
		if err != nil {
			t.Fatalf("packet %d: build: %v", i, err)
		}
		if len(frame) < packet.MinFrameLen {
			t.Fatalf("packet %d: %d bytes, want padding to %d", i, len(frame), packet.MinFrameLen)
		}
		if err := got.DecodeFromBytes(frame); err != nil {
			t.Fatalf("packet %d: decode: %v\n% x", i, err, frame)
		}
		if d := diffPackets(&want, &got); d != "" {
			t.Fatalf("packet %d: %s\nwant %+v\ngot  %+v\n% x", i, d, want, got, frame)
		}
		if err := got.VerifyChecksums(); err != nil {
			t.Fatalf("packet %d: %v", i, err)
		}
		// Re-encoding a decoded packet reproduces the frame.
		again, err := got.AppendBinary(nil)
		if err != nil || !bytes.Equal(again, frame) {
			t.Fatalf("packet %d: re-encoding: %v\n% x\n% x", i, err, frame, again)
		}
	}
}

// TestAppendBinaryAppends checks that building appends after what the
// buffer holds and leaves it alone on error.
func TestAppendBinaryAppends(t *testing.T) {
	p := packet.Packet{Layers: packet.LayerEthernet | packet.LayerIPv4 | packet.LayerUDP}
	prefix := []byte("header")
	b, err := p.AppendBinary(append([]byte(nil), prefix...))
	if err != nil || !bytes.HasPrefix(b, prefix) || len(b) != len(prefix)+packet.MinFrameLen {
		t.Fatalf("got % x, %v", b, err)
	}
	bad := packet.Packet{Layers: packet.LayerEthernet | packet.LayerIPv4 | packet.LayerTCP | packet.LayerUDP}
	if b, err := bad.AppendBinary(prefix); err == nil || !bytes.Equal(b, prefix) {
		t.Fatalf("two transport layers: got % x, %v; want an error and the buffer unchanged", b, err)
	}
	p.IPv4.Options = []byte{1, 1, 1}
	if b, err := p.AppendBinary(prefix); err == nil || !bytes.Equal(b, prefix) {
		t.Fatalf("3-byte IPv4 options: got % x, %v", b, err)
	}
}

func TestChecksumRFC1071(t *testing.T) {
	// The example of RFC 1071 section 3: sum 0xddf2, checksum ^0xddf2.
	b := []byte{0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7}
	if got := packet.Checksum(b, 0); got != ^uint16(0xddf2) {
		t.Fatalf("checksum %#04x, want %#04x", got, ^uint16(0xddf2))
	}
	// Odd lengths pad with a zero byte; split sums add up.
	odd := []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}
	if packet.Checksum(odd, 0) != packet.Checksum(append(odd[:11:11], 0), 0) {
		t.Fatal("odd length is not zero-padded")
	}
	if packet.Checksum(odd, 0) != packet.Fold(packet.Sum(odd[4:], packet.Sum(odd[:4], 0))) {
		t.Fatal("chained sums differ")
	}
}

// TestUpdateChecksumProperty: rewriting a 16- or 32-bit word and updating
// the checksum incrementally (RFC 1624) equals recomputing it.
func TestUpdateChecksumProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		b := make([]byte, 2*(2+r.IntN(30)))
		randBytes(r, b)
		b[0], b[1] = 0, 0
		binary.BigEndian.PutUint16(b, packet.Checksum(b, 0))
		at := 2 + 2*r.IntN(len(b)/2-1)
		if r.IntN(2) == 0 || at+4 > len(b) {
			old, nw := binary.BigEndian.Uint16(b[at:]), uint16(r.IntN(1<<16))
			if r.IntN(8) == 0 {
				nw = old
			}
			binary.BigEndian.PutUint16(b[at:], nw)
			binary.BigEndian.PutUint16(b, packet.UpdateChecksum16(binary.BigEndian.Uint16(b), old, nw))
		} else {
			old, nw := binary.BigEndian.Uint32(b[at:]), r.Uint32()
			binary.BigEndian.PutUint32(b[at:], nw)
			binary.BigEndian.PutUint16(b, packet.UpdateChecksum32(binary.BigEndian.Uint16(b), old, nw))
		}
		if packet.Checksum(b, 0) != 0 {
			t.Fatalf("after incremental update the checksum does not verify: % x", b)
		}
	}
}

func TestECNAndDSCP(t *testing.T) {
	var ip packet.IPv4
	ip.SetDSCP(46) // EF
	for _, e := range []packet.ECN{packet.ECNNotECT, packet.ECNECT1, packet.ECNECT0, packet.ECNCE} {
		ip.SetECN(e)
		if ip.ECN() != e || ip.DSCP() != 46 || ip.TOS != 46<<2|uint8(e) {
			t.Fatalf("ECN %v: TOS %#x, DSCP %d, ECN %v", e, ip.TOS, ip.DSCP(), ip.ECN())
		}
	}
	if packet.ECNECT0.String() != "ECT(0)" || packet.ECNECT0 != 2 || packet.ECNECT1 != 1 {
		t.Fatal("ECT(0) is 0b10 and ECT(1) is 0b01 (RFC 3168)")
	}
}

// TestTCPOptionsSkipUnknown: unknown options and known ones of the wrong
// length are skipped; a length running past the header is an error.
func TestTCPOptionsSkipUnknown(t *testing.T) {
	p := packet.Packet{Layers: packet.LayerEthernet | packet.LayerIPv4 | packet.LayerTCP}
	p.TCP.RawOptions = []byte{
		254, 4, 0xab, 0xcd, // experimental, unknown
		2, 3, 9, // MSS of the wrong length: ignored
		1,          // NOP
		3, 3, 7, 1, // window scale 7, NOP
		30, 2, // MPTCP-like, empty
	}
	frame, err := p.AppendBinary(nil)
	if err != nil {
		t.Fatal(err)
	}
	var got packet.Packet
	if err := got.DecodeFromBytes(frame); err != nil {
		t.Fatal(err)
	}
	o := got.TCP.Options
	if o.HasMSS || !o.HasWindowScale || o.WindowScale != 7 || o.Unknown != 2 {
		t.Fatalf("options %+v", o)
	}
	// An option whose length runs past the header.
	binary.BigEndian.PutUint16(frame[14+20+20:], 0x0828) // timestamps, length 40
	if err := got.DecodeFromBytes(frame); err == nil || got.Layers.Has(packet.LayerTCP) {
		t.Fatalf("overlong option: err %v, layers %b", err, got.Layers)
	}
}

// TestTruncated: every prefix of a valid frame decodes without panicking;
// a prefix that cuts a header is an error matching ErrTruncated, and the
// layers before it are kept.
func TestTruncated(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var p packet.Packet
	for range 300 {
		want := randPacket(r)
		frame, err := want.AppendBinary(nil)
		if err != nil {
			t.Fatal(err)
		}
		for n := range len(frame) {
			err := p.DecodeFromBytes(frame[:n])
			if n < packet.EthernetLen {
				if !errors.Is(err, packet.ErrTruncated) {
					t.Fatalf("%d bytes: err %v, want truncated", n, err)
				}
				continue
			}
			if p.Layers&^want.Layers != 0 {
				t.Fatalf("%d bytes: layers %b not within %b", n, p.Layers, want.Layers)
			}
			if err != nil && !errors.Is(err, packet.ErrTruncated) {
				t.Fatalf("%d bytes of a valid frame: %v, want a truncation error", n, err)
			}
			if err == nil && p.Layers.Has(packet.LayerIPv4) && n < 14+int(p.IPv4.TotalLength)+4*boolInt(want.Layers.Has(packet.LayerDot1Q)) && !p.Truncated {
				t.Fatalf("%d bytes: IPv4 cut short but not flagged truncated", n)
			}
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestDecodeAllocs: the hot-path parse allocates nothing, for each kind of
// frame and for malformed ones.
func TestDecodeAllocs(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var frames [][]byte
	for range 200 {
		p := randPacket(r)
		f, err := p.AppendBinary(nil)
		if err != nil {
			t.Fatal(err)
		}
		frames = append(frames, f, f[:len(f)/2])
	}
	var p packet.Packet
	allocs := testing.AllocsPerRun(50, func() {
		for _, f := range frames {
			_ = p.DecodeFromBytes(f)
			_ = p.VerifyChecksums()
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per run of %d decodes, want 0", allocs, len(frames))
	}
}

func BenchmarkDecodeTCP(b *testing.B) {
	p := packet.Packet{Layers: packet.LayerEthernet | packet.LayerIPv4 | packet.LayerTCP, Payload: make([]byte, 1400)}
	p.TCP.Flags = packet.TCPFlagACK
	p.TCP.Options = packet.TCPOptions{HasTimestamps: true, NumSACK: 2}
	frame, err := p.AppendBinary(nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var q packet.Packet
	for b.Loop() {
		if err := q.DecodeFromBytes(frame); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBuildTCP(b *testing.B) {
	p := packet.Packet{Layers: packet.LayerEthernet | packet.LayerIPv4 | packet.LayerTCP, Payload: make([]byte, 1400)}
	p.TCP.Options = packet.TCPOptions{HasMSS: true, MSS: 1460, SACKPermitted: true, HasTimestamps: true, HasWindowScale: true, WindowScale: 7}
	buf := make([]byte, 0, 2048)
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = p.AppendBinary(buf[:0]); err != nil {
			b.Fatal(err)
		}
	}
}

// TestIPv4TotalLengthZero: a datagram from segmentation offload (total
// length 0) spans the rest of the frame, as gopacket reads it.
func TestIPv4TotalLengthZero(t *testing.T) {
	p := packet.Packet{Layers: packet.LayerEthernet | packet.LayerIPv4 | packet.LayerTCP, Payload: make([]byte, 100)}
	frame, err := p.AppendBinary(nil)
	if err != nil {
		t.Fatal(err)
	}
	frame[16], frame[17] = 0, 0
	var got packet.Packet
	if err := got.DecodeFromBytes(frame); err != nil || !got.Layers.Has(packet.LayerTCP) || len(got.Payload) != 100 || got.Truncated {
		t.Fatalf("err %v, layers %b, payload %d bytes", err, got.Layers, len(got.Payload))
	}
}
