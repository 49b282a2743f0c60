package vcc

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/pseudocong/pseudocong/internal/clock"
	"github.com/pseudocong/pseudocong/packet"
)

const mss = 1448

var (
	tenantIP = [4]byte{10, 0, 0, 1}
	remoteIP = [4]byte{10, 0, 0, 2}
)

// seg describes one segment for the frame builder.
type seg struct {
	toTenant bool
	flags    packet.TCPFlags
	seq, ack uint32
	window   uint16
	ecn      packet.ECN
	payload  int
	opts     packet.TCPOptions
	port     uint16 // tenant port; default 40000
}

func build(t *testing.T, s seg) []byte {
	t.Helper()
	port := s.port
	if port == 0 {
		port = 40000
	}
	var p packet.Packet
	p.Layers = packet.LayerEthernet | packet.LayerIPv4 | packet.LayerTCP
	p.Ethernet = packet.Ethernet{Src: packet.MAC{2, 0, 0, 0, 0, 1}, Dst: packet.MAC{2, 0, 0, 0, 0, 2}}
	p.IPv4 = packet.IPv4{TTL: 64, Src: tenantIP, Dst: remoteIP, Flags: packet.IPv4DontFragment, ID: 7}
	p.TCP = packet.TCP{SrcPort: port, DstPort: 5201, Seq: s.seq, Ack: s.ack, Flags: s.flags, Window: s.window, Options: s.opts}
	if s.toTenant {
		p.IPv4.Src, p.IPv4.Dst = remoteIP, tenantIP
		p.TCP.SrcPort, p.TCP.DstPort = 5201, port
	}
	p.IPv4.SetECN(s.ecn)
	p.Payload = bytes.Repeat([]byte{0xa5}, s.payload)
	b, err := p.AppendBinary(nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// rig runs frames through a Translator and checks every frame it hands
// back: checksums right, length unchanged, only the fields vCC may touch
// changed.
type rig struct {
	t   *testing.T
	clk *clock.Sim
	tr  *Translator
	reg *prometheus.Registry
}

func newRig(t *testing.T, cfg Config) *rig {
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Metrics = m
	clk := clock.NewSim(time.Unix(1000, 0))
	return &rig{t: t, clk: clk, tr: New(clk, cfg), reg: reg}
}

// send passes s through the translator and returns the decoded result.
func (r *rig) send(s seg) *packet.Packet {
	r.t.Helper()
	frame := build(r.t, s)
	orig := append([]byte(nil), frame...)
	if s.toTenant {
		r.tr.ToTenant(frame)
	} else {
		r.tr.FromTenant(frame)
	}
	return checkRewrite(r.t, orig, frame)
}

// checkRewrite verifies that frame (orig after the translator) still has
// correct checksums and differs from orig only in the ECN field, the TCP
// flags and the window.
func checkRewrite(t *testing.T, orig, frame []byte) *packet.Packet {
	t.Helper()
	if len(frame) != len(orig) {
		t.Fatalf("length changed %d -> %d", len(orig), len(frame))
	}
	var p, o packet.Packet
	if err := p.DecodeFromBytes(frame); err != nil {
		t.Fatalf("rewritten frame does not decode: %v", err)
	}
	if err := p.VerifyChecksums(); err != nil {
		t.Fatalf("rewritten frame: %v", err)
	}
	if err := o.DecodeFromBytes(orig); err != nil {
		return &p
	}
	a, b := o, p
	a.IPv4.SetECN(0)
	b.IPv4.SetECN(0)
	a.IPv4.Checksum, b.IPv4.Checksum = 0, 0
	a.TCP.Flags, b.TCP.Flags = 0, 0
	a.TCP.Window, b.TCP.Window = 0, 0
	a.TCP.Checksum, b.TCP.Checksum = 0, 0
	if a.IPv4.TOS != b.IPv4.TOS || a.IPv4.Src != b.IPv4.Src || a.TCP.Seq != b.TCP.Seq || a.TCP.Ack != b.TCP.Ack ||
		a.TCP.SrcPort != b.TCP.SrcPort || a.TCP.Options != b.TCP.Options || !bytes.Equal(a.Payload, b.Payload) {
		t.Fatalf("translator changed more than ECN, flags and window:\n%+v\n%+v", o.TCP, p.TCP)
	}
	return &p
}

// handshake opens a translated flow: tenant ISN 999 (data from 1000),
// peer MSS 1448, window scaling wsTenant/wsPeer (negative: no option).
func (r *rig) handshake(wsTenant, wsPeer int) {
	r.t.Helper()
	o := packet.TCPOptions{HasMSS: true, MSS: mss}
	if wsTenant >= 0 {
		o.HasWindowScale, o.WindowScale = true, uint8(wsTenant)
	}
	syn := r.send(seg{flags: packet.TCPFlagSYN, seq: 999, window: 64240, opts: o})
	if !syn.TCP.Flags.Has(packet.TCPFlagSYN | packet.TCPFlagECE | packet.TCPFlagCWR) {
		r.t.Fatalf("SYN flags %#x, want SYN|ECE|CWR", syn.TCP.Flags)
	}
	r.clk.RunFor(10 * time.Millisecond) // the handshake RTT
	po := packet.TCPOptions{HasMSS: true, MSS: mss}
	if wsPeer >= 0 {
		po.HasWindowScale, po.WindowScale = true, uint8(wsPeer)
	}
	sa := r.send(seg{toTenant: true, flags: packet.TCPFlagSYN | packet.TCPFlagACK | packet.TCPFlagECE, seq: 5000, ack: 1000, window: 65160, opts: po})
	if sa.TCP.Flags != packet.TCPFlagSYN|packet.TCPFlagACK {
		r.t.Fatalf("SYN-ACK to tenant has flags %#x, want SYN|ACK (ECE stripped)", sa.TCP.Flags)
	}
}

// data sends n full segments from seq.
func (r *rig) data(seq uint32, n int) {
	r.t.Helper()
	for i := range n {
		p := r.send(seg{flags: packet.TCPFlagACK, seq: seq + uint32(i*mss), ack: 5001, window: 500, payload: mss})
		if p.IPv4.ECN() != packet.ECNECT0 {
			r.t.Fatalf("tenant data leaves %v, want ECT(0)", p.IPv4.ECN())
		}
	}
}

func (r *rig) ack(ack uint32, window uint16, ece bool) *packet.Packet {
	r.t.Helper()
	f := packet.TCPFlagACK
	if ece {
		f |= packet.TCPFlagECE
	}
	p := r.send(seg{toTenant: true, flags: f, seq: 5001, ack: ack, window: window})
	if p.TCP.Flags&(packet.TCPFlagECE|packet.TCPFlagCWR) != 0 {
		r.t.Fatalf("ACK reaches the tenant with flags %#x: ECE/CWR must be hidden", p.TCP.Flags)
	}
	return p
}

func TestHandshakeAndMarking(t *testing.T) {
	r := newRig(t, Config{})
	r.handshake(7, 7)
	r.data(1000, 3)
	// The tenant's pure ACKs are not ECN-capable (RFC 3168 §6.1.4).
	p := r.send(seg{flags: packet.TCPFlagACK, seq: 1000 + 3*mss, ack: 5001, window: 500})
	if p.IPv4.ECN() != packet.ECNNotECT {
		t.Errorf("pure ACK marked %v", p.IPv4.ECN())
	}
	// An ACK without ECE, no throttling yet: window untouched.
	if a := r.ack(1000+mss, 20000, false); a.TCP.Window != 20000 {
		t.Errorf("window %d rewritten before any ECE", a.TCP.Window)
	}
	s := r.tr.Stats()
	if s.TranslatedSYNs != 1 || s.StrippedSYNACKs != 1 || s.ECTMarked != 3 || r.tr.Flows() != 1 {
		t.Errorf("stats %+v, flows %d", s, r.tr.Flows())
	}
	if got := testutil.ToFloat64(r.tr.met.counters[cTranslatedSYNs]); got != 1 {
		t.Errorf("translated_syns_total %v", got)
	}
}

// The window throttling against hand-computed values: 20 segments in
// flight, ECE on the ACK of the first → target max(20·MSS/2, 2 MSS) =
// 10 MSS; while shrinking the window is the flight after the ACK (19 MSS,
// 18 MSS, …) until it reaches 10 MSS, then it grows by one MSS per window
// of acked bytes. With window scale 7 the field is ceil(bytes/128).
func TestWindowThrottling(t *testing.T) {
	r := newRig(t, Config{})
	r.handshake(7, 7)
	const base = 1000
	r.data(base, 20)
	field := func(bytes uint32) uint16 { return uint16((bytes + 127) >> 7) }
	a := r.ack(base+mss, 0xffff, true)
	if want := field(19 * mss); a.TCP.Window != want {
		t.Fatalf("after ECE: window field %d, want %d (19 MSS in flight)", a.TCP.Window, want)
	}
	// More ECE within the smoothed RTT (10 ms): no second cut.
	for i := 2; i <= 10; i++ {
		a = r.ack(base+uint32(i*mss), 0xffff, true)
		if want := field(uint32(20-i) * mss); a.TCP.Window != want {
			t.Fatalf("ACK %d: window field %d, want %d", i, a.TCP.Window, want)
		}
	}
	if s := r.tr.Stats(); s.Reductions != 1 || s.ECESeen != 10 || s.ECEHidden != 10 {
		t.Fatalf("stats %+v, want 1 reduction, 10 ECE seen and hidden", s)
	}
	// At the target: 10 MSS in flight would be allowed; the flight is 10
	// MSS, so the next segments grow it once a window's worth is acked.
	r.data(base+20*mss, 10)
	for i := 11; i <= 20; i++ {
		a = r.ack(base+uint32(i*mss), 0xffff, false)
	}
	if want := field(11 * mss); a.TCP.Window != want {
		t.Fatalf("after a window of ACKs at the target: field %d, want %d (10 MSS + 1)", a.TCP.Window, want)
	}
	// The receiver's own window is never raised.
	if a = r.ack(base+20*mss, 3, false); a.TCP.Window != 3 {
		t.Fatalf("small receiver window raised to %d", a.TCP.Window)
	}
	// ECE after an RTT: the next cut is from the last target (11 MSS).
	r.clk.RunFor(20 * time.Millisecond)
	r.data(base+30*mss, 11)
	a = r.ack(base+21*mss, 0xffff, true)
	if s := r.tr.Stats(); s.Reductions != 2 {
		t.Fatalf("reductions %d, want 2", s.Reductions)
	}
	// In flight after the ACK: 41-21 = 20 MSS; target 5.5 MSS; window
	// was 11 MSS, so it stays at most 11 MSS while shrinking.
	if want := field(11 * mss); a.TCP.Window != want {
		t.Fatalf("second cut: field %d, want %d", a.TCP.Window, want)
	}
	for i := 22; i <= 36; i++ { // the flight falls below the target at the 36th
		a = r.ack(base+uint32(i*mss), 0xffff, false)
	}
	if want := field(11 * mss / 2); a.TCP.Window != want {
		t.Fatalf("second cut settled: field %d, want %d (target 5.5 MSS)", a.TCP.Window, want)
	}
	// The tenant's next data segment acknowledges the cut with CWR, so the
	// receiver stops echoing ECE.
	p := r.send(seg{flags: packet.TCPFlagACK, seq: base + 41*mss, ack: 5001, window: 500, payload: mss})
	if !p.TCP.Flags.Has(packet.TCPFlagCWR) {
		t.Fatalf("data after a cut has flags %#x, want CWR", p.TCP.Flags)
	}
}

// Without window scaling on both sides the field is in bytes; the target
// never goes below 2 MSS.
func TestNoScaleAndFloor(t *testing.T) {
	r := newRig(t, Config{})
	r.handshake(7, -1) // the peer did not scale: no scaling at all
	r.data(1000, 3)
	a := r.ack(1000+mss, 0xffff, true)
	if a.TCP.Window != 2*mss {
		t.Fatalf("window %d, want 2 MSS = %d (the flight is 2 MSS, the floor 2 MSS)", a.TCP.Window, 2*mss)
	}
	r.clk.RunFor(time.Second)
	a = r.ack(1000+2*mss, 0xffff, true)
	if a.TCP.Window != 2*mss {
		t.Fatalf("window %d after a second cut, want the 2 MSS floor", a.TCP.Window)
	}
}

func TestECNTenantUntouched(t *testing.T) {
	r := newRig(t, Config{})
	for _, s := range []seg{
		{flags: packet.TCPFlagSYN | packet.TCPFlagECE | packet.TCPFlagCWR, seq: 999},
		{toTenant: true, flags: packet.TCPFlagSYN | packet.TCPFlagACK | packet.TCPFlagECE, seq: 5000, ack: 1000, window: 100},
		{flags: packet.TCPFlagACK, seq: 1000, ack: 5001, ecn: packet.ECNECT0, payload: 100},
		{toTenant: true, flags: packet.TCPFlagACK | packet.TCPFlagECE, seq: 5001, ack: 1100, window: 100},
	} {
		frame := build(t, s)
		orig := append([]byte(nil), frame...)
		if s.toTenant {
			r.tr.ToTenant(frame)
		} else {
			r.tr.FromTenant(frame)
		}
		if !bytes.Equal(frame, orig) {
			t.Fatalf("ECN tenant's segment %+v rewritten", s)
		}
	}
	st := r.tr.Stats()
	if st.PassThrough[PassECNTenant] != 1 || r.tr.Flows() != 0 || st.TranslatedSYNs != 0 {
		t.Errorf("stats %+v flows %d", st, r.tr.Flows())
	}
}

// A SYN that a vCC upstream already translated carries ECE|CWR, so a
// second translator on the path leaves the flow alone.
func TestNeverTranslatedTwice(t *testing.T) {
	clk := clock.NewSim(time.Unix(0, 0))
	first, second := New(clk, Config{}), New(clk, Config{})
	syn := build(t, seg{flags: packet.TCPFlagSYN, seq: 1})
	first.FromTenant(syn)
	orig := append([]byte(nil), syn...)
	second.FromTenant(syn)
	if !bytes.Equal(orig, syn) || second.Flows() != 0 || first.Flows() != 1 {
		t.Fatalf("second translator touched the flow (flows %d/%d)", first.Flows(), second.Flows())
	}
}

func TestPeerWithoutECN(t *testing.T) {
	r := newRig(t, Config{})
	r.send(seg{flags: packet.TCPFlagSYN, seq: 999})
	sa := r.send(seg{toTenant: true, flags: packet.TCPFlagSYN | packet.TCPFlagACK, seq: 5000, ack: 1000, window: 100})
	if sa.TCP.Flags != packet.TCPFlagSYN|packet.TCPFlagACK || r.tr.Flows() != 0 {
		t.Fatalf("SYN-ACK flags %#x, flows %d", sa.TCP.Flags, r.tr.Flows())
	}
	if p := r.send(seg{flags: packet.TCPFlagACK, seq: 1000, ack: 5001, payload: 10}); p.IPv4.ECN() != packet.ECNNotECT {
		t.Fatal("data of a flow the peer refused ECN for was marked")
	}
	if r.tr.Stats().PassThrough[PassPeerNoECN] != 1 {
		t.Error("peer_no_ecn not counted")
	}
}

// A full table: new flows pass through untranslated and are counted; idle
// flows expire and make room again.
func TestTableFullAndIdle(t *testing.T) {
	r := newRig(t, Config{MaxFlows: 3, IdleTimeout: time.Minute})
	for p := uint16(1); p <= 3; p++ {
		r.send(seg{flags: packet.TCPFlagSYN, seq: 1, port: p})
	}
	for p := uint16(4); p <= 100; p++ {
		frame := build(t, seg{flags: packet.TCPFlagSYN, seq: 1, port: p})
		orig := append([]byte(nil), frame...)
		r.tr.FromTenant(frame)
		if !bytes.Equal(orig, frame) {
			t.Fatalf("SYN of port %d translated with a full table", p)
		}
	}
	if s := r.tr.Stats(); s.PassThrough[PassTableFull] != 97 || r.tr.Flows() != 3 {
		t.Fatalf("table_full %d, flows %d", s.PassThrough[PassTableFull], r.tr.Flows())
	}
	if got := testutil.ToFloat64(r.tr.met.passedBy[PassTableFull]); got != 97 {
		t.Errorf("passthrough_total{table_full} = %v", got)
	}
	r.clk.RunFor(30 * time.Second)
	r.send(seg{flags: packet.TCPFlagSYN, seq: 1, port: 1}) // a retransmitted SYN keeps flow 1 alive
	r.clk.RunFor(45 * time.Second)
	syn := r.send(seg{flags: packet.TCPFlagSYN, seq: 1, port: 200})
	if !syn.TCP.Flags.Has(packet.TCPFlagECE) {
		t.Fatal("a new flow was refused after the idle ones expired")
	}
	if s := r.tr.Stats(); s.Evicted[EvictIdle] != 2 || r.tr.Flows() != 2 {
		t.Fatalf("idle evictions %d, flows %d; want 2 and 2", s.Evicted[EvictIdle], r.tr.Flows())
	}
}

func TestFINAndRSTCleanUp(t *testing.T) {
	r := newRig(t, Config{})
	r.handshake(-1, -1)
	r.send(seg{flags: packet.TCPFlagACK | packet.TCPFlagFIN, seq: 1000, ack: 5001})
	r.send(seg{toTenant: true, flags: packet.TCPFlagACK | packet.TCPFlagFIN, seq: 5001, ack: 1001})
	if r.tr.Flows() != 0 || r.tr.Stats().Evicted[EvictFIN] != 1 {
		t.Fatalf("flows %d after FINs both ways", r.tr.Flows())
	}
	r.handshake(-1, -1)
	r.send(seg{toTenant: true, flags: packet.TCPFlagRST, seq: 5001})
	if r.tr.Flows() != 0 || r.tr.Stats().Evicted[EvictRST] != 1 {
		t.Fatalf("flows %d after RST", r.tr.Flows())
	}
}

// The peer's CE-marked data: the tenant cannot echo it, so the vCC sets
// ECE on the tenant's ACKs until the peer's CWR.
func TestCEEchoForPeerData(t *testing.T) {
	r := newRig(t, Config{})
	r.handshake(-1, -1)
	r.send(seg{toTenant: true, flags: packet.TCPFlagACK, seq: 5001, ack: 1000, ecn: packet.ECNCE, payload: 100, window: 100})
	if p := r.send(seg{flags: packet.TCPFlagACK, seq: 1000, ack: 5101, window: 100}); !p.TCP.Flags.Has(packet.TCPFlagECE) {
		t.Fatal("tenant's ACK of CE-marked data lacks ECE")
	}
	r.send(seg{toTenant: true, flags: packet.TCPFlagACK | packet.TCPFlagCWR, seq: 5101, ack: 1000, ecn: packet.ECNECT0, payload: 100, window: 100})
	if p := r.send(seg{flags: packet.TCPFlagACK, seq: 1000, ack: 5201, window: 100}); p.TCP.Flags.Has(packet.TCPFlagECE) {
		t.Fatal("ECE echoed after the peer's CWR")
	}
}

// Random segments of random flows in both directions: never a panic, and
// every frame comes back with right checksums and only the allowed fields
// changed (checkRewrite).
func TestRandomSegmentsKeepChecksums(t *testing.T) {
	r := newRig(t, Config{MaxFlows: 8})
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		s := seg{
			toTenant: rng.IntN(2) == 0,
			flags:    packet.TCPFlags(rng.IntN(0x200)),
			seq:      rng.Uint32N(1 << 16),
			ack:      rng.Uint32N(1 << 16),
			window:   uint16(rng.Uint32()),
			ecn:      packet.ECN(rng.IntN(4)),
			payload:  rng.IntN(3) * 700,
			port:     uint16(1 + rng.IntN(12)),
		}
		if rng.IntN(4) == 0 {
			s.opts = packet.TCPOptions{HasMSS: true, MSS: uint16(rng.IntN(2000)), HasWindowScale: true, WindowScale: uint8(rng.IntN(16))}
		}
		r.send(s)
		r.clk.RunFor(time.Duration(rng.IntN(1000)) * time.Microsecond)
	}
	if r.tr.Flows() > 8 {
		t.Fatalf("%d flows in a table of 8", r.tr.Flows())
	}
}

// Short and odd frames are ignored.
func TestGarbageIgnored(t *testing.T) {
	tr := New(clock.NewSim(time.Unix(0, 0)), Config{})
	good := build(t, seg{flags: packet.TCPFlagSYN})
	for n := 0; n < len(good); n++ {
		f := append([]byte(nil), good[:n]...)
		tr.FromTenant(f)
		tr.ToTenant(f)
	}
}

func BenchmarkToTenantACK(b *testing.B) {
	t := &testing.T{}
	r := newRig(t, Config{})
	r.handshake(7, 7)
	r.data(1000, 10)
	frame := build(t, seg{toTenant: true, flags: packet.TCPFlagACK | packet.TCPFlagECE, seq: 5001, ack: 1000 + mss, window: 0xffff})
	buf := make([]byte, len(frame))
	b.ReportAllocs()
	for b.Loop() {
		copy(buf, frame)
		r.tr.ToTenant(buf)
	}
}

// A retransmission is not marked ECT (RFC 3168 §6.1.5).
func TestRetransmissionNotECT(t *testing.T) {
	r := newRig(t, Config{})
	r.handshake(-1, -1)
	r.data(1000, 2)
	if p := r.send(seg{flags: packet.TCPFlagACK, seq: 1000, ack: 5001, payload: mss}); p.IPv4.ECN() != packet.ECNNotECT {
		t.Fatalf("retransmission leaves %v, want Not-ECT", p.IPv4.ECN())
	}
}

// ReactPerWindow ignores ECE on ACKs of data sent before the last cut,
// however much time passed.
func TestReactPerWindow(t *testing.T) {
	r := newRig(t, Config{React: ReactPerWindow})
	r.handshake(-1, -1)
	r.data(1000, 10)
	r.ack(1000+mss, 0xffff, true)
	r.clk.RunFor(time.Second)
	r.ack(1000+5*mss, 0xffff, true)
	if n := r.tr.Stats().Reductions; n != 1 {
		t.Fatalf("%d reductions within the window, want 1", n)
	}
	r.data(1000+10*mss, 1)
	r.ack(1000+11*mss, 0xffff, true)
	if n := r.tr.Stats().Reductions; n != 2 {
		t.Fatalf("%d reductions after the window, want 2", n)
	}
}
