package tcam

import "math/bits"

// Hermes's rule splitting. The shadow slice takes precedence over the
// main slice, so a new rule may only go there if no main-slice rule that
// outranks it overlaps it: for a packet in both, the shadow copy would
// answer where the main rule should. Hermes resolves this by cutting the
// new rule into pieces that leave out every such main rule; the pieces go
// into the shadow at the usual bounded cost, and the migration job later
// writes the whole rule into its main-slice slot and retires the pieces.
//
// Each piece is a slot holding the entry's ID and priority with a
// narrower Ternary; lookups answer with the original entry. Cutting a
// ternary r around an overlapping h takes one piece per bit that h cares
// about and r does not (r with that bit set against h, the earlier ones
// set as h has them), so a rule that differs from a cutter in a whole
// field needs that field's width in pieces. Splits beyond maxSplit pieces
// (half the shadow), and rules the cutters cover entirely, go to the main
// slice in rank order instead, as do splits that the TCAM's timing
// prices above that main insert right now.
//
// A deleted cutter would leave its region of a split rule to lower rules,
// so Delete first migrates (lowest first, as always) until no split rule
// cut around it is left in the shadow.

// splitEntry is an entry held as pieces in the shadow slice.
type splitEntry struct {
	orig    Entry
	pieces  []*locator
	cutters []uint64 // main-slice entries the pieces leave out
}

// deleteRepairer is implemented by layouts that must change the table
// before an entry is deleted (hermes: split rules cut around it).
type deleteRepairer interface {
	beforeDelete(t *TCAM, id uint64) (p placement, need bool, err error)
}

// maxSplit is the most pieces one split may take: half the shadow, so
// that a split never has to empty the whole shadow to fit.
func (l hermesLayout) maxSplit(S int) int { return S / 2 }

// planSplit continues h0 with e's insert into the shadow as pieces, or
// reports that no split fits.
func (l hermesLayout) planSplit(h0 *hermesPlan, e *Entry, S int) (*hermesPlan, bool) {
	h := &hermesPlan{real: h0.real, sc: h0.sc.scratch(), p: clonePlan(h0.p)}
	var pieces []Ternary
	var cut []uint64
	for {
		var rules []*Ternary
		cut = cut[:0]
		i0, _ := region(h.sc, S, len(h.sc.slots))
		for _, s := range h.sc.valid[i0:] {
			x := &h.sc.slots[s].e
			if h.sc.tie.Outranks(x, e) && overlaps(&x.Rule, &e.Rule) {
				rules = append(rules, &x.Rule)
				cut = append(cut, x.ID)
			}
		}
		var ok bool
		if pieces, ok = splitRule(e.Rule, rules, l.maxSplit(S)); !ok || len(pieces) == 0 {
			return nil, false
		}
		j0, j1 := region(h.sc, 0, S)
		if S-(j1-j0) >= len(pieces) {
			break
		}
		// Make room; a migrated entry may become one more cutter.
		if !h.migrateLowest(S) {
			return nil, false
		}
	}
	for _, r := range pieces {
		pe := Entry{Rule: r, Priority: e.Priority, ID: e.ID}
		chain, slot, ok := orderedInto(h.sc, &pe, 0, S)
		if !ok {
			return nil, false
		}
		for _, mv := range chain {
			h.add(mv)
		}
		h.write(slot, pe)
	}
	h.p.split = true
	h.p.cutters = append([]uint64(nil), cut...)
	return h, true
}

// splitRule cuts r around every rule of cutters (all overlapping r) and
// returns the pieces: disjoint ternaries whose union is r less the
// cutters. ok is false when more than limit pieces would be needed.
func splitRule(r Ternary, cutters []*Ternary, limit int) (pieces []Ternary, ok bool) {
	pieces = []Ternary{r}
	var next []Ternary
	for _, h := range cutters {
		next = next[:0]
		for i := range pieces {
			next = subtract(pieces[i], h, next)
			if len(next) > limit {
				return nil, false
			}
		}
		pieces, next = next, pieces
	}
	return append([]Ternary(nil), pieces...), true
}

// subtract appends to out the pieces of r outside h.
func subtract(r Ternary, h *Ternary, out []Ternary) []Ternary {
	if !overlaps(&r, h) {
		return append(out, r)
	}
	cur := r
	for w := range cur.Mask {
		for rest := h.Mask[w] &^ cur.Mask[w]; rest != 0; {
			bit := uint64(1) << (63 - bits.LeadingZeros64(rest))
			rest &^= bit
			piece := cur
			piece.Mask[w] |= bit
			piece.Value[w] = piece.Value[w]&^bit | ^h.Value[w]&bit
			out = append(out, piece)
			cur.Mask[w] |= bit
			cur.Value[w] = cur.Value[w]&^bit | h.Value[w]&bit
		}
	}
	return out // cur now lies inside h: dropped
}

func (l hermesLayout) beforeDelete(t *TCAM, id uint64) (placement, bool, error) {
	affected := map[uint64]bool{}
	for sid, sp := range t.split {
		for _, c := range sp.cutters {
			if c == id {
				affected[sid] = true
				break
			}
		}
	}
	if len(affected) == 0 {
		return placement{}, false, nil
	}
	S := l.reserved(len(t.slots))
	h := newHermesPlan(t, noWrite)
	for {
		left := false
		i0, i1 := region(h.sc, 0, S)
		for _, s := range h.sc.valid[i0:i1] {
			if affected[h.sc.slots[s].e.ID] {
				left = true
				break
			}
		}
		if !left {
			return h.p, true, nil
		}
		if !h.migrateLowest(S) {
			return placement{}, false, ErrFull
		}
	}
}
