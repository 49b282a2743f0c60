package tcam

import (
	"fmt"
	"strconv"
	"strings"
)

// Layout is a driver policy deciding where a new entry goes and which
// entries move to make room. Implementations live in this package (place
// is unexported) so that every layout's plans go through the same
// executor, chain check and cost accounting; a new layout (for example a
// move-minimising one) is one more type implementing this interface plus
// one more case in LayoutByName.
type Layout interface {
	// Name is the layout's name as used in profiles and reports.
	Name() string
	// TieBreak is the rule for equal-priority overlapping entries that
	// this layout's placement yields.
	TieBreak() TieBreak
	// place plans the insert of e into t (which is not full and does not
	// hold e.ID). With build false only slot and count are needed, and the
	// call must be cheap: InsertCost relies on it.
	place(t *TCAM, e Entry, build bool) (placement, error)
}

// reserver is implemented by layouts that keep some slots out of the
// usable capacity (hermes's shadow slice).
type reserver interface {
	reserved(capacity int) int
}

// backgrounder is implemented by layouts with deferred work that the
// caller runs off the insert path through TCAM.Background.
type backgrounder interface {
	pending(t *TCAM) bool
	background(t *TCAM) (placement, error)
}

// Names of the layouts LayoutByName knows.
const (
	HighestFirstName  = "highest-first"
	LowestFirstName   = "lowest-first"
	RuleTrisName      = "ruletris"
	FastRuleName      = "fastrule"
	HermesName        = "hermes"
	DefaultLayoutName = HighestFirstName

	// GapPrefix names the gap-k family: "gap-8" is GapK(8).
	GapPrefix = "gap-"
	// DefaultGapK is the k of the gap-k layout LayoutNames lists.
	DefaultGapK = 8
	maxGapK     = 1 << 16
)

// LayoutNames lists the names LayoutByName accepts (for gap-k the listed
// gap-8; any "gap-K" with 1 ≤ K ≤ 65536 is accepted).
func LayoutNames() []string {
	return []string{HighestFirstName, LowestFirstName, GapPrefix + strconv.Itoa(DefaultGapK), RuleTrisName, FastRuleName, HermesName}
}

// LayoutByName returns the layout with the given name; "" means the
// default (highest-first).
func LayoutByName(name string) (Layout, error) {
	switch name {
	case HighestFirstName, "":
		return HighestFirst(), nil
	case LowestFirstName:
		return LowestFirst(), nil
	case RuleTrisName:
		return RuleTris(), nil
	case FastRuleName:
		return FastRule(), nil
	case HermesName:
		return Hermes(DefaultHermesShadow), nil
	}
	if rest, ok := strings.CutPrefix(name, GapPrefix); ok {
		k, err := strconv.Atoi(rest)
		if err != nil || k < 1 || k > maxGapK || strconv.Itoa(k) != rest {
			return nil, fmt.Errorf("tcam: layout %q: k must be an integer in 1..%d", name, maxGapK)
		}
		return GapK(k), nil
	}
	return nil, fmt.Errorf("tcam: unknown layout %q (known: %s, or gap-K for any K)", name, strings.Join(LayoutNames(), ", "))
}

// HighestFirst is the Broadcom layout of paper 000: entries sorted by
// descending priority from slot 0, free space after them. A new entry goes
// right after the last entry that outranks it (after existing equal
// priorities, so the earlier rule wins ties); if that slot is taken, the
// entries below it shift down one slot each into the nearest free slot
// below. Ascending-priority inserts therefore move the whole table every
// time, constant or descending ones never.
func HighestFirst() Layout {
	return orderedLayout{name: HighestFirstName, tie: LowerIDWins, growDown: true}
}

// LowestFirst is the mirror: the driver places the lowest-priority entry
// first, at the far end of the table (slot Capacity()-1), and the table
// grows toward slot 0. The chip's priority encoder still returns the first
// matching slot, so higher priorities still sit at lower slots; what
// changed is that the free space is before the entries. A new entry goes
// right before the first entry it outranks (before existing equal
// priorities, so the later rule wins ties); if that slot is taken, the
// entries above it shift up one slot each into the nearest free slot above.
// Descending-priority inserts move the whole table, constant or ascending
// ones never.
func LowestFirst() Layout {
	return orderedLayout{name: LowestFirstName, tie: HigherIDWins, growDown: false}
}

// orderedLayout keeps all valid entries in strict rank order by slot index
// (rank = TieBreak.Outranks), with holes allowed anywhere. growDown says on
// which side of the entries the free space is kept: after them (true) or
// before them (false).
type orderedLayout struct {
	name     string
	tie      TieBreak
	growDown bool
}

func (l orderedLayout) Name() string       { return l.name }
func (l orderedLayout) TieBreak() TieBreak { return l.tie }

// place puts e between the last entry that outranks it (slot a) and the
// first entry it outranks (slot b). A hole between them costs nothing;
// otherwise the run of entries on the growth side shifts one slot toward
// the nearest free slot on that side, falling back to the other side when
// the table is packed against that end.
func (l orderedLayout) place(t *TCAM, e Entry, build bool) (placement, error) {
	k := t.outrankedBy(&e)
	a, b := t.slotAtRank(k-1), t.slotAtRank(k)
	if b-a > 1 {
		if l.growDown {
			return placement{slot: a + 1}, nil
		}
		return placement{slot: b - 1}, nil
	}
	// b == a+1: no room between them.
	down := func() (placement, bool) {
		f, ok := t.freeAfter(a, k)
		if !ok {
			return placement{}, false
		}
		p := placement{slot: b, count: f - b}
		if build {
			p.moves = t.moveBuf[:0]
			for s := f - 1; s >= b; s-- { // bottom up: never overwrite a live entry
				p.moves = append(p.moves, move{From: s, To: s + 1})
			}
			t.moveBuf = p.moves
		}
		return p, true
	}
	up := func() (placement, bool) {
		g, ok := t.freeBefore(b, k-1)
		if !ok {
			return placement{}, false
		}
		p := placement{slot: a, count: a - g}
		if build {
			p.moves = t.moveBuf[:0]
			for s := g + 1; s <= a; s++ { // top down: never overwrite a live entry
				p.moves = append(p.moves, move{From: s, To: s - 1})
			}
			t.moveBuf = p.moves
		}
		return p, true
	}
	first, second := down, up
	if !l.growDown {
		first, second = up, down
	}
	if p, ok := first(); ok {
		return p, nil
	}
	if p, ok := second(); ok {
		return p, nil
	}
	return placement{}, ErrFull
}
