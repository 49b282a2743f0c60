package netsim

import (
	"math/rand/v2"
	"testing"
	"time"
)

// A constructed arrival pattern with the drops worked out by hand: burst
// 3000 B, rate 8000 bit/s (1000 B/s), 1000-byte packets.
func TestPolicerConstructed(t *testing.T) {
	pl, err := NewPolicer(8000, 3000)
	if err != nil {
		t.Fatal(err)
	}
	at := func(d time.Duration) time.Time { return epoch.Add(d) }
	var admitted []bool
	send := func(d time.Duration) { admitted = append(admitted, pl.Admit(&Packet{Len: 1000}, at(d))) }
	// t=0: five at once. The full bucket pays for three; two exceed it.
	for range 5 {
		send(0)
	}
	// One a second for ten seconds: each finds exactly 1000 B refilled.
	for i := 1; i <= 10; i++ {
		send(time.Duration(i) * time.Second)
	}
	// Two a second for ten seconds: the first of each pair passes.
	for i := 11; i <= 20; i++ {
		send(time.Duration(i) * time.Second)
		send(time.Duration(i) * time.Second)
	}
	// 999 ms later: 999 B refilled, one byte short.
	send(20*time.Second + 999*time.Millisecond)
	// Idle for a minute: the bucket refills to the burst, no further.
	for range 4 {
		send(80 * time.Second)
	}
	want := []bool{true, true, true, false, false}
	for range 10 {
		want = append(want, true)
	}
	for range 10 {
		want = append(want, true, false)
	}
	want = append(want, false, true, true, true, false)
	if len(admitted) != len(want) {
		t.Fatalf("%d decisions, want %d", len(admitted), len(want))
	}
	for i := range want {
		if admitted[i] != want[i] {
			t.Errorf("packet %d: admitted %v, want %v", i, admitted[i], want[i])
		}
	}
	st := pl.Stats()
	if st.EnqueuedBytes != 26_000 || st.DroppedBytes != 14_000 {
		t.Errorf("admitted %d B dropped %d B, want 26000 and 14000", st.EnqueuedBytes, st.DroppedBytes)
	}
}

// Against the closed form of a token bucket: with A(s, t) the bytes
// admitted from s up to (not including) t, the tokens just before an
// arrival at t are min(burst, min over every earlier arrival s of
// burst + rate·(t − s) − A(s, t)). A packet is admitted iff that covers
// it. Random arrivals, exact integer arithmetic, every decision checked.
func TestPolicerMatchesClosedForm(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	const rate, burst = 1_000_000, 5000 // 125 B/ms
	pl, err := NewPolicer(rate, burst)
	if err != nil {
		t.Fatal(err)
	}
	type arr struct {
		at  int64 // ns
		len int
		ok  bool
	}
	var arrs []arr
	now := int64(0)
	for range 3000 {
		if rng.IntN(10) != 0 { // one in ten arrives at the same instant as the last
			now += rng.Int64N(int64(22 * time.Millisecond))
		}
		n := 40 + rng.IntN(2500)
		ok := pl.Admit(&Packet{Len: n}, epoch.Add(time.Duration(now)))
		arrs = append(arrs, arr{now, n, ok})
	}
	nDrop := 0
	for i, a := range arrs {
		// Tokens in nanobits. s = t itself: the bucket never holds more
		// than burst. The bucket is full at the first arrival, so s =
		// arrs[0].at covers the start.
		tok := int64(burst) * tokensPerByte
		var adm int64
		for j := i - 1; j >= 0; j-- {
			if arrs[j].ok {
				adm += int64(arrs[j].len) * tokensPerByte
			}
			// s = arrs[j].at, A(s, t) includes packet j and later.
			tok = min(tok, int64(burst)*tokensPerByte+rate*(a.at-arrs[j].at)-adm)
		}
		want := tok >= int64(a.len)*tokensPerByte
		if a.ok != want {
			t.Fatalf("arrival %d (%d B at %v): admitted %v, closed form says %v (tokens %d B)", i, a.len, time.Duration(a.at), a.ok, want, tok/tokensPerByte)
		}
		if !a.ok {
			nDrop++
		}
	}
	if nDrop == 0 || nDrop == len(arrs) {
		t.Fatalf("%d of %d dropped: the pattern does not exercise the policer", nDrop, len(arrs))
	}
	t.Logf("%d of %d dropped", nDrop, len(arrs))
}

// Policed puts the policer in front of a queue and counts its drops.
func TestPoliced(t *testing.T) {
	pl, _ := NewPolicer(8000, 1000)
	q := &Policed{Policer: pl, Child: mustDropTail(t, 10, 0)}
	if v := q.Enqueue(&Packet{Len: 1000}, epoch); v != Queued {
		t.Fatalf("first: %v", v)
	}
	if v := q.Enqueue(&Packet{Len: 1000}, epoch); v != Dropped {
		t.Fatalf("second: %v", v)
	}
	if st := q.Stats(); st.Enqueued != 1 || st.Dropped != 1 || q.Len() != 1 {
		t.Errorf("stats %+v len %d", st, q.Len())
	}
}
