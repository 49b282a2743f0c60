package netsim

import (
	"math/rand/v2"
	"testing"
)

// Property: under random arrivals and departures a DropTail never holds
// more than its limit, refuses a packet only when it would not fit, and
// its counters balance.
func TestDropTailNeverExceedsLimit(t *testing.T) {
	for seed := range uint64(50) {
		rng := rand.New(rand.NewPCG(seed, 1))
		pkts, bytes := 0, 0
		switch seed % 3 {
		case 0:
			pkts = 1 + rng.IntN(50)
		case 1:
			bytes = 1000 + rng.IntN(50_000)
		default:
			pkts, bytes = 1+rng.IntN(50), 1000+rng.IntN(50_000)
		}
		q := mustDropTail(t, pkts, bytes)
		var inQ []*Packet
		for step := range 5000 {
			if rng.IntN(100) < 60 { // arrivals outpace departures: the queue fills
				p := &Packet{Len: 40 + rng.IntN(1500)}
				fits := (pkts == 0 || q.Len() < pkts) && (bytes == 0 || q.Bytes()+p.Len <= bytes)
				v := q.Enqueue(p, epoch)
				if (v == Queued) != fits {
					t.Fatalf("seed %d step %d: %v for %d B with %d pkts / %d B held, limits %d / %d", seed, step, v, p.Len, q.Len(), q.Bytes(), pkts, bytes)
				}
				if v == Queued {
					inQ = append(inQ, p)
				}
			} else if p, ok := q.Dequeue(epoch); ok {
				if p != inQ[0] {
					t.Fatalf("seed %d step %d: not FIFO", seed, step)
				}
				inQ = inQ[1:]
			} else if len(inQ) != 0 {
				t.Fatalf("seed %d: empty dequeue with %d held", seed, len(inQ))
			}
			if (pkts > 0 && q.Len() > pkts) || (bytes > 0 && q.Bytes() > bytes) {
				t.Fatalf("seed %d step %d: %d pkts %d B over limits %d / %d", seed, step, q.Len(), q.Bytes(), pkts, bytes)
			}
			st := q.Stats()
			if st.Enqueued-st.Dequeued != uint64(q.Len()) || st.EnqueuedBytes-st.DequeuedBytes != uint64(q.Bytes()) || q.Len() != len(inQ) {
				t.Fatalf("seed %d step %d: counters %+v do not balance with %d pkts %d B", seed, step, st, q.Len(), q.Bytes())
			}
		}
		if q.Stats().Dropped == 0 {
			t.Errorf("seed %d: no drops: the queue never filled", seed)
		}
	}
}

func TestDropTailConfigErrors(t *testing.T) {
	for _, l := range [][2]int{{0, 0}, {-1, 10}, {10, -1}} {
		if _, err := NewDropTail(l[0], l[1]); err == nil {
			t.Errorf("limits %v accepted", l)
		}
	}
}
