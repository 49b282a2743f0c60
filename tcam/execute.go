package tcam

import "fmt"

// move relocates the entry in slot From into slot To. To == clearSlot
// instead invalidates From, which must then hold a stale copy (a general
// plan's way to free a slot a move left behind). Two more steps exist in
// general plans only, for hermes's rule splitting (hermes_split.go):
// From <= writeStep writes placement.writes[writeStep-From] into slot To
// (a piece of the new entry, or the whole rule of a split entry being
// migrated), and
// To == retireSlot invalidates From, a live piece of an entry whose whole
// rule an earlier write step of the same plan installed.
type move struct {
	From, To int
}

// clearSlot as a move's To marks an invalidate of From.
const clearSlot = -1

// writeStep (and below) as a move's From and retireSlot as its To (see
// move).
const (
	writeStep  = -2
	retireSlot = -3
)

// noWrite as a placement's slot marks a plan that writes no new entry (a
// layout's background work, see Background).
const noWrite = -1

// placement is a layout's plan for one insert: first the moves in order,
// then one write of the new entry into slot.
//
// A plain plan's moves must form a chain: the first move targets a free
// slot, every later move targets the slot the previous move copied from,
// and the new entry is written into the slot the last move copied from
// (or, with no moves, into a free slot). Every slot a chain overwrites
// therefore holds either nothing or a stale copy of an entry that already
// lives elsewhere, so no entry is ever absent from the chip; whether a
// lookup in between also gets the right answer depends on where the copies
// sit, which is the layout's responsibility (see doc.go for the ordered
// layouts' argument).
//
// A general plan (general set) may hold several chains and invalidates:
// every move must read a slot holding a live entry and write a slot that
// is free or holds a stale copy; an invalidate (To == clearSlot) must
// clear a stale copy; and when the plan ends no stale copy may be left.
// That is the same no-entry-lost rule without the one-chain shape, for
// layouts that rebalance (gap-k) or migrate (hermes). A plain chain is
// checked by the cheaper chain rule.
type placement struct {
	slot    int
	count   int    // number of moves, known even when moves were not built
	clears  int    // number of invalidates among moves (general plans only)
	moves   []move // nil when the layout was asked only to count
	general bool
	// writes are the entries the plan's write steps install (general
	// plans only). split says the new entry goes in as the pieces among
	// them (slot is then noWrite), cut around the main-slice entries
	// cutters.
	writes  []Entry
	split   bool
	cutters []uint64
}

// execute carries out a placement on the chip, one write at a time.
func (t *TCAM) execute(e Entry, p placement) error {
	if err := t.checkPlan(e.ID, p); err != nil {
		return err
	}
	var pieces []*locator
	for _, mv := range p.moves {
		switch {
		case mv.To == clearSlot || mv.To == retireSlot:
			t.invalidate(mv.From)
		case mv.From <= writeStep:
			w := p.writes[writeStep-mv.From]
			loc := &locator{}
			if p.split && w.ID == e.ID {
				pieces = append(pieces, loc)
			} else {
				// The whole rule of a split entry, migrating: it is an
				// ordinary entry from now on; its pieces are retired next.
				t.where[w.ID] = loc
				delete(t.split, w.ID)
			}
			t.writeSlot(mv.To, w, loc)
		default:
			t.moveSlot(mv.From, mv.To)
		}
	}
	if p.split {
		if t.split == nil {
			t.split = make(map[uint64]*splitEntry)
		}
		t.where[e.ID] = pieces[0]
		t.split[e.ID] = &splitEntry{orig: e, pieces: pieces, cutters: p.cutters}
		return nil
	}
	if p.slot == noWrite {
		return nil
	}
	loc := &locator{}
	t.where[e.ID] = loc
	t.writeSlot(p.slot, e, loc)
	return nil
}

// moveSlot reads slot from and writes its entry into slot to (one read and
// one write); from keeps a stale copy until the plan overwrites or clears
// it.
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

func (t *TCAM) checkPlan(newID uint64, p placement) error {
	if p.general {
		return t.checkGeneral(newID, p)
	}
	return t.checkChain(p)
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

// Slot states while a general plan is simulated.
const (
	stFree uint8 = iota + 1
	stLive
	stStale
)

// checkGeneral simulates a general plan on the slot states alone.
func (t *TCAM) checkGeneral(newID uint64, p placement) error {
	inRange := func(s int) bool { return s >= 0 && s < len(t.slots) }
	state := make(map[int]uint8, 2*len(p.moves)+1)
	get := func(s int) uint8 {
		if v, ok := state[s]; ok {
			return v
		}
		if t.slots[s].valid {
			return stLive
		}
		return stFree
	}
	// ids tracks which entry a slot's copy belongs to, for retire steps.
	ids := make(map[int]uint64, len(state))
	idOf := func(s int) uint64 {
		if id, ok := ids[s]; ok {
			return id
		}
		return t.slots[s].e.ID
	}
	wholeWritten, retired := map[uint64]bool{}, map[uint64]int{}
	moves, clears, writes, pieces := 0, 0, 0, 0
	for i, mv := range p.moves {
		if mv.From <= writeStep {
			w := writeStep - mv.From
			if w >= len(p.writes) || !inRange(mv.To) {
				return fmt.Errorf("write step %d (entry %d into slot %d) out of range", i, w, mv.To)
			}
			if get(mv.To) == stLive {
				return fmt.Errorf("write step %d overwrites live slot %d", i, mv.To)
			}
			we := p.writes[w]
			if p.split && we.ID == newID {
				pieces++
			} else {
				if _, ok := t.split[we.ID]; !ok {
					return fmt.Errorf("write step %d installs entry %d, which is neither a new piece nor a split entry", i, we.ID)
				}
				wholeWritten[we.ID] = true
			}
			state[mv.To], ids[mv.To] = stLive, we.ID
			writes++
			continue
		}
		if !inRange(mv.From) {
			return fmt.Errorf("step %d reads slot %d out of range", i, mv.From)
		}
		if mv.To == retireSlot {
			if get(mv.From) != stLive || !wholeWritten[idOf(mv.From)] {
				return fmt.Errorf("step %d retires slot %d, which holds no piece of an entry written whole before it", i, mv.From)
			}
			state[mv.From] = stFree
			retired[idOf(mv.From)]++
			clears++
			continue
		}
		if mv.To == clearSlot {
			if get(mv.From) != stStale {
				return fmt.Errorf("step %d invalidates slot %d, which holds no stale copy", i, mv.From)
			}
			state[mv.From] = stFree
			clears++
			continue
		}
		if !inRange(mv.To) || mv.From == mv.To {
			return fmt.Errorf("move %d (%d->%d) out of range or in place", i, mv.From, mv.To)
		}
		if get(mv.From) != stLive {
			return fmt.Errorf("move %d reads slot %d, which holds no live entry", i, mv.From)
		}
		if get(mv.To) == stLive {
			return fmt.Errorf("move %d overwrites live slot %d", i, mv.To)
		}
		state[mv.To] = stLive
		state[mv.From] = stStale
		ids[mv.To] = idOf(mv.From)
		moves++
	}
	if moves != p.count || clears != p.clears || writes != len(p.writes) {
		return fmt.Errorf("layout planned %d moves, %d invalidates and %d writes but listed %d, %d and %d", p.count, p.clears, len(p.writes), moves, clears, writes)
	}
	if p.split && (pieces == 0 || p.slot != noWrite) {
		return fmt.Errorf("split plan writes %d pieces and targets slot %d", pieces, p.slot)
	}
	for id := range wholeWritten {
		if n := len(t.split[id].pieces); retired[id] != n {
			return fmt.Errorf("plan installs split entry %d whole but retires %d of its %d pieces", id, retired[id], n)
		}
	}
	if p.slot != noWrite {
		if !inRange(p.slot) {
			return fmt.Errorf("target slot %d out of range", p.slot)
		}
		if get(p.slot) == stLive {
			return fmt.Errorf("target slot %d is live", p.slot)
		}
		state[p.slot] = stLive
	}
	for s, v := range state {
		if v == stStale {
			return fmt.Errorf("plan leaves a stale copy in slot %d", s)
		}
	}
	return nil
}
