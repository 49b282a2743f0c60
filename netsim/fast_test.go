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

// slowDropTail is a DropTail the link does not recognise as one (a
// different type), so it takes the general path through the Qdisc
// interface: Enqueue, kick, pull, Dequeue, with no shortcut.
type slowDropTail struct{ *DropTail }

// An idle line with an empty DropTail puts a packet on the wire without
// queueing it (Send's shortcut). That must be invisible: on random
// traffic with ties, bursts, idle gaps and loss, both byte and packet
// limits, the shortcut link and one forced through the queue deliver the
// same packets at the same instants in the same order, drop the same
// ones, and end with the same link and qdisc counters (a byte limit below
// the largest packet makes even an empty queue refuse some).
func TestLinkIdleShortcutMatchesQueuePath(t *testing.T) {
	for _, lim := range []struct{ pkts, bytes int }{{8, 0}, {0, 6000}, {5, 4000}, {0, 1000}} {
		type event struct {
			id   int
			at   time.Duration
			kind string
		}
		run := func(fast bool, seed uint64) ([]event, LinkStats, Stats) {
			sim := clock.NewSim(epoch)
			dt := mustDropTail(t, lim.pkts, lim.bytes)
			var q Qdisc = dt
			if !fast {
				q = slowDropTail{dt}
			}
			loss, err := NewBernoulli(0.05, seed)
			if err != nil {
				t.Fatal(err)
			}
			var log []event
			ids := map[*Packet]int{}
			note := func(p *Packet, kind string) {
				log = append(log, event{ids[p], sim.Now().Sub(epoch), kind})
			}
			l := mustLink(t, sim, LinkConfig{Rate: 100_000_000, Delay: 30 * time.Microsecond, Qdisc: q, Loss: loss,
				Deliver: func(p *Packet) { note(p, "deliver") },
				Drop:    func(p *Packet, why DropReason) { note(p, "drop "+why.String()) }})
			if got := l.dt != nil; got != fast {
				t.Fatalf("shortcut in use %v, want %v", got, fast)
			}
			rng := rand.New(rand.NewPCG(seed, 99))
			at := time.Duration(0)
			for i := range 20_000 {
				switch r := rng.IntN(10); {
				case r < 3: // same instant as the one before: a tie
				case r < 9:
					at += time.Duration(rng.IntN(200_000)) // up to ~2.5 packets at 100 Mbit/s
				default:
					at += time.Duration(rng.IntN(5_000_000)) // an idle gap
				}
				p := &Packet{Len: 40 + rng.IntN(1461)}
				ids[p] = i
				sim.At(epoch.Add(at), func() {
					if l.Send(p) == Dropped {
						note(p, "refused")
					}
				})
			}
			sim.Run()
			return log, l.Stats(), dt.Stats()
		}
		seeds := uint64(3)
		if testing.Short() {
			seeds = 1
		}
		for seed := uint64(1); seed <= seeds; seed++ {
			fl, fs, fq := run(true, seed)
			sl, ss, sq := run(false, seed)
			if fs != ss || fq != sq {
				t.Fatalf("limits %+v seed %d: counters differ:\nshortcut %+v %+v\nqueue    %+v %+v", lim, seed, fs, fq, ss, sq)
			}
			if len(fl) != len(sl) {
				t.Fatalf("limits %+v seed %d: %d events with the shortcut, %d without", lim, seed, len(fl), len(sl))
			}
			for i := range fl {
				if fl[i] != sl[i] {
					t.Fatalf("limits %+v seed %d: event %d: %+v with the shortcut, %+v without", lim, seed, i, fl[i], sl[i])
				}
			}
			if fq.Dropped == 0 || fs.Lost == 0 || fs.Delivered == 0 {
				t.Fatalf("limits %+v seed %d: traffic too tame to compare (%+v, %+v)", lim, seed, fs, fq)
			}
		}
	}
}
