package clock

import "math/bits"

// entry is one scheduled event. It is stored by value so that the heap's
// comparisons touch one contiguous array, not scattered pointers. An
// AfterFunc event has a timer (its handle, which holds the func so Stop
// can drop it); a Post event has only the func.
type entry struct {
	at  int64  // virtual nanoseconds since the Sim's start
	seq uint64 // insertion order: the deterministic tie-break
	f   func() // Post events
	t   *simTimer
}

func (e *entry) stopped() bool { return e.t != nil && e.t.state == timerStopped }

// less is (at, seq) < (b.at, b.seq) as one 128-bit unsigned compare: a
// subtract-with-borrow chain, no branch to mispredict (the heap's compares
// are close to coin flips). at is never negative (the clock starts at 0
// and saturates at MaxInt64), so its unsigned order is its order.
func (a *entry) less(b *entry) bool { return a.lessBit(b) != 0 }

// lessBit is less as 0 or 1, for index arithmetic without branches.
func (a *entry) lessBit(b *entry) int {
	_, borrow := bits.Sub64(a.seq, b.seq, 0)
	_, borrow = bits.Sub64(uint64(a.at), uint64(b.at), borrow)
	return int(borrow)
}

// minChild is the index of the smallest of h[first:last]. A full set of
// four is a branch-free tournament (three compares whose results become
// indices), the common case inside the heap.
func (h eventHeap) minChild(first, last int) int {
	if last-first == arity {
		c := h[first : first+arity : first+arity]
		a := c[1].lessBit(&c[0])
		b := 2 + c[3].lessBit(&c[2])
		return first + a + (b-a)*c[b].lessBit(&c[a])
	}
	best := first
	for c := first + 1; c < last; c++ {
		if h[c].less(&h[best]) {
			best = c
		}
	}
	return best
}

// eventHeap is a 4-ary min-heap ordered by (at, seq): the event queue's
// far future (events due after its calendar, see eventQueue), and the
// order lower and adapt rebuild the calendar in. A 4-ary heap is
// shallower than a binary one and its four children share a cache line or
// two, and it needs no interface calls.
type eventHeap []entry

const arity = 4

func (h *eventHeap) push(e entry) {
	*h = append(*h, e)
	h.up(len(*h) - 1)
}

func (h *eventHeap) pop() entry {
	old := *h
	n := len(old) - 1
	top := old[0]
	old[0] = old[n]
	old[n] = entry{} // drop the pointer so stopped/fired timers can be freed
	*h = old[:n]
	if n > 0 {
		h.downLate(0)
	}
	return top
}

func (h eventHeap) up(i int) {
	e := h[i]
	for i > 0 {
		p := (i - 1) / arity
		if !e.less(&h[p]) {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = e
}

// down restores the heap below i after h[i] was replaced (init); it stops
// as soon as the entry is no later than its smallest child.
func (h eventHeap) down(i int) {
	n := len(h)
	e := h[i]
	for {
		first := i*arity + 1
		if first >= n {
			break
		}
		var best int
		if first+arity <= n { // minChild's tournament, written out: this is the hottest loop
			c := h[first : first+arity : first+arity]
			x := c[1].lessBit(&c[0])
			y := 2 + c[3].lessBit(&c[2])
			// &3 is a no-op on x in {0, 1} and y in {2, 3}; it lets the
			// compiler drop the bounds checks on c's length of 4.
			k := x + (y-x)*c[y&3].lessBit(&c[x&3])
			if !c[k&3].less(&e) {
				break
			}
			h[i] = c[k&3]
			i = first + k
			continue
		}
		best = h.minChild(first, n)
		if !h[best].less(&e) {
			break
		}
		h[i] = h[best]
		i = best
	}
	h[i] = e
}

// downLate restores the heap below i after h[i] was replaced. It is Floyd's
// variant: the hole walks down to a leaf along the smallest children
// (arity-1 compares per level instead of arity), then the entry sifts up
// from there. The replaced entry is almost always a late one (a pop moves
// the last leaf to the root), so it belongs near the bottom and the sift
// up is short.
func (h eventHeap) downLate(i int) {
	n := len(h)
	e := h[i]
	top := i
	for {
		first := i*arity + 1
		if first >= n {
			break
		}
		best := h.minChild(first, min(first+arity, n))
		h[i] = h[best]
		i = best
	}
	for i > top {
		p := (i - 1) / arity
		if !e.less(&h[p]) {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = e
}

func (h eventHeap) init() {
	if len(h) < 2 {
		return
	}
	for i := (len(h) - 2) / arity; i >= 0; i-- {
		h.down(i)
	}
}
