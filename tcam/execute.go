package tcam

import "fmt"

// move relocates the entry in slot From into slot To.
type move struct {
	From, To int
}

// placement is a layout's plan for one insert: first the moves in order,
// then one write of the new entry into slot.
//
// The moves must form a chain: the first move targets a free slot, every
// later move targets the slot the previous move copied from, and the new
// entry is written into the slot the last move copied from (or, with no
// moves, into a free slot). Every slot a chain overwrites therefore holds
// either nothing or a stale copy of an entry that already lives elsewhere,
// so no entry is ever absent from the chip; whether a lookup in between
// also gets the right answer depends on where the copies sit, which is the
// layout's responsibility (see doc.go for the ordered layouts' argument).
type placement struct {
	slot  int
	count int    // number of moves, known even when moves were not built
	moves []move // nil when the layout was asked only to count
}

// execute carries out a placement on the chip, one write at a time.
func (t *TCAM) execute(e Entry, p placement) error {
	if err := t.checkChain(p); err != nil {
		return err
	}
	for _, mv := range p.moves {
		t.moveSlot(mv.From, mv.To)
	}
	loc := &locator{}
	t.where[e.ID] = loc
	t.writeSlot(p.slot, e, loc)
	return nil
}

// moveSlot reads slot from and writes its entry into slot to (one read and
// one write); from keeps a stale copy until the chain overwrites it.
func (t *TCAM) moveSlot(from, to int) {
	src := t.slots[from]
	t.writeSlot(to, src.e, src.loc)
}

// writeSlot writes e into slot s and sets its valid bit (one chip write).
func (t *TCAM) writeSlot(s int, e Entry, loc *locator) {
	t.slots[s].e = e
	t.slots[s].loc = loc
	loc.slot = int32(s)
	t.markValid(s)
	if t.afterChipWrite != nil {
		t.afterChipWrite()
	}
}

func (t *TCAM) checkChain(p placement) error {
	if len(p.moves) != p.count {
		return fmt.Errorf("layout planned %d moves but listed %d", p.count, len(p.moves))
	}
	inRange := func(s int) bool { return s >= 0 && s < len(t.slots) }
	next := -1 // slot the next write must target; -1 means "a free slot"
	for i, mv := range p.moves {
		if !inRange(mv.From) || !inRange(mv.To) || mv.From == mv.To {
			return fmt.Errorf("move %d (%d->%d) out of range or in place", i, mv.From, mv.To)
		}
		if !t.slots[mv.From].valid {
			return fmt.Errorf("move %d reads empty slot %d", i, mv.From)
		}
		if next == -1 && t.slots[mv.To].valid {
			return fmt.Errorf("move %d overwrites live slot %d", i, mv.To)
		}
		if next != -1 && mv.To != next {
			return fmt.Errorf("move %d targets slot %d, chain expects %d", i, mv.To, next)
		}
		next = mv.From
	}
	if !inRange(p.slot) {
		return fmt.Errorf("target slot %d out of range", p.slot)
	}
	if next == -1 && t.slots[p.slot].valid {
		return fmt.Errorf("target slot %d is live", p.slot)
	}
	if next != -1 && p.slot != next {
		return fmt.Errorf("target slot %d, chain expects %d", p.slot, next)
	}
	return nil
}
