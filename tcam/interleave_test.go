package tcam

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// lookupChecker compares TCAM lookups with a reference for a fixed set of
// probe packets and reports the first disagreement.
type lookupChecker struct {
	tc     *TCAM
	probes []Key
}

func (c lookupChecker) mismatch(ref *reference) string {
	for _, k := range c.probes {
		_, got, gotOK := c.tc.Lookup(k)
		want, wantOK := ref.lookup(k)
		if gotOK != wantOK || (gotOK && got.ID != want.ID) {
			return fmt.Sprintf("key %x: tcam id %d (%v), reference id %d (%v)", k, got.ID, gotOK, want.ID, wantOK)
		}
	}
	return ""
}

// interleaveFixture fills a TCAM of the given layout with n overlapping
// random rules on a few priority levels, leaving spare slots free.
func interleaveFixture(t *testing.T, l Layout, n, spare int, seed uint64) (*TCAM, *reference, lookupChecker, universe) {
	t.Helper()
	u := universe{rand.New(rand.NewPCG(seed, 7))}
	tc := mustNew(t, n+spare, l)
	ref := newReference(l.TieBreak())
	var probes []Key
	for i := range n {
		// A few priority levels so equal priorities overlap too.
		p := uint32(10 + i/4)
		if l.Name() == LowestFirstName {
			p = uint32(10 + (n-i)/4)
		}
		e := Entry{Rule: u.randomRule(), Priority: p, ID: uint64(i + 1)}
		if _, err := tc.Insert(e); err != nil {
			t.Fatal(err)
		}
		ref.entries[e.ID] = e
		probes = append(probes, u.packetNear(e.Rule), u.fields().Key())
	}
	return tc, ref, lookupChecker{tc: tc, probes: probes}, u
}

// TestLookupsDuringShiftSeeOldOrNewTable steps an insert that shifts the
// whole table one chip write at a time and checks every probe packet after
// each write: until the new entry is written the answers must be those of
// the old rule set, afterwards those of the new one.
func TestLookupsDuringShiftSeeOldOrNewTable(t *testing.T) {
	tests := []struct {
		name   string
		layout Layout
		spare  int
		prio   func(tc *TCAM) uint32
		setup  func(tc *TCAM, ref *reference) // makes the shift go the unusual way
	}{
		{"highest-first/shift-down", HighestFirst(), 3, func(*TCAM) uint32 { return 1000 }, nil},
		{"lowest-first/shift-up", LowestFirst(), 3, func(*TCAM) uint32 { return 1 }, nil},
		{"highest-first/shift-up-fallback", HighestFirst(), 0, func(*TCAM) uint32 { return 1 },
			func(tc *TCAM, ref *reference) { deleteFirstSlot(t, tc, ref) }},
		{"lowest-first/shift-down-fallback", LowestFirst(), 0, func(*TCAM) uint32 { return 1000 },
			func(tc *TCAM, ref *reference) { deleteLastSlot(t, tc, ref) }},
		{"highest-first/mid-table", HighestFirst(), 2, func(*TCAM) uint32 { return 15 }, nil},
	}
	for _, tt := range tests {
		for seed := uint64(1); seed <= 5; seed++ {
			t.Run(fmt.Sprintf("%s/seed=%d", tt.name, seed), func(t *testing.T) {
				tc, ref, chk, u := interleaveFixture(t, tt.layout, 40, tt.spare, seed)
				if tt.setup != nil {
					tt.setup(tc, ref)
				}
				if m := chk.mismatch(ref); m != "" {
					t.Fatalf("before insert: %s", m)
				}
				e := Entry{Rule: u.randomRule(), Priority: tt.prio(tc), ID: 9999}
				chk.probes = append(chk.probes, u.packetNear(e.Rule))
				pred, err := tc.InsertCost(e)
				if err != nil {
					t.Fatal(err)
				}
				if pred.Moves < 10 {
					t.Fatalf("fixture shifts only %d entries", pred.Moves)
				}
				newRef := newReference(ref.tie)
				for id, x := range ref.entries {
					newRef.entries[id] = x
				}
				newRef.entries[e.ID] = e

				writes := int64(0)
				tc.afterChipWrite = func() {
					writes++
					want := ref
					if writes > pred.Moves { // the final write installs e
						want = newRef
					}
					if m := chk.mismatch(want); m != "" {
						t.Fatalf("after write %d of %d: %s", writes, pred.Moves+1, m)
					}
				}
				if _, err := tc.Insert(e); err != nil {
					t.Fatal(err)
				}
				tc.afterChipWrite = nil
				if writes != pred.Moves+1 {
					t.Fatalf("%d chip writes, want %d", writes, pred.Moves+1)
				}
				checkInvariants(t, tc)
			})
		}
	}
}

func deleteFirstSlot(t *testing.T, tc *TCAM, ref *reference) {
	t.Helper()
	e := tc.slots[tc.valid[0]].e
	if _, err := tc.Delete(e.ID); err != nil {
		t.Fatal(err)
	}
	delete(ref.entries, e.ID)
}

func deleteLastSlot(t *testing.T, tc *TCAM, ref *reference) {
	t.Helper()
	e := tc.slots[tc.valid[len(tc.valid)-1]].e
	if _, err := tc.Delete(e.ID); err != nil {
		t.Fatal(err)
	}
	delete(ref.entries, e.ID)
}

// TestWrongMoveOrderIsCaught shows the interleaving check can fail: the
// same shift done top-down overwrites an entry before it has been copied,
// and some probe then gets a wrong answer.
func TestWrongMoveOrderIsCaught(t *testing.T) {
	tc, ref, chk, _ := interleaveFixture(t, HighestFirst(), 40, 1, 3)
	caught := false
	// Shift slots 0..39 down by one, top-down (the wrong order).
	for s := 0; s < 40 && !caught; s++ {
		tc.moveSlot(s, s+1)
		caught = chk.mismatch(ref) != ""
	}
	if !caught {
		t.Fatal("top-down shift never gave a wrong answer; the check is too weak")
	}
}

// TestLookupsDuringDelete: a delete is a single invalidate, after which the
// answers are those of the rule set without the entry.
func TestLookupsDuringDelete(t *testing.T) {
	for _, l := range []Layout{HighestFirst(), LowestFirst()} {
		t.Run(l.Name(), func(t *testing.T) {
			tc, ref, chk, _ := interleaveFixture(t, l, 30, 0, 11)
			for id := uint64(1); id <= 30; id += 3 {
				delete(ref.entries, id)
				calls := 0
				tc.afterChipWrite = func() {
					calls++
					if m := chk.mismatch(ref); m != "" {
						t.Fatalf("after deleting %d: %s", id, m)
					}
				}
				if _, err := tc.Delete(id); err != nil {
					t.Fatal(err)
				}
				if calls != 1 {
					t.Fatalf("delete made %d chip writes, want 1", calls)
				}
			}
			tc.afterChipWrite = nil
			checkInvariants(t, tc)
		})
	}
}
