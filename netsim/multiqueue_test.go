package netsim

import (
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/internal/clock"
)

// Strict priority: queue 0 always goes first; an unknown queue id is
// dropped and counted.
func TestMultiQueueStrictPriority(t *testing.T) {
	mq, err := NewMultiQueue(mustDropTail(t, 10, 0), mustDropTail(t, 10, 0))
	if err != nil {
		t.Fatal(err)
	}
	for i, q := range []uint32{1, 1, 0, 1, 0} {
		mq.Enqueue(&Packet{Len: 100 + i, Queue: q}, epoch)
	}
	if v := mq.Enqueue(&Packet{Len: 1, Queue: 2}, epoch); v != Dropped {
		t.Errorf("queue 2 of 2: %v", v)
	}
	var order []int
	for {
		p, ok := mq.Dequeue(epoch)
		if !ok {
			break
		}
		order = append(order, p.Len)
	}
	want := []int{102, 104, 100, 101, 103}
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("order %v, want %v", order, want)
		}
	}
	if st := mq.Stats(); st.Enqueued != 5 || st.Dropped != 1 || st.Dequeued != 5 {
		t.Errorf("stats %+v", st)
	}
}

// A shaped high-priority queue waiting for tokens does not block a lower
// queue, and the link wakes for the shaped one when its tokens come.
func TestMultiQueueShapedChildOnLink(t *testing.T) {
	tbf, err := NewTBF(TBFConfig{Rate: 8_000_000, Burst: 1000, Limit: 10_000}) // 1000 B per ms
	if err != nil {
		t.Fatal(err)
	}
	mq, _ := NewMultiQueue(tbf, mustDropTail(t, 10, 0))
	s := clock.NewSim(epoch)
	rec := &recorder{clk: s}
	l := mustLink(t, s, LinkConfig{Rate: 8_000_000_000, Qdisc: mq, Deliver: rec.deliver}) // 1000 B in 1 µs
	l.Send(&Packet{Len: 1000, Queue: 0, Meta: "q0 a"})
	l.Send(&Packet{Len: 1000, Queue: 0, Meta: "q0 b"})
	l.Send(&Packet{Len: 1000, Queue: 1, Meta: "q1"})
	s.Run()
	want := []struct {
		meta string
		at   time.Duration
	}{{"q0 a", time.Microsecond}, {"q1", 2 * time.Microsecond}, {"q0 b", time.Millisecond + time.Microsecond}}
	for i, w := range want {
		if rec.pkts[i].Meta != w.meta || rec.at[i] != w.at {
			t.Errorf("delivery %d: %v at %v, want %s at %v", i, rec.pkts[i].Meta, rec.at[i], w.meta, w.at)
		}
	}
}
