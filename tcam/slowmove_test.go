package tcam

import (
	"testing"
	"time"
)

// Near a full table the driver's slow path prices moves at
// DriverPerSlowMove: only for inserts made with at most SlowMoveFreeSlots
// free slots, and only for inserts that move entries.
func TestSlowMovesNearFull(t *testing.T) {
	timing := Pica8Timing()
	timing.SlowMoveFreeSlots = 2
	timing.DriverPerSlowMove = 100 * time.Microsecond
	for _, tc := range []struct {
		name      string
		ascending bool
		wantSlow  []int64 // SlowMoves of inserts 0..5 into 6 slots
	}{
		// Insert k moves k entries; free before it: 6-k. Slow when ≤ 2
		// free, i.e. inserts 4 and 5.
		{"ascending", true, []int64{0, 0, 0, 0, 4, 5}},
		// Descending inserts append: no moves, never slow.
		{"descending", false, []int64{0, 0, 0, 0, 0, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc4, err := New(6, HighestFirst(), timing)
			if err != nil {
				t.Fatal(err)
			}
			for k := range 6 {
				prio := uint32(100 - k)
				if tc.ascending {
					prio = uint32(k)
				}
				e := Entry{Rule: Ternary{Value: Key{uint64(k)}, Mask: Key{^uint64(0)}}, Priority: prio, ID: uint64(k + 1)}
				pre, err := tc4.InsertCost(e)
				if err != nil {
					t.Fatal(err)
				}
				c, err := tc4.Insert(e)
				if err != nil {
					t.Fatal(err)
				}
				if c != pre {
					t.Errorf("insert %d: InsertCost %+v, Insert %+v", k, pre, c)
				}
				if c.SlowMoves != tc.wantSlow[k] {
					t.Errorf("insert %d: %d slow moves of %d, want %d", k, c.SlowMoves, c.Moves, tc.wantSlow[k])
				}
				want := timing.DriverPerWrite + time.Duration(c.Moves-c.SlowMoves)*timing.DriverPerMove +
					time.Duration(c.SlowMoves)*timing.DriverPerSlowMove
				if got := timing.CPUTime(c); got != want {
					t.Errorf("insert %d: CPU time %v, want %v", k, got, want)
				}
			}
			if tot := tc4.Total(); tot.SlowMoves != tc.wantSlow[4]+tc.wantSlow[5] {
				t.Errorf("total slow moves %d", tot.SlowMoves)
			}
		})
	}
}

func TestSlowMoveTimingValidation(t *testing.T) {
	tm := Pica8Timing()
	tm.SlowMoveFreeSlots = -1
	if tm.Validate() == nil {
		t.Error("negative slow_move_free_slots accepted")
	}
	tm = Pica8Timing()
	tm.DriverPerSlowMove = -time.Microsecond
	if tm.Validate() == nil {
		t.Error("negative driver_per_slow_move accepted")
	}
}
