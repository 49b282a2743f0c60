package tcam

import (
	"math"
	"sort"
	"time"
)

// Hermes returns the shadow-partition layout of Hermes (CoNEXT 2017): the
// first shadowFraction of the slots (at least one) form a small shadow
// slice whose entries take precedence over the main slice below it. A new
// rule goes into the shadow at once, a shift of at most the shadow's size,
// so its insert time is bounded whatever the main slice holds; a
// background job (TCAM.Background) later migrates shadow entries into the
// main slice in batches. The shadow's slots are reserved: the TCAM holds
// at most Capacity less the shadow's size entries (TCAM.Usable), the
// layout's space cost. Hermes reports a 5 ms insertion guarantee at under
// 5 % of the space.
//
// Both slices are kept in rank order (earlier rule wins ties). Putting a
// rule in the shadow is only correct if no main-slice rule outranks it and
// overlaps it (else the shadow would wrongly take precedence); such a rule
// goes straight into the main slice instead, after the shadow rules it
// outranks and overlaps have been migrated. Migration takes the
// lowest-ranked shadow entry first: every rule left in the shadow outranks
// it, so moving it below them is right. A migrated entry is copied to its
// main-slice slot (after the shift that makes room there) and then its
// shadow copy is invalidated; until then the shadow copy answers. When the
// shadow is full an insert migrates one entry itself.
func Hermes(shadowFraction float64) Layout { return hermesLayout{frac: shadowFraction} }

// DefaultHermesShadow is the shadow share of the "hermes" layout.
const DefaultHermesShadow = 0.05

type hermesLayout struct{ frac float64 }

func (l hermesLayout) Name() string       { return HermesName }
func (l hermesLayout) TieBreak() TieBreak { return LowerIDWins }

func (l hermesLayout) reserved(capacity int) int {
	return max(1, int(math.Ceil(float64(capacity)*l.frac)))
}

// region is the range of t.valid indices of entries in slots [lo, hi).
func region(t *TCAM, lo, hi int) (i0, i1 int) {
	i0 = sort.Search(len(t.valid), func(i int) bool { return int(t.valid[i]) >= lo })
	i1 = sort.Search(len(t.valid), func(i int) bool { return int(t.valid[i]) >= hi })
	return i0, i1
}

// orderedInto plans an ordered insert of e into slots [lo, hi) among the
// entries there: the hole after the last entry that outranks it (or is an
// earlier piece of the same split entry: pieces are disjoint, so they
// simply go after each other), else a
// shift toward the nearest free slot of the region. The last step writes
// e (when from < 0) or moves it from slot from. ok is false when the
// region is full.
func orderedInto(t *TCAM, e *Entry, lo, hi int) (chain []move, slot int, ok bool) {
	i0, i1 := region(t, lo, hi)
	k := i0 + sort.Search(i1-i0, func(j int) bool {
		x := &t.slots[t.valid[i0+j]].e
		return x.ID != e.ID && !t.tie.Outranks(x, e)
	})
	a, b := lo-1, hi
	if k-1 >= i0 {
		a = int(t.valid[k-1])
	}
	if k < i1 {
		b = int(t.valid[k])
	}
	if b-a > 1 {
		return nil, a + 1, true
	}
	f := b // first free slot after a, within the region
	for j := k; j < i1 && int(t.valid[j]) == f; j++ {
		f++
	}
	g := a // last free slot before b
	for j := k - 1; j >= i0 && int(t.valid[j]) == g; j-- {
		g--
	}
	okDown, okUp := f < hi, g >= lo
	switch {
	case okDown && (!okUp || f-b <= a-g):
		for s := f - 1; s >= b; s-- {
			chain = append(chain, move{From: s, To: s + 1})
		}
		return chain, b, true
	case okUp:
		for s := g + 1; s <= a; s++ {
			chain = append(chain, move{From: s, To: s - 1})
		}
		return chain, a, true
	}
	return nil, 0, false
}

// hermesPlan accumulates a general plan on a scratch copy of real.
type hermesPlan struct {
	real *TCAM
	sc   *TCAM
	p    placement
}

func newHermesPlan(t *TCAM, slot int) *hermesPlan {
	return &hermesPlan{real: t, sc: t.scratch(), p: placement{general: true, slot: slot}}
}

func (h *hermesPlan) add(mv move) {
	h.p.moves = append(h.p.moves, mv)
	switch {
	case mv.To == clearSlot || mv.To == retireSlot:
		h.p.clears++
		h.sc.invalidate(mv.From)
	case mv.From <= writeStep:
		h.sc.writeSlot(mv.To, h.p.writes[writeStep-mv.From], &locator{})
	default:
		h.p.count++
		h.sc.moveSlot(mv.From, mv.To)
	}
}

// write adds a write step of e into slot s.
func (h *hermesPlan) write(s int, e Entry) {
	h.p.writes = append(h.p.writes, e)
	h.add(move{From: writeStep - (len(h.p.writes) - 1), To: s})
}

// planTime is the modelled time (chip and driver) plan p would take on t:
// its moves, writes and invalidates, and the final write of the new entry
// if it has one.
func (l hermesLayout) planTime(t *TCAM, p placement) time.Duration {
	chip, cpu := t.timing.Time(t.insertCost(p, t.freeSlots()))
	return chip + cpu
}

// migrateLowest moves the lowest-ranked shadow entry into the main slice.
// A split entry goes in whole (its original rule, written into its main
// slot) and then its pieces are retired; until then they answer.
func (h *hermesPlan) migrateLowest(S int) bool {
	t := h.sc
	i0, i1 := region(t, 0, S)
	if i0 == i1 {
		return false
	}
	zs := int(t.valid[i1-1])
	z := t.slots[zs].e
	if sp, ok := h.real.split[z.ID]; ok {
		chain, slot, ok := orderedInto(t, &sp.orig, S, len(t.slots))
		if !ok {
			return false
		}
		for _, mv := range chain {
			h.add(mv)
		}
		h.write(slot, sp.orig)
		// Its pieces are adjacent in rank order: the lowest shadow slots.
		for j := i1 - 1; j >= i0 && t.slots[t.valid[j]].e.ID == z.ID; {
			h.add(move{From: int(t.valid[j]), To: retireSlot})
			i0, i1 = region(t, 0, S)
			j = i1 - 1
		}
		return true
	}
	chain, slot, ok := orderedInto(t, &z, S, len(t.slots))
	if !ok {
		return false
	}
	for _, mv := range chain {
		h.add(mv)
	}
	h.add(move{From: zs, To: slot})
	h.add(move{From: zs, To: clearSlot})
	return true
}

func (l hermesLayout) place(t *TCAM, e Entry, build bool) (placement, error) {
	n := len(t.slots)
	S := l.reserved(n)
	toMain := mainOutranks(t, &e, S)
	i0, i1 := region(t, 0, S)
	if !toMain && i1-i0 < S {
		// The fast path: straight into the shadow's free room.
		chain, slot, ok := orderedInto(t, &e, 0, S)
		if !ok {
			return placement{}, ErrFull
		}
		p := placement{slot: slot, count: len(chain)}
		if build {
			p.moves = append(t.moveBuf[:0], chain...)
			t.moveBuf = p.moves
		}
		return p, nil
	}
	h := newHermesPlan(t, 0)
	if !toMain {
		// The shadow is full: migrate its lowest entry to make room. If
		// that entry outranks e and overlaps it, e now belongs in main.
		if !h.migrateLowest(S) {
			return placement{}, ErrFull
		}
		toMain = mainOutranks(h.sc, &e, S)
	}
	if !toMain {
		chain, slot, ok := orderedInto(h.sc, &e, 0, S)
		if !ok {
			return placement{}, ErrFull
		}
		for _, mv := range chain {
			h.add(mv)
		}
		h.p.slot = slot
		return h.p, nil
	}
	// A main-slice entry outranks e and overlaps it. The shadow would
	// wrongly take precedence over it, so either e goes into main in rank
	// order (after the shadow entries it outranks and overlaps have
	// migrated), or it goes into the shadow cut into pieces that leave
	// out every such main entry (Hermes's rule splitting). The plan the
	// TCAM's timing prices lower wins; on a tie main, which leaves no
	// migration for later.
	main, mainErr := l.planMain(h, &e, S)
	if l.maxSplit(S) > 0 {
		if sp, ok := l.planSplit(h, &e, S); ok && (mainErr != nil || l.planTime(t, sp.p) < l.planTime(t, main.p)) {
			sp.p.slot = noWrite
			return sp.p, nil
		}
	}
	if mainErr != nil {
		return placement{}, mainErr
	}
	return main.p, nil
}

// planMain continues h with e's insert into the main slice: first the
// shadow entries e outranks and overlaps migrate, lowest first.
func (l hermesLayout) planMain(h0 *hermesPlan, e *Entry, S int) (*hermesPlan, error) {
	h := &hermesPlan{real: h0.real, sc: h0.sc.scratch(), p: clonePlan(h0.p)}
	for conflict(h.sc, e, S) {
		if !h.migrateLowest(S) {
			return nil, ErrFull
		}
	}
	chain, slot, ok := orderedInto(h.sc, e, S, len(h.sc.slots))
	if !ok {
		return nil, ErrFull
	}
	for _, mv := range chain {
		h.add(mv)
	}
	h.p.slot = slot
	return h, nil
}

// clonePlan copies a plan's step lists so two continuations of one
// prefix do not share them.
func clonePlan(p placement) placement {
	p.moves = append([]move(nil), p.moves...)
	p.writes = append([]Entry(nil), p.writes...)
	p.cutters = append([]uint64(nil), p.cutters...)
	return p
}

// hermesBatch is the share of the shadow one Background call migrates.
const hermesBatchDiv = 2

func (l hermesLayout) pending(t *TCAM) bool {
	S := l.reserved(len(t.slots))
	i0, i1 := region(t, 0, S)
	return i1-i0 >= max(1, S/hermesBatchDiv)
}

func (l hermesLayout) background(t *TCAM) (placement, error) {
	S := l.reserved(len(t.slots))
	h := newHermesPlan(t, noWrite)
	for range max(1, S/hermesBatchDiv) {
		if !h.migrateLowest(S) {
			break
		}
	}
	return h.p, nil
}

// mainOutranks reports whether a main-slice entry outranks e and overlaps
// it (e cannot then go into the shadow whole).
func mainOutranks(t *TCAM, e *Entry, S int) bool {
	i0, _ := region(t, S, len(t.slots))
	for _, s := range t.valid[i0:] {
		x := &t.slots[s].e
		if t.tie.Outranks(x, e) && overlaps(&x.Rule, &e.Rule) {
			return true
		}
	}
	return false
}

// conflict reports whether a shadow entry (or piece) is outranked by e and
// overlaps it (e cannot then go into the main slice before it has
// migrated).
func conflict(t *TCAM, e *Entry, S int) bool {
	i0, i1 := region(t, 0, S)
	for i := i0; i < i1; i++ {
		x := &t.slots[t.valid[i]].e
		if t.tie.Outranks(e, x) && overlaps(&x.Rule, &e.Rule) {
			return true
		}
	}
	return false
}
