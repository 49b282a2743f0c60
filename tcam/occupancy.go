package tcam

import "sort"

// This file keeps t.valid (the sorted list of valid slot indices) and
// answers the position questions the layouts ask, each by binary search.

// markValid records that slot s now holds a valid entry.
func (t *TCAM) markValid(s int) {
	if t.slots[s].valid {
		return
	}
	t.slots[s].valid = true
	i := sort.Search(len(t.valid), func(i int) bool { return int(t.valid[i]) >= s })
	t.valid = append(t.valid, 0)
	copy(t.valid[i+1:], t.valid[i:])
	t.valid[i] = int32(s)
}

// invalidate clears slot s (one chip invalidate).
func (t *TCAM) invalidate(s int) {
	if !t.slots[s].valid {
		return
	}
	t.slots[s] = slot{}
	i := sort.Search(len(t.valid), func(i int) bool { return int(t.valid[i]) >= s })
	t.valid = append(t.valid[:i], t.valid[i+1:]...)
	if t.afterChipWrite != nil {
		t.afterChipWrite()
	}
}

// outrankedBy counts the valid entries that outrank e. It assumes the
// ordered-layout invariant: valid slots in index order are in rank order.
func (t *TCAM) outrankedBy(e *Entry) int {
	return sort.Search(len(t.valid), func(i int) bool {
		return !t.tie.Outranks(&t.slots[t.valid[i]].e, e)
	})
}

// slotAtRank is the slot of the valid entry at position i of t.valid, with
// the sentinels -1 below the first and Capacity() beyond the last.
func (t *TCAM) slotAtRank(i int) int {
	switch {
	case i < 0:
		return -1
	case i >= len(t.valid):
		return len(t.slots)
	default:
		return int(t.valid[i])
	}
}

// freeAfter returns the first free slot with index > a, where the valid
// entry at position k of t.valid is the first one beyond a. The valid
// slots right after a form a run a+1, a+2, ...; since t.valid is strictly
// increasing, "t.valid[k+j] == a+1+j" holds for a prefix of j, found by
// binary search.
func (t *TCAM) freeAfter(a, k int) (int, bool) {
	n := len(t.valid) - k
	run := sort.Search(n, func(j int) bool { return int(t.valid[k+j]) != a+1+j })
	f := a + 1 + run
	return f, f < len(t.slots)
}

// freeBefore returns the last free slot with index < b, where the valid
// entry at position k of t.valid is the last one before b. Mirror of
// freeAfter.
func (t *TCAM) freeBefore(b, k int) (int, bool) {
	n := k + 1
	run := sort.Search(n, func(j int) bool { return int(t.valid[k-j]) != b-1-j })
	g := b - 1 - run
	return g, g >= 0
}
