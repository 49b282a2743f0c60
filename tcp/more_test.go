package tcp

import (
	"math"
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/packet"
	"github.com/pseudocong/pseudocong/tcp/cc"
)

// TestPacketRoundTrip: a segment with every option survives conversion
// to a frame's layers, encoding, decoding and conversion back.
func TestPacketRoundTrip(t *testing.T) {
	s := Segment{SrcPort: 1234, DstPort: 80, Seq: 0xfffffff0, Ack: 77, Flags: FlagACK | FlagECE | FlagCWR,
		Window: 4321, MSS: 1460, WScale: 7, SACKPermitted: true, HasTS: true, TSVal: 9, TSEcr: 8,
		NumSACK: 2, SACK: [4]SACKBlock{{Left: 100, Right: 200}, {Left: 300, Right: 400}}, Len: 10, ECN: ECNCE}
	var p packet.Packet
	if err := ToPacket(&s, [4]byte{10, 0, 0, 1}, [4]byte{10, 0, 0, 2}, nil, &p); err != nil {
		t.Fatal(err)
	}
	p.Layers |= packet.LayerEthernet
	p.Ethernet.Src, p.Ethernet.Dst = [6]byte{2, 0, 0, 0, 0, 1}, [6]byte{2, 0, 0, 0, 0, 2}
	frame, err := p.AppendBinary(nil)
	if err != nil {
		t.Fatal(err)
	}
	var q packet.Packet
	if err := q.DecodeFromBytes(frame); err != nil {
		t.Fatal(err)
	}
	if err := q.VerifyChecksums(); err != nil {
		t.Fatal(err)
	}
	var back Segment
	if err := FromPacket(&q, &back); err != nil {
		t.Fatal(err)
	}
	if back != s {
		t.Errorf("round trip:\n got %v\nwant %v", &back, &s)
	}
	if got, want := len(frame)-14, s.WireLen(); got != want {
		t.Errorf("IP datagram %d bytes, WireLen says %d", got, want)
	}
}

// TestApps: a fixed transfer and a one-packet flow finish; an on/off
// source finishes its objects with think times between them.
func TestApps(t *testing.T) {
	p := newPipe(t, testConfig(), testConfig(), 5*time.Millisecond)
	p.rate = 10_000_000
	var done time.Time
	if err := OnePacket(p.a, 100, func(at time.Time) { done = at }); err != nil {
		t.Fatal(err)
	}
	if OnePacket(p.a, 5000, nil) == nil {
		t.Error("a 5000-byte one-packet flow was accepted")
	}
	p.start()
	p.sim.RunUntil(epoch.Add(time.Second))
	if done.IsZero() || p.b.Stats().BytesReceived != 100 {
		t.Fatalf("one-packet flow: done %v, received %d", done, p.b.Stats().BytesReceived)
	}

	q := newPipe(t, testConfig(), testConfig(), 5*time.Millisecond)
	q.rate = 10_000_000
	recs := OnOff(q.a, OnOffConfig{Size: Pareto{Xm: 2000, Alpha: 1.2, Max: 200_000}, Think: Exponential{Mean: 0.5}, Objects: 5, Seed: 1})
	q.start()
	q.sim.RunUntil(epoch.Add(60 * time.Second))
	if len(*recs) != 5 {
		t.Fatalf("%d objects done, want 5", len(*recs))
	}
	var total int
	for i, r := range *recs {
		total += r.Size
		if r.Size < 2000 || !r.End.After(r.Start) {
			t.Errorf("object %d: %+v", i, r)
		}
		if i > 0 && r.Start.Before((*recs)[i-1].End) {
			t.Errorf("object %d started before object %d was acknowledged", i, i-1)
		}
	}
	if q.b.Stats().BytesReceived != uint64(total) {
		t.Errorf("received %d, objects total %d", q.b.Stats().BytesReceived, total)
	}
}

// recorder is a Controller that keeps a fixed window and pacing rate and
// records the rate samples it is given.
type recorder struct {
	cc.Base
	cwnd    uint32
	pace    float64
	samples []cc.RateSample
}

func (r *recorder) Name() string               { return "recorder" }
func (r *recorder) Init(c *cc.Conn)            { c.Cwnd, c.PacingRate = r.cwnd, r.pace }
func (r *recorder) SSThresh(c *cc.Conn) uint32 { return c.Cwnd }
func (r *recorder) CongAvoid(*cc.Conn, uint32) {}
func (r *recorder) Undo(c *cc.Conn) uint32     { return c.Cwnd }
func (r *recorder) Control(c *cc.Conn, rs *cc.RateSample) {
	r.samples = append(r.samples, *rs)
	c.Cwnd, c.PacingRate = r.cwnd, r.pace
}

// TestDeliveryRateSample: with a window well above the path's BDP, the
// tcp_rate.c samples measure the bottleneck's rate.
func TestDeliveryRateSample(t *testing.T) {
	rec := &recorder{cwnd: 100}
	ca := testConfig()
	ca.Algorithm = rec
	p := newPipe(t, ca, testConfig(), 10*time.Millisecond)
	p.rate = 10_000_000
	p.transfer(3_000_000, 10*time.Second)
	var n int
	var sum float64
	for _, s := range rec.samples[len(rec.samples)/2:] {
		if s.Delivered > 0 && s.Interval > 0 && !s.AppLimited {
			bps := float64(s.Delivered) * float64(p.a.MSS()) * 8 / s.Interval.Seconds()
			sum += bps
			n++
		}
	}
	if n == 0 {
		t.Fatal("no usable sample")
	}
	// Payload rate of a 10 Mbit/s wire carrying 1448-byte payloads in
	// 1500-byte datagrams.
	want := 10e6 * float64(p.a.MSS()) / float64(p.a.MSS()+52)
	if got := sum / float64(n); math.Abs(got-want)/want > 0.03 {
		t.Errorf("mean delivery rate %.3f Mbit/s, want %.3f ± 3%%", got/1e6, want/1e6)
	}
}

// TestPacing: a pacing rate spaces segments by their length over the rate.
func TestPacing(t *testing.T) {
	rate := 125_000.0 // bytes/s = 1 Mbit/s, on an unlimited path
	rec := &recorder{cwnd: 50, pace: rate}
	ca := testConfig()
	ca.Algorithm = rec
	p := newPipe(t, ca, testConfig(), 10*time.Millisecond)
	p.transfer(100*1448, 10*time.Second)
	var prev sent
	n := 0
	for _, s := range p.toB {
		if s.seg.Len == 0 {
			continue
		}
		if n > 0 {
			want := time.Duration(float64(prev.seg.WireLen()-20) * 1e9 / rate)
			if gap := s.at - prev.at; gap < want-time.Microsecond {
				t.Errorf("segment %d sent %v after the previous, want ≥ %v", n, gap, want)
			}
		}
		prev = s
		n++
	}
}
