package tcam

import (
	"fmt"
	"testing"
)

// priorities returns n priorities in the given pattern.
func priorities(pattern string, n int) []uint32 {
	p := make([]uint32, n)
	for i := range p {
		switch pattern {
		case "ascending":
			p[i] = uint32(100 + i)
		case "descending":
			p[i] = uint32(100 + n - i)
		case "constant":
			p[i] = 100
		}
	}
	return p
}

func TestInsertMovesByPriorityPattern(t *testing.T) {
	if testing.Short() {
		t.Skip("long single-goroutine simulation: the race phase (-short) leaves it to the integration phase")
	}
	quadratic := func(n int) int64 { return int64(n) * int64(n-1) / 2 }
	none := func(int) int64 { return 0 }
	tests := []struct {
		layout  Layout
		pattern string
		want    func(n int) int64
		// wantEach is the moves of the i-th insert (0-based).
		wantEach func(i int) int64
	}{
		{HighestFirst(), "ascending", quadratic, func(i int) int64 { return int64(i) }},
		{HighestFirst(), "descending", none, func(int) int64 { return 0 }},
		{HighestFirst(), "constant", none, func(int) int64 { return 0 }},
		{LowestFirst(), "descending", quadratic, func(i int) int64 { return int64(i) }},
		{LowestFirst(), "ascending", none, func(int) int64 { return 0 }},
		{LowestFirst(), "constant", none, func(int) int64 { return 0 }},
	}
	for _, tt := range tests {
		for _, n := range []int{1, 2, 10, 257} {
			for _, spare := range []int{0, 5} { // a full table and one with room
				name := fmt.Sprintf("%s/%s/n=%d/spare=%d", tt.layout.Name(), tt.pattern, n, spare)
				t.Run(name, func(t *testing.T) {
					tc := mustNew(t, n+spare, tt.layout)
					for i, p := range priorities(tt.pattern, n) {
						e := Entry{Priority: p, ID: uint64(i + 1)}
						predicted, err := tc.InsertCost(e)
						if err != nil {
							t.Fatal(err)
						}
						c, err := tc.Insert(e)
						if err != nil {
							t.Fatal(err)
						}
						if c != predicted {
							t.Fatalf("insert %d cost %+v, InsertCost predicted %+v", i, c, predicted)
						}
						if c.Moves != tt.wantEach(i) {
							t.Fatalf("insert %d made %d moves, want %d", i, c.Moves, tt.wantEach(i))
						}
						checkInvariants(t, tc)
					}
					tot := tc.Total()
					if tot.Moves != tt.want(n) {
						t.Errorf("total moves %d, want %d", tot.Moves, tt.want(n))
					}
					if tot.Writes != tot.Moves+int64(n) || tot.Reads != tot.Moves {
						t.Errorf("writes %d reads %d for %d moves and %d inserts", tot.Writes, tot.Reads, tot.Moves, n)
					}
				})
			}
		}
	}
}

func TestLayoutsPackAgainstTheirEnd(t *testing.T) {
	tests := []struct {
		layout    Layout
		wantSlots []int
	}{
		{HighestFirst(), []int{0, 1, 2}},
		{LowestFirst(), []int{5, 6, 7}},
	}
	for _, tt := range tests {
		t.Run(tt.layout.Name(), func(t *testing.T) {
			tc := mustNew(t, 8, tt.layout)
			for i, p := range []uint32{5, 7, 6} {
				if _, err := tc.Insert(Entry{Priority: p, ID: uint64(i + 1)}); err != nil {
					t.Fatal(err)
				}
			}
			for i, s := range tt.wantSlots {
				e, ok, err := tc.Read(s)
				if err != nil || !ok {
					t.Fatalf("slot %d empty (%v)", s, err)
				}
				if want := []uint32{7, 6, 5}[i]; e.Priority != want {
					t.Errorf("slot %d holds priority %d, want %d", s, e.Priority, want)
				}
			}
		})
	}
}

func TestHoleReuseAndShiftFallback(t *testing.T) {
	tests := []struct {
		name      string
		layout    Layout
		initial   []uint32 // priorities inserted in order, IDs 1..
		deleteIDs []uint64
		insert    uint32
		wantMoves int64
		wantSlot  int
	}{
		// Full highest-first table, top entry deleted: a new lowest entry has
		// nothing free below it, so the entries above shift up into the hole.
		{"hf/up-fallback", HighestFirst(), []uint32{40, 30, 20, 10}, []uint64{1}, 5, 3, 3},
		// A hole between 30 and 10 takes a priority-20 entry with no moves.
		{"hf/hole-reuse", HighestFirst(), []uint32{40, 30, 20, 10}, []uint64{3}, 25, 0, 2},
		// Hole in the middle, new top entry: shifting down stops at the hole.
		{"hf/down-to-hole", HighestFirst(), []uint32{40, 30, 20, 10}, []uint64{3}, 50, 2, 0},
		// Lowest-first mirror of up-fallback: bottom entry deleted, new top
		// entry with nothing free above shifts the rest down.
		{"lf/down-fallback", LowestFirst(), []uint32{10, 20, 30, 40}, []uint64{1}, 50, 3, 0},
		{"lf/hole-reuse", LowestFirst(), []uint32{10, 20, 30, 40}, []uint64{2}, 15, 0, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tc := mustNew(t, len(tt.initial), tt.layout)
			for i, p := range tt.initial {
				if _, err := tc.Insert(Entry{Priority: p, ID: uint64(i + 1)}); err != nil {
					t.Fatal(err)
				}
			}
			for _, id := range tt.deleteIDs {
				c, err := tc.Delete(id)
				if err != nil {
					t.Fatal(err)
				}
				if c.Invalidates != 1 || c.Moves != 0 {
					t.Fatalf("delete cost %+v, want one invalidate", c)
				}
			}
			e := Entry{Priority: tt.insert, ID: 100}
			pred, err := tc.InsertCost(e)
			if err != nil {
				t.Fatal(err)
			}
			c, err := tc.Insert(e)
			if err != nil {
				t.Fatal(err)
			}
			if c != pred || c.Moves != tt.wantMoves {
				t.Errorf("moves %d (predicted %d), want %d", c.Moves, pred.Moves, tt.wantMoves)
			}
			if s, _ := tc.SlotOf(100); s != tt.wantSlot {
				t.Errorf("new entry in slot %d, want %d", s, tt.wantSlot)
			}
			checkInvariants(t, tc)
		})
	}
}

func TestInsertErrors(t *testing.T) {
	tc := mustNew(t, 2, HighestFirst())
	for id := uint64(1); id <= 2; id++ {
		if _, err := tc.Insert(Entry{Priority: 1, ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		run  func() error
		want error
	}{
		{"duplicate", func() error { _, err := tc.Insert(Entry{ID: 1}); return err }, ErrDuplicateID},
		{"full", func() error { _, err := tc.Insert(Entry{ID: 3}); return err }, ErrFull},
		{"full-cost", func() error { _, err := tc.InsertCost(Entry{ID: 3}); return err }, ErrFull},
		{"delete-missing", func() error { _, err := tc.Delete(9); return err }, ErrNotFound},
		{"read-range", func() error { _, _, err := tc.Read(2); return err }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.run()
			if err == nil {
				t.Fatal("no error")
			}
			if tt.want != nil && !isErr(err, tt.want) {
				t.Errorf("error %v, want %v", err, tt.want)
			}
		})
	}
	if !tc.Full() || tc.Len() != 2 || tc.Capacity() != 2 {
		t.Errorf("state changed by failed calls: len %d full %v", tc.Len(), tc.Full())
	}
}

func TestLayoutByName(t *testing.T) {
	for _, name := range append(LayoutNames(), "") {
		l, err := LayoutByName(name)
		if err != nil {
			t.Fatalf("%q: %v", name, err)
		}
		want := name
		if name == "" {
			want = DefaultLayoutName
		}
		if l.Name() != want {
			t.Errorf("LayoutByName(%q).Name() = %q", name, l.Name())
		}
	}
	if _, err := LayoutByName("fastest-first"); err == nil {
		t.Error("unknown layout accepted")
	}
}

func TestNewRejectsBadArguments(t *testing.T) {
	if _, err := New(0, HighestFirst(), unitTiming()); err == nil {
		t.Error("zero slots accepted")
	}
	if _, err := New(4, nil, unitTiming()); err == nil {
		t.Error("nil layout accepted")
	}
	if _, err := New(4, HighestFirst(), Timing{}); err == nil {
		t.Error("zero clock accepted")
	}
}
