package agent

import "testing"

func TestRingBoundedFIFO(t *testing.T) {
	r := newRing[int](5)
	next, want := 0, 0
	// Interleave pushes and pops so the ring wraps and grows.
	for round := range 20 {
		for range round%4 + 2 {
			if r.push(next) {
				next++
			} else if r.len() != 5 {
				t.Fatalf("push refused at length %d", r.len())
			}
		}
		if r.len() > 5 {
			t.Fatalf("length %d over the limit", r.len())
		}
		for range round%3 + 1 {
			if r.len() == 0 {
				break
			}
			if got := r.pop(); got != want {
				t.Fatalf("popped %d, want %d", got, want)
			}
			want++
		}
	}
	r.drain(func(v int) {
		if v != want {
			t.Fatalf("drained %d, want %d", v, want)
		}
		want++
	})
	if r.len() != 0 || want != next {
		t.Fatalf("after drain len %d, consumed %d of %d", r.len(), want, next)
	}
	if cap(r.buf) > 5 {
		t.Errorf("buffer grew to %d beyond the limit 5", cap(r.buf))
	}
}
