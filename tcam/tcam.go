package tcam

import (
	"errors"
	"fmt"
)

// Errors returned (wrapped with context) by TCAM and Classifier operations.
var (
	ErrFull        = errors.New("tcam full")
	ErrDuplicateID = errors.New("entry id already present")
	ErrNotFound    = errors.New("entry id not present")
	// ErrNoPlacement: a dependency-graph layout found no valid plan for
	// an insert although slots are free (see dag.go).
	ErrNoPlacement = errors.New("no valid placement found")
)

// slot is one TCAM word plus its valid bit, and (driver side) the locator
// of the entry it holds.
type slot struct {
	e     Entry
	valid bool
	loc   *locator
}

// locator is the driver's record of where an entry lives. Moves update it
// through the slot's pointer, so a shift of n entries costs no map writes.
type locator struct {
	slot int32
}

// TCAM models a ternary CAM of a fixed number of slots. Lookup returns the
// first (lowest-index) valid slot that matches, as the chip's priority
// encoder does; the layout decides where entries go so that "first" means
// "highest ranked". Every chip operation is counted in a Cost.
//
// A TCAM is not safe for concurrent use: the software switch drives it from
// its single pipeline goroutine.
type TCAM struct {
	layout Layout
	tie    TieBreak
	timing Timing
	slots  []slot

	// valid lists the indices of valid slots in ascending order. For the
	// ordered layouts this is also rank order, which lets InsertCost find
	// positions and free slots by binary search.
	valid []int32
	// where maps an entry ID to its locator (the newest copy while a move
	// has it in two slots).
	where map[uint64]*locator

	total   Cost
	moveBuf []move
	// split holds the entries hermes keeps in its shadow slice as pieces
	// (hermes_split.go); where points at the first piece. nil until the
	// first split.
	split map[uint64]*splitEntry

	// usable is the number of entries the layout lets the TCAM hold:
	// Capacity less any slots it reserves (hermes's shadow slice).
	usable int

	// afterChipWrite, when set (tests only), runs after every write and
	// invalidate so lookups can be interleaved with a shift.
	afterChipWrite func()
}

// New returns an empty TCAM of the given number of slots.
func New(slots int, layout Layout, timing Timing) (*TCAM, error) {
	if slots <= 0 {
		return nil, fmt.Errorf("tcam: slot count must be positive, got %d", slots)
	}
	if slots > 1<<30 {
		return nil, fmt.Errorf("tcam: slot count %d too large", slots)
	}
	if layout == nil {
		return nil, errors.New("tcam: nil layout")
	}
	if err := timing.Validate(); err != nil {
		return nil, err
	}
	usable := slots
	if r, ok := layout.(reserver); ok {
		usable = slots - r.reserved(slots)
		if usable <= 0 {
			return nil, fmt.Errorf("tcam: layout %s reserves all %d slots", layout.Name(), slots)
		}
	}
	return &TCAM{
		layout: layout,
		tie:    layout.TieBreak(),
		timing: timing,
		slots:  make([]slot, slots),
		valid:  make([]int32, 0, slots),
		where:  make(map[uint64]*locator, slots),
		usable: usable,
	}, nil
}

// Capacity is the number of slots.
func (t *TCAM) Capacity() int { return len(t.slots) }

// Len is the number of entries held.
func (t *TCAM) Len() int { return len(t.where) }

// Usable is the number of entries the TCAM can hold: Capacity less the
// slots its layout reserves (hermes's shadow slice; 0 for the others).
func (t *TCAM) Usable() int { return t.usable }

// Full reports whether the TCAM holds Usable() entries, so that an insert
// would fail.
func (t *TCAM) Full() bool { return len(t.where) >= t.usable }

// Layout is the layout policy the TCAM was built with.
func (t *TCAM) Layout() Layout { return t.layout }

// TieBreak is the tie rule the layout gives; a Classifier meant to agree
// with this TCAM must use the same one.
func (t *TCAM) TieBreak() TieBreak { return t.tie }

// Timing is the timing the TCAM counts cycles with.
func (t *TCAM) Timing() Timing { return t.timing }

// Total is the sum of the cost of every operation so far.
func (t *TCAM) Total() Cost { return t.total }

// SlotOf returns the slot holding entry id. It reads the driver's shadow
// copy, not the chip, so it costs nothing.
func (t *TCAM) SlotOf(id uint64) (int, bool) {
	loc, ok := t.where[id]
	if !ok {
		return -1, false
	}
	return int(loc.slot), true
}

// Entries returns the entries in lookup order (from the driver's shadow
// copy; no chip cost).
func (t *TCAM) Entries() []Entry {
	out := make([]Entry, 0, len(t.valid))
	for _, s := range t.valid {
		e := t.slots[s].e
		if sp, ok := t.split[e.ID]; ok {
			if sp.pieces[0] != t.slots[s].loc {
				continue // one line per entry, at its first piece
			}
			e = sp.orig
		}
		out = append(out, e)
	}
	return out
}

// Lookup compares k against every slot in parallel (one lookup operation)
// and returns the first matching valid slot.
func (t *TCAM) Lookup(k Key) (slotIndex int, e Entry, ok bool) {
	t.charge(Cost{Lookups: 1})
	for _, s := range t.valid {
		if t.slots[s].e.Rule.Matches(&k) {
			e := t.slots[s].e
			if sp, ok := t.split[e.ID]; ok {
				e = sp.orig // a piece answers as the rule it was cut from
			}
			return int(s), e, true
		}
	}
	return -1, Entry{}, false
}

// RecordLookup charges one lookup without scanning: for callers that got
// the answer from a Classifier holding the same entries (see Mirror).
func (t *TCAM) RecordLookup() { t.charge(Cost{Lookups: 1}) }

// Read reads one slot from the chip (one read operation).
func (t *TCAM) Read(slotIndex int) (Entry, bool, error) {
	if slotIndex < 0 || slotIndex >= len(t.slots) {
		return Entry{}, false, fmt.Errorf("tcam: read slot %d outside 0..%d", slotIndex, len(t.slots)-1)
	}
	t.charge(Cost{Reads: 1})
	s := t.slots[slotIndex]
	return s.e, s.valid, nil
}

// InsertCost returns what Insert(e) would cost now, without changing
// anything. It takes O(log n) time for the ordered layouts.
func (t *TCAM) InsertCost(e Entry) (Cost, error) {
	if err := t.checkInsertable(e); err != nil {
		return Cost{}, err
	}
	p, err := t.layout.place(t, e, false)
	if err != nil {
		return Cost{}, fmt.Errorf("tcam: place id %d with layout %s: %w", e.ID, t.layout.Name(), err)
	}
	return t.insertCost(p, t.freeSlots()), nil
}

// Insert places e where the layout says, moving other entries as needed,
// and returns the cost of the operation.
func (t *TCAM) Insert(e Entry) (Cost, error) {
	if err := t.checkInsertable(e); err != nil {
		return Cost{}, err
	}
	p, err := t.layout.place(t, e, true)
	if err != nil {
		return Cost{}, fmt.Errorf("tcam: place id %d with layout %s: %w", e.ID, t.layout.Name(), err)
	}
	free := t.freeSlots()
	if err := t.execute(e, p); err != nil {
		return Cost{}, fmt.Errorf("tcam: insert id %d with layout %s: %w", e.ID, t.layout.Name(), err)
	}
	c := t.insertCost(p, free)
	t.charge(c)
	return c, nil
}

// Pending reports whether the layout has deferred work for Background
// (hermes: entries waiting in the shadow slice).
func (t *TCAM) Pending() bool {
	b, ok := t.layout.(backgrounder)
	return ok && b.pending(t)
}

// Background performs one batch of the layout's deferred work through the
// same executor and chain check as an insert, and returns its cost (zero
// when there is none). Callers run it off the insert path, as a switch's
// driver would run a background job; layouts without deferred work never
// have any.
func (t *TCAM) Background() (Cost, error) {
	b, ok := t.layout.(backgrounder)
	if !ok || !b.pending(t) {
		return Cost{}, nil
	}
	p, err := b.background(t)
	if err != nil {
		return Cost{}, fmt.Errorf("tcam: background work of layout %s: %w", t.layout.Name(), err)
	}
	free := t.freeSlots()
	if err := t.execute(Entry{}, p); err != nil {
		return Cost{}, fmt.Errorf("tcam: background work of layout %s: %w", t.layout.Name(), err)
	}
	c := t.insertCost(p, free)
	t.charge(c)
	return c, nil
}

// Delete clears the valid bit of the slot holding entry id (one invalidate
// operation). The slot becomes a hole that later inserts may reuse; no
// entry moves.
func (t *TCAM) Delete(id uint64) (Cost, error) {
	loc, ok := t.where[id]
	if !ok {
		return Cost{}, fmt.Errorf("tcam: delete id %d: %w", id, ErrNotFound)
	}
	// A hermes entry that split shadow entries were cut around: they
	// migrate first, else the region they left to it would fall through
	// to lower rules (hermes_split.go).
	var c Cost
	if r, ok := t.layout.(deleteRepairer); ok {
		p, need, err := r.beforeDelete(t, id)
		if err != nil {
			return Cost{}, fmt.Errorf("tcam: delete id %d with layout %s: %w", id, t.layout.Name(), err)
		}
		if need {
			free := t.freeSlots()
			if err := t.execute(Entry{}, p); err != nil {
				return Cost{}, fmt.Errorf("tcam: delete id %d with layout %s: %w", id, t.layout.Name(), err)
			}
			c = t.insertCost(p, free)
		}
	}
	delete(t.where, id)
	if sp, ok := t.split[id]; ok {
		for _, l := range sp.pieces {
			t.invalidate(int(l.slot))
			c.Invalidates++
		}
		delete(t.split, id)
	} else {
		t.invalidate(int(loc.slot))
		c.Invalidates++
	}
	c.Cycles = t.timing.Cycles(c)
	t.charge(c)
	return c, nil
}

func (t *TCAM) checkInsertable(e Entry) error {
	if _, dup := t.where[e.ID]; dup {
		return fmt.Errorf("tcam: insert id %d: %w", e.ID, ErrDuplicateID)
	}
	if t.Full() {
		return fmt.Errorf("tcam: insert id %d into %d slots: %w", e.ID, len(t.slots), ErrFull)
	}
	return nil
}

// freeSlots is the number of slots not holding an entry (or a piece).
func (t *TCAM) freeSlots() int { return len(t.slots) - len(t.valid) }

// insertCost is the cost of plan p (its moves and invalidates, then one
// write of the new entry unless it writes none), with free slots free
// before it.
func (t *TCAM) insertCost(p placement, free int) Cost {
	m := int64(p.count)
	c := Cost{Writes: m + int64(len(p.writes)), Reads: m, Moves: m, Invalidates: int64(p.clears)}
	if p.slot != noWrite {
		c.Writes++
	}
	if t.timing.SlowMoveFreeSlots > 0 && free <= t.timing.SlowMoveFreeSlots {
		c.SlowMoves = m
	}
	c.Cycles = t.timing.Cycles(c)
	return c
}

// charge adds c to the running total; lookups and reads price themselves
// here since their cost does not depend on the state.
func (t *TCAM) charge(c Cost) {
	if c.Cycles == 0 {
		c.Cycles = t.timing.Cycles(c)
	}
	t.total = t.total.Add(c)
}
