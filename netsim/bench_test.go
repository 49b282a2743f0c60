package netsim

import (
	"fmt"
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/internal/clock"
)

// BenchmarkChain measures packet-hops per second on one core: a closed
// loop of packets through a chain of links with DropTail queues on the
// virtual clock. Each b.N is one packet crossing one link (two events: the
// transmitter finishing, the far end receiving). Packets are reused and
// the link posts its events without timer handles: nothing allocates.
func BenchmarkChain(b *testing.B) {
	for _, c := range []struct{ hops, inFlight int }{{4, 64}, {16, 256}} {
		b.Run(fmt.Sprintf("hops=%d/packets=%d", c.hops, c.inFlight), func(b *testing.B) {
			benchChain(b, c.hops, c.inFlight)
		})
	}
}

func benchChain(b *testing.B, hops, inFlight int) {
	s := clock.NewSim(epoch)
	// The loop never comes to rest until the last traversal: lift the
	// event budget meant for runaway models.
	s.SetLimits(clock.Limits{})
	links := make([]*Link, hops)
	traversals := (b.N + hops - 1) / hops
	started := 0
	var last func(p *Packet)
	for i := hops - 1; i >= 0; i-- {
		deliver := last
		if i < hops-1 {
			next := links[i+1]
			deliver = func(p *Packet) { next.Send(p) }
		}
		q, err := NewDropTail(1000, 0)
		if err != nil {
			b.Fatal(err)
		}
		if i == hops-1 {
			deliver = func(p *Packet) {
				if started < traversals {
					started++
					links[0].Send(p)
				}
			}
		}
		l, err := NewLink(s, LinkConfig{Rate: 10_000_000_000, Delay: 10 * time.Microsecond, MTU: 1500, Qdisc: q, Deliver: deliver})
		if err != nil {
			b.Fatal(err)
		}
		links[i] = l
	}
	pkts := make([]Packet, min(inFlight, traversals))
	b.ReportAllocs()
	b.ResetTimer()
	for i := range pkts {
		pkts[i].Len = 1500
		started++
		links[0].Send(&pkts[i])
	}
	s.Run()
	b.StopTimer()
	var total uint64
	for _, l := range links {
		total += l.Stats().Delivered
		if d := l.Stats().QdiscDropped; d != 0 {
			b.Fatalf("%d drops: the benchmark should be lossless", d)
		}
	}
	if total < uint64(b.N) {
		b.Fatalf("%d packet-hops, want at least %d", total, b.N)
	}
	b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "hops/s")
}

// The hot path allocates nothing: a packet crossing an idle link costs one
// event, which the link posts on the virtual clock without a timer handle.
func TestLinkHopAllocations(t *testing.T) {
	s := clock.NewSim(epoch)
	q := mustDropTail(t, 100, 0)
	delivered := 0
	l := mustLink(t, s, LinkConfig{Rate: 1e9, Delay: time.Millisecond, Qdisc: q, Deliver: func(*Packet) { delivered++ }})
	p := &Packet{Len: 1500}
	for range 100 { // grow the rings
		l.Send(p)
	}
	s.Run()
	allocs := testing.AllocsPerRun(1000, func() {
		l.Send(p)
		s.Run()
	})
	if allocs != 0 {
		t.Errorf("%.1f allocations per hop, want 0", allocs)
	}
	if delivered != 100+1001 {
		t.Errorf("delivered %d, want %d", delivered, 100+1001)
	}
}
