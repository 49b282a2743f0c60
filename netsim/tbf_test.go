package netsim

import (
	"math"
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/internal/clock"
)

// Under overload a TBF behind a fast link lets its first Burst bytes go
// back to back at line rate, then settles at its configured rate: the
// long-run output rate is within 1 % of Rate.
func TestTBFRateAndBurst(t *testing.T) {
	const (
		lineRate = 1_000_000_000 // 1 Gbit/s: 1500 B take 12 µs
		rate     = 10_000_000    // 10 Mbit/s: 1500 B take 1.2 ms
		burst    = 15_000        // ten 1500-byte packets
		pkt      = 1500
		offered  = 20_000_000 // 2× overload
		dur      = 20 * time.Second
	)
	tbf, err := NewTBF(TBFConfig{Rate: rate, Burst: burst, Latency: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if want := rate/8*50/1000 + burst; tbf.Limit() != want {
		t.Errorf("limit from latency %d, want tc's rate·latency + burst = %d", tbf.Limit(), want)
	}
	s := clock.NewSim(epoch)
	rec := &recorder{clk: s}
	l := mustLink(t, s, LinkConfig{Rate: lineRate, Qdisc: tbf, Deliver: rec.deliver})
	interval := time.Duration(pkt * 8 * 1e9 / offered) // 600 µs
	n := int(dur / interval)
	every(s, 0, interval, n, func(int) { l.Send(&Packet{Len: pkt}) })
	s.Run()

	// After an idle start the first Burst bytes leave unshaped: each of
	// the first ten packets leaves one serialisation after it arrives.
	ser := time.Duration(pkt * 8 * 1e9 / lineRate)
	for i := range burst / pkt {
		if want := time.Duration(i)*interval + ser; rec.at[i] != want {
			t.Errorf("burst packet %d left at %v, want %v (no shaping delay)", i, rec.at[i], want)
		}
	}
	// Long-run rate, measured over the shaped part (from the end of the
	// burst to the last departure).
	first, last := burst/pkt, len(rec.at)-1
	bits := float64((last - first) * pkt * 8)
	got := bits / (rec.at[last] - rec.at[first]).Seconds()
	if math.Abs(got-rate)/rate > 0.01 {
		t.Errorf("shaped rate %.0f bit/s, want %d ± 1 %%", got, rate)
	}
	t.Logf("shaped rate %.1f bit/s (%.4f %% off), %d delivered, %d dropped", got, 100*(got-rate)/rate, len(rec.at), tbf.Stats().Dropped)
	// Overall: up to its last dequeue the shaper sent at most
	// burst + rate·t.
	st := tbf.Stats()
	lastOut := (rec.at[last] - ser).Seconds()
	if maxB := burst + rate/8*lastOut; float64(st.DequeuedBytes) > maxB {
		t.Errorf("sent %d B in %.6f s, more than burst + rate·t = %.0f", st.DequeuedBytes, lastOut, maxB)
	}
	if st.Dropped == 0 || st.Enqueued+st.Dropped != uint64(n) {
		t.Errorf("stats %+v: want drops under 2× overload, enqueued+dropped = %d offered", st, n)
	}
}

// With a full queue at an idle start, the k-th packet leaves exactly when
// the bucket, full at Burst and filling at Rate, has paid for k+1 packets:
// dequeue at max(k·ser, ((k+1)·Len − Burst)·8/Rate), the closed form of a
// token bucket in front of a line of serialisation time ser.
func TestTBFBurstBackToBack(t *testing.T) {
	const (
		lineRate = 1_000_000_000 // 1500 B: 12 µs
		rate     = 10_000_000    // 1500 B: 1.2 ms
		burst    = 15_000
		pkt      = 1500
		n        = 200
	)
	tbf, err := NewTBF(TBFConfig{Rate: rate, Burst: burst, Limit: n * pkt})
	if err != nil {
		t.Fatal(err)
	}
	s := clock.NewSim(epoch)
	rec := &recorder{clk: s}
	l := mustLink(t, s, LinkConfig{Rate: lineRate, Qdisc: tbf, Deliver: rec.deliver})
	for range n {
		if v := l.Send(&Packet{Len: pkt}); v != Queued {
			t.Fatalf("preload: %v", v)
		}
	}
	s.Run()
	if len(rec.at) != n {
		t.Fatalf("delivered %d, want %d", len(rec.at), n)
	}
	ser := time.Duration(pkt * 8 * 1e9 / lineRate)
	var prevOut time.Duration
	for k := range n {
		paid := time.Duration(max(0, (k+1)*pkt-burst) * 8 * 1e9 / rate)
		out := max(prevOut+ser, paid)
		if k == 0 {
			out = paid
		}
		if rec.at[k] != out+ser {
			t.Fatalf("packet %d delivered at %v, want %v", k, rec.at[k], out+ser)
		}
		prevOut = out
	}
	// The first ten went back to back at line rate; the eleventh waited.
	if rec.at[9] != 10*ser || rec.at[10]-rec.at[9] <= ser {
		t.Errorf("burst: packet 9 at %v (want %v), packet 10 %v later", rec.at[9], 10*ser, rec.at[10]-rec.at[9])
	}
}

// The gap between shaped packets is exactly Len·8/Rate once the bucket is
// empty, and NextReady says when the head may leave.
func TestTBFNextReady(t *testing.T) {
	tbf, err := NewTBF(TBFConfig{Rate: 8_000_000, Burst: 1000, Limit: 10_000}) // 1 B/µs
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		tbf.Enqueue(&Packet{Len: 1000}, epoch)
	}
	if _, ok := tbf.Dequeue(epoch); !ok {
		t.Fatal("full bucket: first packet should leave at once")
	}
	if _, ok := tbf.Dequeue(epoch); ok {
		t.Fatal("empty bucket: second packet left at once")
	}
	at, ok := tbf.NextReady(epoch)
	if want := epoch.Add(time.Millisecond); !ok || !at.Equal(want) {
		t.Fatalf("NextReady %v %v, want %v", at, ok, want)
	}
	if _, ok := tbf.Dequeue(at.Add(-time.Nanosecond)); ok {
		t.Fatal("left a nanosecond early")
	}
	if _, ok := tbf.Dequeue(at); !ok {
		t.Fatal("did not leave at NextReady")
	}
	// A packet the bucket can never pay for is dropped, not queued forever.
	if v := tbf.Enqueue(&Packet{Len: 1001}, epoch); v != Dropped {
		t.Errorf("packet over the burst: %v", v)
	}
}

func TestTBFConfigErrors(t *testing.T) {
	for _, c := range []TBFConfig{
		{Rate: 0, Burst: 1, Limit: 1},
		{Rate: 1, Burst: 0, Limit: 1},
		{Rate: 1, Burst: 1},
	} {
		if _, err := NewTBF(c); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}
