package tcam

import (
	"fmt"
	"sort"
)

// GapK returns the gap-k layout: entries in rank order (as highest-first,
// so the earlier rule wins ties) with free slots spread among them so that
// an insert rarely has to shift more than k entries.
//
// A new entry goes into the hole between its neighbours in rank order if
// there is one, next to the neighbour inserted last and leaving a free slot
// after every k entries in a row (see holeSlot). Otherwise the run between it and the nearest free slot, on
// whichever side is nearer, shifts one slot, as long as that is at most k
// entries. When it is not, the region around the insert point has filled:
// the layout rebalances the smallest window around the insert point (2(k+1)
// slots, doubling) that has room for one free slot every k entries,
// spreading the window's entries and the new one evenly over it. A
// rebalance moves each window entry at most once: entries moving down go
// bottom up, those moving up top down, and the copy each leaves behind is
// invalidated unless the next move overwrites it, so every intermediate
// state answers lookups as the old table (see the doc comment of
// rebalance). Near a full table, when no window has that room, the nearest
// shift is made whatever its length.
func GapK(k int) Layout { return gapLayout{k: k} }

type gapLayout struct{ k int }

func (l gapLayout) Name() string       { return fmt.Sprintf("gap-%d", l.k) }
func (l gapLayout) TieBreak() TieBreak { return LowerIDWins }

func (l gapLayout) place(t *TCAM, e Entry, build bool) (placement, error) {
	k := t.outrankedBy(&e)
	a, b := t.slotAtRank(k-1), t.slotAtRank(k)
	if b-a > 1 {
		return placement{slot: l.holeSlot(t, k, a, b)}, nil
	}
	f, okDown := t.freeAfter(a, k)
	g, okUp := t.freeBefore(b, k-1)
	down, up := f-b, a-g
	useDown := okDown && (!okUp || down <= up)
	nearest := up
	if useDown {
		nearest = down
	}
	if !okDown && !okUp {
		return placement{}, ErrFull
	}
	if nearest > l.k {
		if p, ok := l.rebalance(t, e, k, b); ok {
			return p, nil
		}
	}
	if useDown {
		p := placement{slot: b, count: f - b}
		if build {
			p.moves = t.moveBuf[:0]
			for s := f - 1; s >= b; s-- {
				p.moves = append(p.moves, move{From: s, To: s + 1})
			}
			t.moveBuf = p.moves
		}
		return p, nil
	}
	p := placement{slot: a, count: a - g}
	if build {
		p.moves = t.moveBuf[:0]
		for s := g + 1; s <= a; s++ {
			p.moves = append(p.moves, move{From: s, To: s - 1})
		}
		t.moveBuf = p.moves
	}
	return p, nil
}

// holeSlot picks the slot in the hole (a, b) between the new entry's
// neighbours in rank order. It goes next to the neighbour inserted last
// (the higher ID), since the next insert of a run of ascending or
// descending priorities lands on the same side: after a, as highest-first
// does, or before b, as lowest-first does, so either run is free while the
// hole lasts. If the entries it would join already form a run of k
// without a gap, it leaves one free slot (the "gap every k entries"). With
// no neighbour it takes the middle of the table.
func (l gapLayout) holeSlot(t *TCAM, k, a, b int) int {
	n := len(t.slots)
	switch {
	case a < 0 && b >= n:
		return n / 2
	case b >= n || (a >= 0 && t.slots[a].e.ID > t.slots[b].e.ID):
		// after a; the run of entries ending at a is t.valid[..k-1]
		run := 0
		for j := k - 1; j >= 0 && int(t.valid[j]) == a-run && run < l.k; j-- {
			run++
		}
		if run >= l.k && a+2 < b {
			return a + 2
		}
		return a + 1
	default:
		run := 0
		for j := k; j < len(t.valid) && int(t.valid[j]) == b+run && run < l.k; j++ {
			run++
		}
		if run >= l.k && b-2 > a {
			return b - 2
		}
		return b - 1
	}
}

// rebalance plans spreading the entries of a window around slot c, plus
// e (whose rank is r), evenly over the window. ok is false when no window
// has one free slot per k entries.
//
// Why the order is safe: targets keep rank order, so an entry moving down
// (target below its slot) only ever lands on a free slot or on the old
// slot of an entry below it that has already moved down; processing those
// bottom up, nothing live lies between an entry's old and new slot when it
// moves, so neither the copy left behind nor its invalidate changes any
// lookup. Entries moving up are the mirror, processed top down, and no
// move of one kind lands on a slot the other kind uses.
func (l gapLayout) rebalance(t *TCAM, e Entry, r, c int) (placement, bool) {
	n := len(t.slots)
	for w := 2 * (l.k + 1); ; w *= 2 {
		if w > n {
			w = n
		}
		lo := max(0, min(c-w/2, n-w))
		hi := lo + w
		i0 := sort.Search(len(t.valid), func(i int) bool { return int(t.valid[i]) >= lo })
		i1 := sort.Search(len(t.valid), func(i int) bool { return int(t.valid[i]) >= hi })
		m := i1 - i0 + 1 // with e
		if free := w - m; free*l.k >= m {
			return l.spread(t, r, i0, i1, lo, w), true
		}
		if w == n {
			return placement{}, false
		}
	}
}

// spread builds the rebalance plan for the entries t.valid[i0:i1] and the
// new entry at rank r (an index into t.valid) over slots lo..lo+w-1.
func (l gapLayout) spread(t *TCAM, r, i0, i1, lo, w int) placement {
	m := i1 - i0 + 1
	target := func(j int) int { return lo + j*w/m } // j-th of m in rank order
	p := placement{general: true}
	stale := -1
	emit := func(from, to int) {
		if stale >= 0 && to != stale {
			p.moves = append(p.moves, move{From: stale, To: clearSlot})
			p.clears++
		}
		p.moves = append(p.moves, move{From: from, To: to})
		p.count++
		stale = from
	}
	// j is the rank within the window: entries before r keep j = i-i0,
	// the new entry is j = r-i0, entries after shift by one.
	rank := func(i int) int {
		if i < r {
			return i - i0
		}
		return i - i0 + 1
	}
	for i := i1 - 1; i >= i0; i-- { // down-movers, bottom up
		if s, to := int(t.valid[i]), target(rank(i)); to > s {
			emit(s, to)
		}
	}
	for i := i0; i < i1; i++ { // up-movers, top down
		if s, to := int(t.valid[i]), target(rank(i)); to < s {
			emit(s, to)
		}
	}
	p.slot = target(r - i0)
	if stale >= 0 && stale != p.slot {
		p.moves = append(p.moves, move{From: stale, To: clearSlot})
		p.clears++
	}
	return p
}
