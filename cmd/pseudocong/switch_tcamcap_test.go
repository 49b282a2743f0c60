package main

import (
	"errors"
	"testing"

	"github.com/pseudocong/pseudocong/profile"
	"github.com/pseudocong/pseudocong/softswitch/pipeline"
)

// --tcam-capacity replaces the profile's TCAM size and keeps its timings;
// a slow-path threshold above the new size is clamped to it (the same
// "always slow" the sim reads from it); 0 keeps the profile's size.
func TestSwitchTCAMCapacity(t *testing.T) {
	orig, err := profile.Load("pica8-p3297")
	if err != nil {
		t.Fatal(err)
	}
	d, err := loadScaledDataPlane("pica8-p3297", 0, 4)
	if err != nil {
		t.Fatal(err)
	}
	if d.profile.TCAM.Capacity != 4 || d.profile.TCAM.Timing.SlowMoveFreeSlots != 4 {
		t.Errorf("capacity %d, slow_move_free_slots %d; want 4, 4", d.profile.TCAM.Capacity, d.profile.TCAM.Timing.SlowMoveFreeSlots)
	}
	if d.profile.TCAM.Timing.DriverPerWrite != orig.TCAM.Timing.DriverPerWrite || d.profile.Agent != orig.Agent {
		t.Error("scaling changed the timings")
	}
	if want := pipeline.TableCapacity(d.profile, d.backing); d.tableCapacity != want || d.backing != orig.BackingTable.Capacity {
		t.Errorf("table %d, backing %d; want %d, %d", d.tableCapacity, d.backing, want, orig.BackingTable.Capacity)
	}
	if orig2, _ := profile.Load("pica8-p3297"); orig2.TCAM.Capacity != 4000 {
		t.Error("scaling changed the built-in profile")
	}
	same, err := loadScaledDataPlane("pica8-p3297", 0, 0)
	if err != nil || same.profile.TCAM.Capacity != 4000 || same.profile.TCAM.Timing.SlowMoveFreeSlots != 50 {
		t.Errorf("--tcam-capacity 0: %v, %+v", err, same.profile.TCAM)
	}
	big, err := loadScaledDataPlane("pica8-p3297", 0, 10000)
	if err != nil || big.profile.TCAM.Timing.SlowMoveFreeSlots != 50 {
		t.Errorf("--tcam-capacity 10000: %v, slow_move_free_slots %d", err, big.profile.TCAM.Timing.SlowMoveFreeSlots)
	}
	for _, n := range []int{-1, profile.MaxTCAMCapacity + 1} {
		_, err := loadScaledDataPlane("pica8-p3297", 0, n)
		var ue usageError
		if !errors.As(err, &ue) {
			t.Errorf("--tcam-capacity %d: %v, want a usage error", n, err)
		}
	}
	// --table-size is checked against the scaled TCAM.
	if _, err := loadScaledDataPlane("pica8-p3297", 100, 4); err != nil {
		t.Errorf("--table-size 100 on a 4-entry TCAM: %v", err)
	}
}
