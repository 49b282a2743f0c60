package dataplane

import (
	"errors"
	"fmt"

	"github.com/pseudocong/pseudocong/tcam"
)

// Errors returned (wrapped with context) by Table operations.
var (
	// ErrFull: the TCAM and the backing table together cannot take the
	// rule (the switch answers FLOW_MOD_FAILED/ALL_TABLES_FULL).
	ErrFull = errors.New("tcam and backing table full")
	// ErrExists: the ID is already placed.
	ErrExists = errors.New("rule id already placed")
	// ErrNotFound: the ID is not placed.
	ErrNotFound = errors.New("rule id not placed")
)

// Table is a TCAM cache in front of a backing table. See the package
// comment for the placement rules.
type Table struct {
	tcam *tcam.TCAM
	// entries holds every placed rule (TCAM and backing), so an evicted
	// rule can be re-inserted without reading the chip.
	entries    map[uint64]tcam.Entry
	backing    map[uint64]struct{}
	backingCap int
	evict      Eviction
	m          *Metrics
	stats      Stats
}

// New returns an empty table; m may be nil.
func New(cfg Config, m *Metrics) (*Table, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	t, err := tcam.New(cfg.TCAMSlots, cfg.Layout, cfg.Timing)
	if err != nil {
		return nil, fmt.Errorf("dataplane: %w", err)
	}
	ev := cfg.Eviction
	if ev == nil {
		ev = NewLRU()
	}
	d := &Table{tcam: t, entries: make(map[uint64]tcam.Entry), backing: make(map[uint64]struct{}), backingCap: cfg.BackingCapacity, evict: ev, m: m}
	if m != nil {
		m.tcamCapacity.Set(float64(cfg.TCAMSlots))
		m.backingCapacity.Set(float64(cfg.BackingCapacity))
	}
	d.updateGauges()
	return d, nil
}

// TCAM is the modelled TCAM, for read-only queries (occupancy, slots,
// totals). Changes must go through the Table.
func (d *Table) TCAM() *tcam.TCAM { return d.tcam }

// TieBreak is the TCAM layout's tie rule; the authoritative classifier
// should use the same one.
func (d *Table) TieBreak() tcam.TieBreak { return d.tcam.TieBreak() }

// Eviction is the policy in use.
func (d *Table) Eviction() Eviction { return d.evict }

// Where says where rule id lives.
func (d *Table) Where(id uint64) Location {
	if _, ok := d.tcam.SlotOf(id); ok {
		return InTCAM
	}
	if _, ok := d.backing[id]; ok {
		return InBacking
	}
	return Absent
}

// Len is the number of rules in the TCAM and in the backing table.
func (d *Table) Len() (inTCAM, inBacking int) { return d.tcam.Len(), len(d.backing) }

// Capacity is the TCAM's and the backing table's capacity.
func (d *Table) Capacity() (tcamSlots, backing int) { return d.tcam.Capacity(), d.backingCap }

// Stats returns the running totals.
func (d *Table) Stats() Stats { return d.stats }

// Used tells the eviction policy that a packet hit id in the TCAM.
func (d *Table) Used(id uint64) {
	if _, ok := d.tcam.SlotOf(id); ok {
		d.evict.Used(id)
	}
}

// Preload places e at no modelled cost, for experiment set-up: where is
// InTCAM or InBacking. It never evicts: a full TCAM or backing table is an
// error. The TCAM's own running total still counts the chip operations.
func (d *Table) Preload(e tcam.Entry, where Location) error {
	if d.Where(e.ID) != Absent {
		return fmt.Errorf("dataplane: preload id %d: %w", e.ID, ErrExists)
	}
	switch where {
	case InTCAM:
		if _, err := d.tcam.Insert(e); err != nil {
			return fmt.Errorf("dataplane: preload id %d into tcam: %w", e.ID, err)
		}
		d.evict.Inserted(e.ID)
		d.entries[e.ID] = e
	case InBacking:
		if len(d.backing) >= d.backingCap {
			return fmt.Errorf("dataplane: preload id %d into backing table of %d: %w", e.ID, d.backingCap, ErrFull)
		}
		d.backing[e.ID] = struct{}{}
		d.entries[e.ID] = e
	default:
		return fmt.Errorf("dataplane: preload id %d: location %v is not tcam or backing", e.ID, where)
	}
	d.stats.Preloads++
	d.updateGauges()
	return nil
}

// Add places a new rule: into a free TCAM slot, else into a slot freed by
// evicting the policy's victim to the backing table. The returned Change
// carries the full cost (eviction invalidate plus insert with moves).
func (d *Table) Add(e tcam.Entry) (Change, error) {
	if d.Where(e.ID) != Absent {
		return Change{}, fmt.Errorf("dataplane: add id %d: %w", e.ID, ErrExists)
	}
	ch, err := d.insertIntoTCAM(e, Absent)
	if err != nil {
		return Change{}, fmt.Errorf("dataplane: add id %d: %w", e.ID, err)
	}
	d.stats.Adds++
	d.account(ch, CauseFlowMod)
	return ch, nil
}

// SwapIn brings rule id from the backing table into the TCAM, evicting a
// victim if no slot is free, and returns the full cost. A rule already in
// the TCAM costs nothing (another swap-in or a re-add got there first).
func (d *Table) SwapIn(id uint64) (Change, error) {
	switch d.Where(id) {
	case InTCAM:
		return Change{From: InTCAM, To: InTCAM}, nil
	case Absent:
		return Change{}, fmt.Errorf("dataplane: swap in id %d: %w", id, ErrNotFound)
	}
	e := d.entries[id]
	delete(d.backing, id) // frees the backing slot the victim may need
	ch, err := d.insertIntoTCAM(e, InBacking)
	if err != nil {
		d.backing[id] = struct{}{}
		return Change{}, fmt.Errorf("dataplane: swap in id %d: %w", id, err)
	}
	d.stats.SwapIns++
	if d.m != nil {
		d.m.swapIns.Inc()
	}
	d.account(ch, CauseSwapIn)
	return ch, nil
}

// Remove deletes rule id wherever it is: an invalidate in the TCAM, free
// in the backing table.
func (d *Table) Remove(id uint64) (Change, error) {
	switch d.Where(id) {
	case InTCAM:
		c, err := d.tcam.Delete(id)
		if err != nil {
			return Change{}, fmt.Errorf("dataplane: remove id %d: %w", id, err)
		}
		d.evict.Removed(id)
		delete(d.entries, id)
		d.stats.Removes++
		ch := Change{Cost: c, CPUTime: d.tcam.Timing().CPUTime(c), From: InTCAM, To: Absent}
		d.account(ch, "")
		return ch, nil
	case InBacking:
		delete(d.backing, id)
		delete(d.entries, id)
		d.stats.Removes++
		d.updateGauges()
		return Change{From: InBacking, To: Absent}, nil
	}
	return Change{}, fmt.Errorf("dataplane: remove id %d: %w", id, ErrNotFound)
}

// insertIntoTCAM evicts if needed, then inserts e. On error nothing has
// changed.
func (d *Table) insertIntoTCAM(e tcam.Entry, from Location) (Change, error) {
	ch := Change{From: from, To: InTCAM}
	if d.tcam.Full() {
		if len(d.backing) >= d.backingCap {
			return Change{}, fmt.Errorf("%d tcam slots and %d backing entries in use: %w",
				d.tcam.Capacity(), d.backingCap, ErrFull)
		}
		victim, ok := d.evict.Victim()
		if !ok {
			return Change{}, fmt.Errorf("eviction policy %s named no victim in a full tcam", d.evict.Name())
		}
		if _, ok := d.tcam.SlotOf(victim); !ok {
			return Change{}, fmt.Errorf("eviction policy %s named id %d, which is not in the tcam", d.evict.Name(), victim)
		}
		c, err := d.tcam.Delete(victim)
		if err != nil {
			return Change{}, fmt.Errorf("evict id %d: %w", victim, err)
		}
		d.evict.Removed(victim)
		d.backing[victim] = struct{}{}
		d.stats.Evictions++
		if d.m != nil {
			d.m.evictions.Inc()
		}
		ch.Cost, ch.Evicted, ch.DidEvict = c, victim, true
	}
	c, err := d.tcam.Insert(e)
	if err != nil {
		if ch.DidEvict { // undo: put the victim back where it was
			delete(d.backing, ch.Evicted)
			if _, uerr := d.tcam.Insert(d.entries[ch.Evicted]); uerr == nil {
				d.evict.Inserted(ch.Evicted)
			}
		}
		return Change{}, err
	}
	d.evict.Inserted(e.ID)
	d.entries[e.ID] = e
	ch.Cost = ch.Cost.Add(c)
	ch.CPUTime = d.tcam.Timing().CPUTime(ch.Cost)
	return ch, nil
}

// Pending reports whether the TCAM layout has deferred work (hermes:
// rules waiting in its shadow slice); Background does one batch of it.
func (d *Table) Pending() bool { return d.tcam.Pending() }

// Background runs one batch of the TCAM layout's deferred work through the
// TCAM's executor and returns its cost (zero when there is none). No rule
// changes place between the TCAM and the backing table.
func (d *Table) Background() (Change, error) {
	c, err := d.tcam.Background()
	if err != nil {
		return Change{}, fmt.Errorf("dataplane: %w", err)
	}
	ch := Change{Cost: c, CPUTime: d.tcam.Timing().CPUTime(c), From: InTCAM, To: InTCAM}
	if c != (tcam.Cost{}) {
		d.account(ch, "")
	}
	return ch, nil
}

// Entry returns the placed rule with this ID.
func (d *Table) Entry(id uint64) (tcam.Entry, bool) {
	e, ok := d.entries[id]
	return e, ok
}

// account adds a priced change to the totals and the metrics; cause labels
// the insert-latency observation ("" for a delete).
func (d *Table) account(ch Change, cause string) {
	d.stats.Cost = d.stats.Cost.Add(ch.Cost)
	d.stats.CPUTime += ch.CPUTime
	if d.m != nil {
		d.m.tcamMoves.Add(float64(ch.Cost.Moves))
		d.m.tcamWrites.Add(float64(ch.Cost.Writes))
		d.m.tcamInvalidates.Add(float64(ch.Cost.Invalidates))
		if cause != "" {
			d.m.insertLatency.WithLabelValues(cause).Observe(ch.CPUTime.Seconds())
		}
	}
	d.updateGauges()
}

func (d *Table) updateGauges() {
	if d.m == nil {
		return
	}
	d.m.tcamEntries.Set(float64(d.tcam.Len()))
	d.m.backingEntries.Set(float64(len(d.backing)))
}
