package calibrate

import "sort"

// Insert is one FLOW_MOD ADD as the fit sees it: how full the table was
// and how many entries each layout hypothesis would shift for it.
type Insert struct {
	// Occ is the number of rules in the table before the insert (the
	// switch's own, calibrate's guard and probe rules).
	Occ int
	// Lower and Higher count the rules with strictly lower / higher
	// priority: the entries a highest-first / lowest-first TCAM shifts
	// (package tcam: a new entry goes after the entries that outrank it,
	// after equal ones, and everything below moves down one slot).
	Lower, Higher int
}

// Moves is the number of entries layout shifts for the insert; layout
// LayoutFlat (no ordering, e.g. a hash table) shifts none.
func (in Insert) Moves(layout string) int {
	switch layout {
	case LayoutHighestFirst:
		return in.Lower
	case LayoutLowestFirst:
		return in.Higher
	}
	return 0
}

// Layout hypotheses the insert fit compares.
const (
	LayoutHighestFirst = "highest-first"
	LayoutLowestFirst  = "lowest-first"
	// LayoutFlat: insert cost does not depend on priorities (no TCAM
	// shifting seen, e.g. Open vSwitch's classifier).
	LayoutFlat = "flat"
)

// PriorityTable tracks the priorities in the switch's table so that each
// insert's Lower/Higher counts are exact. It is a sorted slice: tables
// here hold at most tens of thousands of rules and each insert is one
// binary search and one copy.
type PriorityTable struct{ prios []uint16 }

// Len is the number of rules tracked.
func (t *PriorityTable) Len() int { return len(t.prios) }

// Add records an insert of priority p and returns its Insert record.
func (t *PriorityTable) Add(p uint16) Insert {
	lo := sort.Search(len(t.prios), func(i int) bool { return t.prios[i] >= p })
	hi := sort.Search(len(t.prios), func(i int) bool { return t.prios[i] > p })
	in := Insert{Occ: len(t.prios), Lower: lo, Higher: len(t.prios) - hi}
	t.prios = append(t.prios, 0)
	copy(t.prios[hi+1:], t.prios[hi:])
	t.prios[hi] = p
	return in
}

// Remove forgets one rule of priority p (no-op if none).
func (t *PriorityTable) Remove(p uint16) {
	i := sort.Search(len(t.prios), func(i int) bool { return t.prios[i] >= p })
	if i < len(t.prios) && t.prios[i] == p {
		t.prios = append(t.prios[:i], t.prios[i+1:]...)
	}
}
