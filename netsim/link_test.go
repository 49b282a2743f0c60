package netsim

import (
	"math"
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/internal/clock"
)

// Back-to-back packets leave exactly Len·8/Rate apart and arrive the
// propagation delay after their last bit left.
func TestLinkRateAndDelay(t *testing.T) {
	s := clock.NewSim(epoch)
	rec := &recorder{clk: s}
	const rate, delay = 1_000_000_000, 3 * time.Millisecond // 1 Gbit/s: 1500 B = 12 µs
	l := mustLink(t, s, LinkConfig{Rate: rate, Delay: delay, Qdisc: mustDropTail(t, 100, 0), Deliver: rec.deliver})
	sizes := []int{1500, 64, 1500, 1000, 9000, 40}
	for _, n := range sizes {
		if v := l.Send(&Packet{Len: n}); v != Queued {
			t.Fatalf("send %d B: %v", n, v)
		}
	}
	s.Run()
	if len(rec.at) != len(sizes) {
		t.Fatalf("delivered %d packets, want %d", len(rec.at), len(sizes))
	}
	var done time.Duration
	for i, n := range sizes {
		done += time.Duration(n * 8 * 1e9 / rate) // every size here is a whole number of ns
		if want := done + delay; rec.at[i] != want {
			t.Errorf("packet %d (%d B) arrived at %v, want %v", i, n, rec.at[i], want)
		}
		if rec.pkts[i].Len != n {
			t.Errorf("packet %d out of order: %d B, want %d", i, rec.pkts[i].Len, n)
		}
	}
	st := l.Stats()
	if st.Sent != uint64(len(sizes)) || st.Delivered != st.Sent || st.Lost != 0 || l.InFlight() != 0 || l.Busy() {
		t.Errorf("stats %+v, in flight %d, busy %v", st, l.InFlight(), l.Busy())
	}
}

// A rate that does not divide the bits still averages out exactly: the
// link carries the sub-nanosecond remainder from packet to packet.
func TestLinkLongRunRateExact(t *testing.T) {
	s := clock.NewSim(epoch)
	rec := &recorder{clk: s}
	const rate = 7_000_000 // 1000 B = 1142857.142… ns
	l := mustLink(t, s, LinkConfig{Rate: rate, Qdisc: mustDropTail(t, 10_000, 0), Deliver: rec.deliver})
	const n = 7000
	for range n {
		l.Send(&Packet{Len: 1000})
	}
	s.Run()
	want := time.Duration(n * 1000 * 8 * 1e9 / rate) // 8 s exactly
	if got := rec.at[n-1]; got != want {
		t.Errorf("last of %d packets arrived at %v, want exactly %v", n, got, want)
	}
}

// Packets over the MTU are dropped and counted, and handed to Drop.
func TestLinkMTU(t *testing.T) {
	s := clock.NewSim(epoch)
	rec := &recorder{clk: s}
	var dropped []DropReason
	l := mustLink(t, s, LinkConfig{Rate: 1e9, MTU: 1500, Qdisc: mustDropTail(t, 10, 0), Deliver: rec.deliver,
		Drop: func(_ *Packet, why DropReason) { dropped = append(dropped, why) }})
	for _, n := range []int{1500, 1501, 9000, 64} {
		l.Send(&Packet{Len: n})
	}
	s.Run()
	st := l.Stats()
	if st.Oversized != 2 || st.OversizedBytes != 10501 || st.Delivered != 2 || len(dropped) != 2 || dropped[0] != DropOversized {
		t.Errorf("stats %+v, drops %v: want 2 oversized (10501 B), 2 delivered", st, dropped)
	}
}

// The qdisc's refusals are the link's drops too.
func TestLinkQdiscDrops(t *testing.T) {
	s := clock.NewSim(epoch)
	rec := &recorder{clk: s}
	l := mustLink(t, s, LinkConfig{Rate: 1e6, Qdisc: mustDropTail(t, 3, 0), Deliver: rec.deliver})
	for range 10 {
		l.Send(&Packet{Len: 100})
	}
	s.Run()
	// One packet goes straight onto the wire, three wait; six are refused.
	if st := l.Stats(); st.QdiscDropped != 6 || st.Delivered != 4 {
		t.Errorf("stats %+v: want 6 qdisc drops, 4 delivered", st)
	}
}

// The Gilbert–Elliott channel's long-run loss on a link is its stationary
// loss (R·LossGood + P·LossBad)/(P+R).
func TestLinkGilbertElliottStationaryLoss(t *testing.T) {
	if testing.Short() {
		t.Skip("long single-goroutine simulation: the race phase (-short) leaves it to the integration phase")
	}
	for _, c := range []GilbertElliottConfig{
		{P: 0.01, R: 0.3, LossGood: 0, LossBad: 1, Seed: 1},       // Gilbert: bursts of mean 3.3
		{P: 0.05, R: 0.2, LossGood: 0.001, LossBad: 0.5, Seed: 2}, // Elliott
		{P: 0.3, R: 0.3, LossGood: 0.1, LossBad: 0.9, Seed: 3},
	} {
		ge, err := NewGilbertElliott(c)
		if err != nil {
			t.Fatal(err)
		}
		s := clock.NewSim(epoch)
		l := mustLink(t, s, LinkConfig{Rate: 1e9, Delay: time.Millisecond, Qdisc: mustDropTail(t, 1000, 0), Loss: ge, Deliver: func(*Packet) {}})
		const n = 400_000
		p := &Packet{Len: 100} // one descriptor, sent again and again
		for range n / 1000 {
			for range 1000 {
				l.Send(p)
			}
			s.Run()
		}
		st := l.Stats()
		got := float64(st.Lost) / float64(st.Sent)
		want := c.StationaryLoss()
		// Bursty losses are correlated: the variance of the loss count
		// is inflated by about (1+ρ)/(1−ρ), ρ = 1 − P − R the chain's
		// memory. Allow 5 such standard deviations.
		rho := 1 - c.P - c.R
		sd := math.Sqrt(want*(1-want)/n*(1+rho)/(1-rho)) + 1e-9
		if math.Abs(got-want) > 5*sd || st.Sent != n {
			t.Errorf("%+v: loss %.5f over %d sent, want %.5f ± %.5f", c, got, st.Sent, want, 5*sd)
		}
		t.Logf("%+v: loss %.5f, stationary %.5f", c, got, want)
	}
}

func TestBernoulliLoss(t *testing.T) {
	b, err := NewBernoulli(0.1, 7)
	if err != nil {
		t.Fatal(err)
	}
	const n = 200_000
	lost := 0
	for range n {
		if b.Lose(nil) {
			lost++
		}
	}
	sd := math.Sqrt(0.1 * 0.9 / n)
	if got := float64(lost) / n; math.Abs(got-0.1) > 5*sd {
		t.Errorf("loss %.5f, want 0.1 ± %.5f", got, 5*sd)
	}
	if _, err := NewBernoulli(1.5, 0); err == nil {
		t.Error("loss 1.5 accepted")
	}
}

func TestLinkConfigErrors(t *testing.T) {
	s := clock.NewSim(epoch)
	q := mustDropTail(t, 1, 0)
	d := func(*Packet) {}
	for _, c := range []LinkConfig{
		{Rate: 0, Qdisc: q, Deliver: d},
		{Rate: 1, Delay: -1, Qdisc: q, Deliver: d},
		{Rate: 1, Deliver: d},
		{Rate: 1, Qdisc: q},
	} {
		if _, err := NewLink(s, c); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}

// A Deliver that sends on the same link (a loop) while older packets are
// still on the wire must not delay them: the delivery timer stays armed
// for the wire's head, not for the packet just sent.
func TestLinkDeliverSendsOnSameLink(t *testing.T) {
	s := clock.NewSim(epoch)
	rec := &recorder{clk: s}
	var l *Link
	looped := false
	l = mustLink(t, s, LinkConfig{Rate: 8_000_000_000, Delay: 10 * time.Microsecond, Qdisc: mustDropTail(t, 10, 0), // 1000 B: 1 µs
		Deliver: func(p *Packet) {
			rec.deliver(p)
			if !looped {
				looped = true
				l.Send(&Packet{Len: 1000, Meta: "c"})
			}
		}})
	l.Send(&Packet{Len: 1000, Meta: "a"})
	l.Send(&Packet{Len: 1000, Meta: "b"})
	s.Run()
	want := []struct {
		meta string
		at   time.Duration
	}{{"a", 11 * time.Microsecond}, {"b", 12 * time.Microsecond}, {"c", 22 * time.Microsecond}}
	if len(rec.pkts) != len(want) {
		t.Fatalf("%d deliveries, want %d", len(rec.pkts), len(want))
	}
	for i, w := range want {
		if rec.pkts[i].Meta != w.meta || rec.at[i] != w.at {
			t.Errorf("delivery %d: %v at %v, want %s at %v", i, rec.pkts[i].Meta, rec.at[i], w.meta, w.at)
		}
	}
}

// A link with a Handoff gives each packet away as it starts, with the time
// its last bit reaches the far end, and delivers nothing itself; the
// qdisc still paces the starts.
func TestLinkHandoff(t *testing.T) {
	s := clock.NewSim(epoch)
	const rate, delay = 1_000_000_000, 3 * time.Millisecond
	type handed struct {
		n          int
		start, arr time.Duration
	}
	var got []handed
	l := mustLink(t, s, LinkConfig{Rate: rate, Delay: delay, Qdisc: mustDropTail(t, 100, 0),
		Handoff: func(p *Packet, at time.Time) { got = append(got, handed{p.Len, s.Now().Sub(epoch), at.Sub(epoch)}) }})
	sizes := []int{1500, 64, 1500}
	for _, n := range sizes {
		if v := l.Send(&Packet{Len: n}); v != Queued {
			t.Fatalf("send %d B: %v", n, v)
		}
	}
	s.Run()
	if len(got) != len(sizes) {
		t.Fatalf("handed off %d packets, want %d", len(got), len(sizes))
	}
	var start time.Duration
	for i, n := range sizes {
		ser := time.Duration(n * 8 * 1e9 / rate)
		if got[i].n != n || got[i].start != start || got[i].arr != start+ser+delay {
			t.Errorf("packet %d: %+v, want %d B started at %v, arriving at %v", i, got[i], n, start, start+ser+delay)
		}
		start += ser
	}
	if st := l.Stats(); st.Sent != 3 || st.Delivered != 0 || l.InFlight() != 0 {
		t.Errorf("stats %+v, in flight %d: want 3 sent, none delivered or in flight", st, l.InFlight())
	}
	if _, err := NewLink(s, LinkConfig{Rate: rate, Qdisc: mustDropTail(t, 1, 0)}); err == nil {
		t.Error("a link with neither Deliver nor Handoff was made")
	}
}
