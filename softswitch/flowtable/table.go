package flowtable

import (
	"cmp"
	"slices"
	"time"

	"github.com/pseudocong/pseudocong/openflow"
	"github.com/pseudocong/pseudocong/tcam"
)

// Config sizes a table.
type Config struct {
	// Capacity is the most entries the table holds; an ADD beyond it fails
	// with FLOW_MOD_FAILED/ALL_TABLES_FULL. 0 means DefaultCapacity.
	Capacity int
	// CacheSlots is the classifier's exact-match cache size (0 = none).
	CacheSlots int
	// TieBreak decides between overlapping entries of equal priority
	// (undefined in OpenFlow 1.0). It should be the modelled TCAM
	// layout's (tcam.Layout.TieBreak), so the table answers as the chip
	// would. The zero value, tcam.LowerIDWins, lets the earlier-installed
	// entry win, as a highest-first TCAM that appends equal priorities
	// does; a lowest-first one lets the later entry win (HigherIDWins).
	TieBreak tcam.TieBreak
}

// DefaultCapacity is the table size when Config.Capacity is 0.
const DefaultCapacity = 1 << 20

// strictKey identifies an entry for the strict commands and for ADD's
// replace-if-identical rule.
type strictKey struct {
	rule     tcam.Ternary
	priority uint16
}

// Table is one OpenFlow 1.0 flow table.
type Table struct {
	capacity int
	cls      *tcam.Classifier
	byID     map[uint64]*Entry
	byStrict map[strictKey]*Entry
	nextID   uint64
	listener Listener
	expiry   expiryHeap
	// queuedLive counts entries with a live expiry item.
	queuedLive int

	lookups, matched uint64
}

// New returns an empty table.
func New(cfg Config) *Table {
	if cfg.Capacity <= 0 {
		cfg.Capacity = DefaultCapacity
	}
	return &Table{
		capacity: cfg.Capacity,
		cls:      tcam.NewClassifier(cfg.TieBreak, cfg.CacheSlots),
		byID:     make(map[uint64]*Entry),
		byStrict: make(map[strictKey]*Entry),
		nextID:   1,
	}
}

// SetListener installs the change observer (nil removes it).
func (t *Table) SetListener(l Listener) { t.listener = l }

// Len is the number of entries.
func (t *Table) Len() int { return len(t.byID) }

// TieBreak is the rule for overlapping entries of equal priority.
func (t *Table) TieBreak() tcam.TieBreak { return t.cls.TieBreak() }

// Capacity is the most entries the table holds.
func (t *Table) Capacity() int { return t.capacity }

// Lookups and Matched are the table-stats counters: packets looked up and
// packets that hit an entry.
func (t *Table) Lookups() uint64 { return t.lookups }

// Matched is the number of lookups that found an entry.
func (t *Table) Matched() uint64 { return t.matched }

// Get returns the entry with the given ID.
func (t *Table) Get(id uint64) (*Entry, bool) {
	e, ok := t.byID[id]
	return e, ok
}

// Lookup returns the entry a packet with these fields hits, or nil, and
// counts the lookup in the table stats. It does not touch the entry's
// counters: the caller calls Hit when the packet is really processed.
func (t *Table) Lookup(f *tcam.Fields) *Entry {
	t.lookups++
	te, ok := t.cls.Lookup(f.Key())
	if !ok {
		return nil
	}
	t.matched++
	return t.byID[te.ID]
}

// Hit accounts one packet of n bytes to e at time now (counters and the
// idle timer).
func (t *Table) Hit(e *Entry, n int, now time.Time) {
	e.PacketCount++
	e.ByteCount += uint64(n)
	if now.After(e.LastUsed) {
		e.LastUsed = now
	}
}

// Entries returns every entry in installation order.
func (t *Table) Entries() []*Entry {
	out := make([]*Entry, 0, len(t.byID))
	for _, e := range t.byID {
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b *Entry) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// Select returns, in installation order, the entries a non-strict request
// with this match and out_port selects (flow stats, aggregate stats,
// DELETE): the request's match covers the entry's and the entry outputs to
// outPort (openflow.PortNone = any).
func (t *Table) Select(m openflow.Match, outPort uint16) []*Entry {
	req := MatchToTernary(m)
	var out []*Entry
	for _, e := range t.Entries() {
		if Covers(&req, &e.Rule) && e.OutputsTo(outPort) {
			out = append(out, e)
		}
	}
	return out
}

// Result is what one FLOW_MOD did to the table.
type Result struct {
	// Added is the new entry of an ADD (or of a MODIFY that matched
	// nothing), nil otherwise.
	Added *Entry
	// Replaced is true when Added took the place of an entry with the same
	// match and priority (same ID, counters reset).
	Replaced bool
	// Modified lists entries whose actions a MODIFY changed.
	Modified []*Entry
	// Removed lists entries a DELETE took out, with reason DELETE.
	Removed []Removal
}

// Apply executes one FLOW_MOD at time now. It checks only what the table
// decides (command, overlap, capacity); the switch validates actions and
// buffer ids before. On error the table is unchanged.
func (t *Table) Apply(fm *openflow.FlowMod, now time.Time) (Result, error) {
	switch fm.Command {
	case openflow.FlowModAdd:
		return t.add(fm, now)
	case openflow.FlowModModify, openflow.FlowModModifyStrict:
		return t.modify(fm, now, fm.Command == openflow.FlowModModifyStrict)
	case openflow.FlowModDelete, openflow.FlowModDeleteStrict:
		return t.delete(fm, fm.Command == openflow.FlowModDeleteStrict), nil
	}
	return Result{}, flowModError(openflow.FlowModFailedBadCommand, "unknown FLOW_MOD command %d", fm.Command)
}

func (t *Table) add(fm *openflow.FlowMod, now time.Time) (Result, error) {
	match := NormalizeMatch(fm.Match)
	rule := MatchToTernary(match)
	eff := EffectivePriority(match, fm.Priority)
	if fm.Flags&openflow.FlowModFlagCheckOverlap != 0 {
		for _, e := range t.byID {
			if e.Effective == eff && Overlaps(&e.Rule, &rule) {
				return Result{}, flowModError(openflow.FlowModFailedOverlap,
					"overlaps entry %d at priority %d", e.ID, fm.Priority)
			}
		}
	}
	key := strictKey{rule, fm.Priority}
	if old, ok := t.byStrict[key]; ok {
		// Identical match and priority: replace in place, counters reset.
		t.removeFromExpiry(old)
		old.Cookie, old.IdleTimeout, old.HardTimeout = fm.Cookie, fm.IdleTimeout, fm.HardTimeout
		old.Flags, old.Actions = fm.Flags, cloneActions(fm.Actions)
		old.Installed, old.LastUsed = now, now
		old.PacketCount, old.ByteCount = 0, 0
		t.scheduleExpiry(old)
		if t.listener != nil {
			t.listener.EntryModified(old)
		}
		return Result{Added: old, Replaced: true}, nil
	}
	if len(t.byID) >= t.capacity {
		return Result{}, flowModError(openflow.FlowModFailedAllTablesFull, "table full (%d entries)", t.capacity)
	}
	e := &Entry{
		ID: t.nextID, Match: match, Rule: rule, Priority: fm.Priority, Effective: eff,
		Cookie: fm.Cookie, IdleTimeout: fm.IdleTimeout, HardTimeout: fm.HardTimeout,
		Flags: fm.Flags, Actions: cloneActions(fm.Actions),
		Installed: now, LastUsed: now,
	}
	if err := t.cls.Insert(e.TCAMEntry()); err != nil {
		// Cannot happen with fresh IDs; keep the table consistent anyway.
		return Result{}, flowModError(openflow.FlowModFailedEPerm, "classifier: %v", err)
	}
	t.nextID++
	t.byID[e.ID] = e
	t.byStrict[key] = e
	t.scheduleExpiry(e)
	if t.listener != nil {
		t.listener.EntryAdded(e)
	}
	return Result{Added: e}, nil
}

func (t *Table) modify(fm *openflow.FlowMod, now time.Time, strict bool) (Result, error) {
	var targets []*Entry
	if strict {
		if e, ok := t.byStrict[strictKey{MatchToTernary(fm.Match), fm.Priority}]; ok {
			targets = []*Entry{e}
		}
	} else {
		targets = t.Select(fm.Match, openflow.PortNone)
	}
	if len(targets) == 0 {
		// OpenFlow 1.0: a MODIFY that matches nothing acts as an ADD.
		add := *fm
		add.Command = openflow.FlowModAdd
		return t.add(&add, now)
	}
	for _, e := range targets {
		// OpenFlow 1.0 MODIFY changes the actions only: cookie, timeouts,
		// flags and counters stay.
		e.Actions = cloneActions(fm.Actions)
		if t.listener != nil {
			t.listener.EntryModified(e)
		}
	}
	return Result{Modified: targets}, nil
}

func (t *Table) delete(fm *openflow.FlowMod, strict bool) Result {
	var targets []*Entry
	if strict {
		e, ok := t.byStrict[strictKey{MatchToTernary(fm.Match), fm.Priority}]
		if ok && e.OutputsTo(fm.OutPort) {
			targets = []*Entry{e}
		}
	} else {
		targets = t.Select(fm.Match, fm.OutPort)
	}
	res := Result{Removed: make([]Removal, 0, len(targets))}
	for _, e := range targets {
		res.Removed = append(res.Removed, t.remove(e, openflow.FlowRemovedDelete))
	}
	return res
}

// Remove takes the entry with the given ID out of the table with the given
// reason (for callers that evict entries themselves).
func (t *Table) Remove(id uint64, reason uint8) (Removal, bool) {
	e, ok := t.byID[id]
	if !ok {
		return Removal{}, false
	}
	return t.remove(e, reason), true
}

func (t *Table) remove(e *Entry, reason uint8) Removal {
	_, _ = t.cls.Delete(e.ID)
	delete(t.byID, e.ID)
	delete(t.byStrict, strictKey{e.Rule, e.Priority})
	t.removeFromExpiry(e)
	if t.listener != nil {
		t.listener.EntryRemoved(e, reason)
	}
	return Removal{Entry: e, Reason: reason}
}

// Clear removes every entry with reason DELETE (used when entering
// emergency mode or resetting the switch).
func (t *Table) Clear() []Removal {
	entries := t.Entries()
	out := make([]Removal, 0, len(entries))
	for _, e := range entries {
		out = append(out, t.remove(e, openflow.FlowRemovedDelete))
	}
	return out
}

func cloneActions(a []openflow.Action) []openflow.Action {
	if len(a) == 0 {
		return nil
	}
	return slices.Clone(a)
}
