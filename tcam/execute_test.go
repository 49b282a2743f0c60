package tcam

import "testing"

// TestExecuteRejectsBrokenChains: a future layout that plans an unsafe
// sequence must be stopped before it touches the chip.
func TestExecuteRejectsBrokenChains(t *testing.T) {
	// Slots: 0:A(30) 1:B(20) 2:C(10) 3:free 4:free
	fresh := func(t *testing.T) *TCAM {
		tc := mustNew(t, 5, HighestFirst())
		for i, p := range []uint32{30, 20, 10} {
			if _, err := tc.Insert(Entry{Priority: p, ID: uint64(i + 1)}); err != nil {
				t.Fatal(err)
			}
		}
		return tc
	}
	tests := []struct {
		name string
		p    placement
		ok   bool
	}{
		{"valid shift", placement{slot: 1, count: 2, moves: []move{{2, 3}, {1, 2}}}, true},
		{"valid free write", placement{slot: 4}, true},
		{"count mismatch", placement{slot: 1, count: 1, moves: []move{{2, 3}, {1, 2}}}, false},
		{"first move onto live slot", placement{slot: 2, count: 1, moves: []move{{2, 1}}}, false},
		{"move from empty slot", placement{slot: 4, count: 1, moves: []move{{4, 3}}}, false},
		{"broken chain", placement{slot: 0, count: 2, moves: []move{{2, 3}, {0, 4}}}, false},
		{"final write off chain", placement{slot: 4, count: 1, moves: []move{{2, 3}}}, false},
		{"write onto live slot", placement{slot: 1}, false},
		{"out of range", placement{slot: 5}, false},
		{"move in place", placement{slot: 2, count: 1, moves: []move{{2, 2}}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tc := fresh(t)
			before := tc.Entries()
			err := tc.execute(Entry{Priority: 25, ID: 9}, tt.p)
			if (err == nil) != tt.ok {
				t.Fatalf("execute error %v, want ok=%v", err, tt.ok)
			}
			if !tt.ok {
				after := tc.Entries()
				if len(after) != len(before) {
					t.Fatalf("rejected plan changed the table: %v -> %v", before, after)
				}
				for i := range after {
					if after[i] != before[i] {
						t.Fatalf("rejected plan changed the table: %v -> %v", before, after)
					}
				}
			}
		})
	}
}

func TestEntriesInLookupOrder(t *testing.T) {
	for _, l := range []Layout{HighestFirst(), LowestFirst()} {
		t.Run(l.Name(), func(t *testing.T) {
			tc := mustNew(t, 10, l)
			for i, p := range []uint32{5, 9, 1, 9, 7} {
				if _, err := tc.Insert(Entry{Priority: p, ID: uint64(i + 1)}); err != nil {
					t.Fatal(err)
				}
			}
			got := tc.Entries()
			wantIDs := []uint64{2, 4, 5, 1, 3} // 9 (lower id first), 9, 7, 5, 1
			if l.TieBreak() == HigherIDWins {
				wantIDs = []uint64{4, 2, 5, 1, 3}
			}
			for i, e := range got {
				if e.ID != wantIDs[i] {
					t.Fatalf("lookup order %v, want ids %v", got, wantIDs)
				}
			}
		})
	}
}

// TestExecuteChecksGeneralPlans: the general-plan check (several chains,
// invalidates, no new entry) stops every unsafe plan before the chip.
func TestExecuteChecksGeneralPlans(t *testing.T) {
	// Slots: 0:A(30) 1:B(20) 2:C(10) 3:free 4:free
	fresh := func(t *testing.T) *TCAM {
		tc := mustNew(t, 5, HighestFirst())
		for i, p := range []uint32{30, 20, 10} {
			if _, err := tc.Insert(Entry{Priority: p, ID: uint64(i + 1)}); err != nil {
				t.Fatal(err)
			}
		}
		return tc
	}
	g := func(slot, count, clears int, moves ...move) placement {
		return placement{slot: slot, count: count, clears: clears, moves: moves, general: true}
	}
	tests := []struct {
		name string
		p    placement
		ok   bool
	}{
		{"two chains and a clear", g(1, 2, 1, move{2, 4}, move{1, 3}, move{2, clearSlot}), true},
		{"background move and clear", g(noWrite, 1, 1, move{2, 4}, move{2, clearSlot}), true},
		{"stale copy left", g(noWrite, 1, 0, move{2, 4}), false},
		{"clear of a live slot", g(noWrite, 0, 1, move{1, clearSlot}), false},
		{"clear of a free slot", g(noWrite, 0, 1, move{3, clearSlot}), false},
		{"move onto a live slot", g(noWrite, 1, 1, move{2, 1}, move{2, clearSlot}), false},
		{"move from a stale slot", g(1, 2, 0, move{1, 3}, move{1, 4}), false},
		{"counts disagree", g(1, 1, 0, move{2, 4}, move{1, 3}, move{2, clearSlot}), false},
		{"new entry onto a live slot", g(0, 0, 0), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tc := fresh(t)
			before := tc.Entries()
			err := tc.execute(Entry{Priority: 25, ID: 9}, tt.p)
			if (err == nil) != tt.ok {
				t.Fatalf("execute error %v, want ok=%v", err, tt.ok)
			}
			if !tt.ok && len(tc.Entries()) != len(before) {
				t.Fatalf("rejected plan changed the table")
			}
			if tt.ok {
				checkInvariants(t, tc)
			}
		})
	}
}

// TestGapKLeavesAGapEveryK: runs of descending (or constant) priorities
// fill a gap-k table without moves (while the half below the first entry
// lasts), leaving one free slot after every k
// entries, so a later insert anywhere shifts at most k entries.
func TestGapKLeavesAGapEveryK(t *testing.T) {
	for _, k := range []int{1, 3, 8} {
		tc := mustNew(t, 500, GapK(k)) // an empty table starts in the middle
		for i := range 100 {
			c, err := tc.Insert(Entry{Priority: uint32(1000 - i), ID: uint64(i + 1)})
			if err != nil || c.Moves != 0 {
				t.Fatalf("k=%d insert %d: %d moves, %v", k, i, c.Moves, err)
			}
		}
		run := 0
		for s := int(tc.valid[0]); s <= int(tc.valid[len(tc.valid)-1]); s++ {
			if tc.slots[s].valid {
				run++
				if run > k {
					t.Fatalf("k=%d: %d entries in a row ending at slot %d", k, run, s)
				}
			} else {
				run = 0
			}
		}
		// An insert in the middle of the run shifts at most k entries.
		c, err := tc.Insert(Entry{Priority: 950, ID: 1000})
		if err != nil || c.Moves > int64(k) {
			t.Errorf("k=%d: mid insert %d moves (%v), want ≤ %d", k, c.Moves, err, k)
		}
		checkInvariants(t, tc)
	}
}
