package netsim

import (
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/internal/clock"
)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// recorder is a link's far end: it keeps what arrived and when.
type recorder struct {
	clk  clock.Clock
	pkts []*Packet
	at   []time.Duration // since epoch
}

func (r *recorder) deliver(p *Packet) {
	r.pkts = append(r.pkts, p)
	r.at = append(r.at, r.clk.Now().Sub(epoch))
}

func mustLink(t testing.TB, clk clock.Clock, c LinkConfig) *Link {
	t.Helper()
	l, err := NewLink(clk, c)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func mustDropTail(t testing.TB, pkts, bytes int) *DropTail {
	t.Helper()
	q, err := NewDropTail(pkts, bytes)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// every calls f n times on the virtual clock, first at start, then every
// interval: a constant-rate source.
func every(s *clock.Sim, start, interval time.Duration, n int, f func(i int)) {
	for i := range n {
		s.At(epoch.Add(start+time.Duration(i)*interval), func() { f(i) })
	}
}
