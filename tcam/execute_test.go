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
