package netsim

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/internal/clock"
)

// The division-free serialisation is exactly the two divisions it
// replaces, for every rate the project uses and random ones, lengths that
// repeat (the cache hits) and change (it misses), over long chains of
// carried remainders.
func TestSerialiseMatchesDivision(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	rates := []int64{1, 7, 1_000_000, 2_000_000, 12_440_000, 100_000_000, 622_000_000, 2_500_000_000, 10_000_000_000, 8_000_000_001, 40_000_000_000}
	for range 20 {
		rates = append(rates, 1+r.Int64N(100_000_000_000))
	}
	lens := []int{1, 40, 52, 1500, 1500, 1500, 52, 9000, 65535}
	for _, rate := range rates {
		var c serCache
		rem, want := int64(0), int64(0)
		for i := range 5000 {
			n := lens[r.IntN(len(lens))]
			if i%7 == 0 {
				n = r.IntN(3) - 1 // 0 and -1: the uncached path
			}
			bits := int64(n)*tokensPerByte + want
			wq, wr := bits/rate, bits%rate
			q, nr := c.serialise(n, rem, rate)
			if q != wq || nr != wr {
				t.Fatalf("rate %d, len %d, rem %d: got (%d, %d), want (%d, %d)", rate, n, rem, q, nr, wq, wr)
			}
			rem, want = nr, wr
		}
	}
}

// On the virtual clock the link reads the time from the Sim's int64
// nanoseconds: the time.Time it gives its qdisc is exactly the Sim's
// Now(), also for a link made after the clock has moved.
func TestLinkSimTimeIsClockTime(t *testing.T) {
	s := clock.NewSim(epoch)
	s.RunFor(1234567 * time.Nanosecond)
	q := &timeProbe{t: s}
	l := mustLink(t, s, LinkConfig{Rate: 622_000_000, Delay: time.Millisecond, Qdisc: q, Deliver: func(*Packet) {}})
	if l.untimed {
		t.Fatal("a qdisc that reads the time was taken for untimed")
	}
	p := [3]Packet{{Len: 1500}, {Len: 1500}, {Len: 40}}
	for i := range p {
		l.Send(&p[i])
	}
	s.RunFor(3 * time.Hour)
	l.Send(&p[0])
	s.Run()
	if q.calls < 8 {
		t.Fatalf("only %d qdisc calls checked", q.calls)
	}
	d := mustLink(t, s, LinkConfig{Rate: 1e9, Qdisc: mustDropTail(t, 10, 0), Deliver: func(*Packet) {}})
	if !d.untimed {
		t.Fatal("DropTail is not taken for untimed")
	}
}

// timeProbe is a FIFO that checks every time it is given is the clock's.
type timeProbe struct {
	t     *clock.Sim
	q     fifo
	calls int
}

func (p *timeProbe) check(now time.Time) {
	p.calls++
	if now != p.t.Now() {
		panic("qdisc given " + now.String() + ", clock at " + p.t.Now().String())
	}
}

func (p *timeProbe) Enqueue(pk *Packet, now time.Time) Verdict {
	p.check(now)
	p.q.push(pk)
	return Queued
}
func (p *timeProbe) Dequeue(now time.Time) (*Packet, bool) {
	p.check(now)
	pk := p.q.pop()
	return pk, pk != nil
}
func (p *timeProbe) NextReady(now time.Time) (time.Time, bool) { p.check(now); return now, p.q.n > 0 }
func (p *timeProbe) Len() int                                  { return p.q.n }
func (p *timeProbe) Bytes() int                                { return p.q.bytes }
func (p *timeProbe) Stats() Stats                              { return Stats{} }
