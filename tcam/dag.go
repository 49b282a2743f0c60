package tcam

import (
	"fmt"
	"sort"
)

// This file holds the dependency-graph layouts: RuleTris (ICDCS 2016) and
// FastRule (ICDCS 2018 / JSAC 2019). Unlike the ordered layouts they do not
// keep all entries in rank order: only entries whose matches overlap
// constrain each other (an edge of the rule dependency graph), so a rule
// that overlaps nothing can sit in any slot.
//
// The dependency relation used here is the conservative one: a and b
// depend when some key matches both, whatever other rules cover that key.
// RuleTris's compact graph also drops pairs whose overlap is hidden behind a
// third rule; with that graph fewer pairs constrain, so the moves counted
// here are an upper bound on what the compact graph would need.
//
// Invariant: for every overlapping pair the entry that outranks the other
// sits in the lower slot. Lookups are then right, since the winner among
// the entries matching a key outranks and overlaps every other one.
//
// An insert of e computes L, the last slot of an entry that outranks e and
// overlaps it, and U, the first slot of an entry e outranks and overlaps.
// Any free slot strictly between them takes e at no cost. Otherwise e
// displaces the occupant of a slot and a chain of moves in one direction
// runs to a free slot: downward, e takes a slot in (L, U] and each
// displaced rule r, sitting at p, may jump to any slot in (p, D(p)], where
// D(p) is the first slot below p holding a rule that r outranks and
// overlaps (that rule is the next one displaced); upward is the mirror.
// The fewest-move chain is a jump game solved by breadth-first search over
// intervals (RuleTris); FastRule's greedy variant lets every rule jump as
// far as it can instead, which is quicker to find and sometimes longer.
//
// If L ≥ U no chain in one direction can help: a rule e must follow sits
// below a rule e must precede (the two do not overlap each other, so the
// table was right until e linked them). The layout then first relocates
// the outranking rule upward above the other (as if re-inserting it with
// that extra bound, or the other rule downward), clears the copy it left,
// and retries: a general plan, counted and checked like any other. When
// neither relocation is possible (the relocated rule's own dependencies
// pin it, and this layout does not recurse into them) the insert is
// refused with ErrNoPlacement and nothing changes; the property test
// counts how often that happens on random overlapping rule sets.

// RuleTris returns the minimum-move dependency-graph layout.
func RuleTris() Layout { return dagLayout{name: RuleTrisName} }

// FastRule returns the greedy dependency-graph layout.
func FastRule() Layout { return dagLayout{name: FastRuleName, greedy: true} }

type dagLayout struct {
	name   string
	greedy bool
}

func (l dagLayout) Name() string       { return l.name }
func (l dagLayout) TieBreak() TieBreak { return LowerIDWins }

// overlaps reports whether some key matches both a and b.
func overlaps(a, b *Ternary) bool {
	for i := range a.Value {
		if (a.Value[i]^b.Value[i])&a.Mask[i]&b.Mask[i] != 0 {
			return false
		}
	}
	return true
}

// maxRelocations bounds the conflict resolution of one insert.
const maxRelocations = 16

func (l dagLayout) place(t *TCAM, e Entry, build bool) (placement, error) {
	L, U := bounds(t, &e, -1)
	if L < U {
		c, ok := l.chain(t, &e, L, U, -1)
		if !ok {
			return placement{}, ErrFull
		}
		return c.placement(t, build), nil
	}
	return l.placeWithRelocations(t, e)
}

// bounds returns L (last slot of an entry outranking e and overlapping it,
// or -1) and U (first slot of an entry e outranks and overlaps, or
// Capacity). skip is a slot to ignore (the rule being relocated), or -1.
func bounds(t *TCAM, e *Entry, skip int) (L, U int) {
	L, U = -1, len(t.slots)
	for _, s32 := range t.valid {
		s := int(s32)
		if s == skip {
			continue
		}
		x := &t.slots[s].e
		if !overlaps(&x.Rule, &e.Rule) {
			continue
		}
		if t.tie.Outranks(x, e) {
			if s > L {
				L = s
			}
		} else if s < U {
			U = s
		}
	}
	return L, U
}

// chainPlan is a found chain: the entry goes into path[0]; the occupant of
// path[i] moves to path[i+1]; the last element is a free slot. With one
// element the entry takes a free slot at no cost.
type chainPlan struct{ path []int }

func (c chainPlan) moves() int { return len(c.path) - 1 }

// placement turns the chain into the executor's plan: moves from the free
// end back to the entry's slot.
func (c chainPlan) placement(t *TCAM, build bool) placement {
	p := placement{slot: c.path[0], count: c.moves()}
	if build {
		p.moves = t.moveBuf[:0]
		for i := len(c.path) - 2; i >= 0; i-- {
			p.moves = append(p.moves, move{From: c.path[i], To: c.path[i+1]})
		}
		t.moveBuf = p.moves
	}
	return p
}

// chain finds the chain placing e strictly after L and before U (the
// occupant of L or U may be displaced in the direction away from e's slot).
// skip is a slot whose occupant is e itself (a relocation), never part of
// the chain, or -1.
func (l dagLayout) chain(t *TCAM, e *Entry, L, U, skip int) (chainPlan, bool) {
	if s, ok := bestFree(t, L, U); ok {
		return chainPlan{path: []int{s}}, true
	}
	down, okD := l.jump(t, e, L, U, +1, skip)
	up, okU := l.jump(t, e, L, U, -1, skip)
	switch {
	case okD && (!okU || down.moves() <= up.moves()):
		return down, true
	case okU:
		return up, true
	}
	return chainPlan{}, false
}

// bestFree picks a free slot in (L, U); ok is false when there is none.
// With one bound only it takes the free slot nearest that bound, so that a
// run of ascending (only U) or descending (only L) inserts packs against
// the previous one and the rest of the free space stays on the side the
// run grows into; with both bounds, or none, the middle of the widest run
// of free slots, so that later inserts on either side still find room.
func bestFree(t *TCAM, L, U int) (int, bool) {
	n := len(t.slots)
	lo, hi := L+1, U-1
	if lo > hi {
		return 0, false
	}
	switch {
	case L < 0 && U < n:
		if g := prevFree(t, U); g > L {
			return g, true
		}
		return 0, false
	case L >= 0 && U >= n:
		if f := nextFree(t, L); f < U {
			return f, true
		}
		return 0, false
	}
	i := sort.Search(len(t.valid), func(i int) bool { return int(t.valid[i]) >= lo })
	best, bestLen := -1, 0
	prev := lo - 1
	for ; i <= len(t.valid); i++ {
		next := hi + 1
		if i < len(t.valid) && int(t.valid[i]) <= hi {
			next = int(t.valid[i])
		}
		if n := next - prev - 1; n > bestLen {
			best, bestLen = prev+1+(n-1)/2, n
		}
		if next > hi {
			break
		}
		prev = next
	}
	return best, best >= 0
}

// nextFree is the first free slot after s (or Capacity), prevFree the last
// free slot before s (or -1).
func nextFree(t *TCAM, s int) int {
	k := sort.Search(len(t.valid), func(i int) bool { return int(t.valid[i]) > s })
	f, _ := t.freeAfter(s, k)
	return f
}

func prevFree(t *TCAM, s int) int {
	k := sort.Search(len(t.valid), func(i int) bool { return int(t.valid[i]) >= s }) - 1
	if k < 0 {
		return s - 1
	}
	g, _ := t.freeBefore(s, k)
	return g
}

// reach is how far the rule in slot p may move in direction dir (+1 down,
// -1 up) without passing a rule it must precede (down) or follow (up):
// the first such rule's slot, or the table's end. It stops looking at
// limit (a slot already known to be reachable), returning limit.
func reach(t *TCAM, p, dir, limit, skip int) int {
	r := &t.slots[p].e
	for s := p + dir; s != limit; s += dir {
		if s == skip || !t.slots[s].valid {
			continue
		}
		x := &t.slots[s].e
		if !overlaps(&r.Rule, &x.Rule) {
			continue
		}
		if (dir > 0) == t.tie.Outranks(r, x) {
			return s
		}
	}
	return limit
}

// jump solves the jump game in direction dir. The entry's own slot must lie
// in (L, U] going down or [L, U) going up, and inside the table.
func (l dagLayout) jump(t *TCAM, e *Entry, L, U, dir, skip int) (chainPlan, bool) {
	n := len(t.slots)
	var a, b int // current level, a..b in the direction of travel
	if dir > 0 {
		a, b = L+1, min(U, n-1)
		if a > b {
			return chainPlan{}, false
		}
	} else {
		a, b = max(L, 0), U-1
		if a > b {
			return chainPlan{}, false
		}
		a, b = b, a // travel upward: a is the level's start (highest slot)
	}
	end := n // one past the last slot in the direction of travel
	if dir < 0 {
		end = -1
	}
	// The level's slots are all occupied (bestFree found none in (L, U),
	// and U itself, or L going up, holds a rule); skip must not be used.
	free := func(from int) int { // first free slot after from in dir
		if dir > 0 {
			return nextFree(t, from)
		}
		return prevFree(t, from)
	}
	beyond := func(x, y int) bool { return (x-y)*dir > 0 } // x strictly past y
	var path []int
	if l.greedy {
		p := b // start as far as possible in the direction of travel
		if p == skip {
			return chainPlan{}, false
		}
		path = append(path, p)
		for {
			f := free(p)
			if f == end {
				return chainPlan{}, false
			}
			r := reach(t, p, dir, f, skip)
			if r == f || beyond(r, f) {
				return chainPlan{path: append(path, f)}, true
			}
			if r == skip {
				return chainPlan{}, false
			}
			path = append(path, r)
			p = r
		}
	}
	// Breadth-first over intervals: level k holds the slots reachable with
	// k-1 moves; best[k] is the one that reaches furthest.
	var best []int
	for {
		f := free(b)
		if f == end {
			return chainPlan{}, false
		}
		R, arg := b, -1
		for p := b; ; p -= dir {
			if p != skip {
				if r := reach(t, p, dir, f, skip); beyond(r, R) || arg < 0 {
					R, arg = r, p
					if r == f {
						break
					}
				}
			}
			if p == a {
				break
			}
		}
		if arg < 0 || !beyond(R, b) {
			return chainPlan{}, false
		}
		best = append(best, arg)
		if R == f { // the free slot is reachable: done
			path = append(best, f)
			return chainPlan{path: path}, true
		}
		a, b = b+dir, R
		if R == skip { // never displace the relocated rule itself
			b = R - dir
			if beyond(a, b) {
				return chainPlan{}, false
			}
		}
	}
}

// placeWithRelocations resolves L ≥ U on a scratch copy of the table and
// returns one general plan: relocations, each followed by the clear of the
// copy it left, then the insert's chain.
func (l dagLayout) placeWithRelocations(t *TCAM, e Entry) (placement, error) {
	sc := t.scratch()
	var moves []move
	for range maxRelocations {
		L, U := bounds(sc, &e, -1)
		if L < U {
			c, ok := l.chain(sc, &e, L, U, -1)
			if !ok {
				return placement{}, ErrFull
			}
			for i := len(c.path) - 2; i >= 0; i-- {
				moves = append(moves, move{From: c.path[i], To: c.path[i+1]})
			}
			p := placement{slot: c.path[0], moves: moves, general: true}
			for _, mv := range moves {
				if mv.To == clearSlot {
					p.clears++
				} else {
					p.count++
				}
			}
			return p, nil
		}
		// Relocate the rule at L (which e must follow) above U, or else
		// the rule at U (which e must precede) below L; each attempt runs
		// on its own copy so that a failed one leaves nothing behind.
		rel, next, ok := l.relocateOn(sc, L, -1, U, relocationDepth)
		if !ok {
			rel, next, ok = l.relocateOn(sc, U, +1, L, relocationDepth)
		}
		if !ok {
			return placement{}, fmt.Errorf("relocating around slots %d and %d: %w", L, U, ErrNoPlacement)
		}
		sc = next
		moves = append(moves, rel...)
	}
	return placement{}, fmt.Errorf("after %d relocations: %w", maxRelocations, ErrNoPlacement)
}

// relocationDepth bounds how deep a relocation may first relocate the
// rules that pin the relocated one.
const relocationDepth = 3

// relocateOn plans, on a copy of sc, moving the rule at slot s in
// direction dir so that it ends strictly past bound (above it going up,
// below it going down), respecting its own dependencies. A rule that pins
// it (one it must follow, going up; one it must precede, going down) is
// first relocated past the same bound, up to depth levels deep. It returns
// the moves (each relocated rule's last move followed by the invalidate of
// the copy it left) and the copy with them applied.
func (l dagLayout) relocateOn(sc *TCAM, s, dir, bound, depth int) ([]move, *TCAM, bool) {
	t := sc.scratch()
	x := t.slots[s].e
	var out []move
	for range maxRelocations {
		L, U := bounds(t, &x, s)
		if dir < 0 {
			U = min(U, bound)
		} else {
			L = max(L, bound)
		}
		if L >= U {
			if depth == 0 {
				return nil, nil, false
			}
			pin, pinBound := L, U // going up: the rule at L must end above U
			if dir > 0 {
				pin, pinBound = U, L
			}
			sub, next, ok := l.relocateOn(t, pin, dir, pinBound, depth-1)
			if !ok {
				return nil, nil, false
			}
			out = append(out, sub...)
			t = next
			continue
		}
		var c chainPlan
		if f, ok := bestFree(t, L, U); ok {
			c = chainPlan{path: []int{f}}
		} else {
			var ok bool
			if c, ok = l.jump(t, &x, L, U, dir, s); !ok {
				return nil, nil, false
			}
		}
		var moves []move
		for i := len(c.path) - 2; i >= 0; i-- {
			moves = append(moves, move{From: c.path[i], To: c.path[i+1]})
		}
		moves = append(moves, move{From: s, To: c.path[0]}, move{From: s, To: clearSlot})
		for _, mv := range moves {
			if mv.To == clearSlot {
				t.invalidate(mv.From)
			} else {
				t.moveSlot(mv.From, mv.To)
			}
		}
		return append(out, moves...), t, true
	}
	return nil, nil, false
}

// scratch returns a copy of the slots and valid list for planning a
// general plan step by step; its locators are its own.
func (t *TCAM) scratch() *TCAM {
	sc := &TCAM{layout: t.layout, tie: t.tie, timing: t.timing, usable: t.usable}
	sc.slots = make([]slot, len(t.slots))
	for i, s := range t.slots {
		if s.valid {
			sc.slots[i] = slot{e: s.e, valid: true, loc: &locator{slot: int32(i)}}
		}
	}
	sc.valid = append([]int32(nil), t.valid...)
	return sc
}
