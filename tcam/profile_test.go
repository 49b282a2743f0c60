package tcam_test

import (
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/profile"
	"github.com/pseudocong/pseudocong/tcam"
)

func pica8(t *testing.T) *profile.Profile {
	t.Helper()
	p, err := profile.Load("pica8-p3297")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// tcam.Pica8Timing is a copy of the profile's tcam.timing for tests that
// cannot load the profile (package profile imports tcam and
// softswitch/dataplane); it must stay equal to it, slow path aside.
func TestPica8TimingMatchesProfile(t *testing.T) {
	want := pica8(t).TCAM.Timing
	want.SlowMoveFreeSlots, want.DriverPerSlowMove = 0, 0
	if got := tcam.Pica8Timing(); got != want {
		t.Errorf("tcam.Pica8Timing() = %+v\nprofile pica8-p3297 tcam.timing (slow path off) = %+v\n(update tcam/cost.go)", got, want)
	}
}

// The calibration's insert formula on the calibrated TCAM itself, slow
// path included: filled in ascending priority, the k-th insert (0-based)
// shifts all k entries before it, at c_write + k·c_move while more than
// slow_move_free_slots slots are free and c_write + k·c_slow_move after.
func TestPica8AscendingInsertCost(t *testing.T) {
	if testing.Short() {
		t.Skip("long single-goroutine simulation: the race phase (-short) leaves it to the integration phase")
	}
	p := pica8(t)
	layout, err := p.TCAMLayout()
	if err != nil {
		t.Fatal(err)
	}
	tm := p.TCAM.Timing
	n := p.TCAM.Capacity
	tc, err := tcam.New(n, layout, tm)
	if err != nil {
		t.Fatal(err)
	}
	var slow int
	for k := range n {
		c, err := tc.Insert(tcam.Entry{Priority: uint32(k), ID: uint64(k + 1)})
		if err != nil {
			t.Fatal(err)
		}
		perMove := tm.DriverPerMove
		if n-k <= tm.SlowMoveFreeSlots {
			perMove = tm.DriverPerSlowMove
			slow++
		}
		if want := tm.DriverPerWrite + time.Duration(k)*perMove; tm.CPUTime(c) != want || c.Moves != int64(k) {
			t.Fatalf("insert %d: %d moves, CPU %v; want %d moves, %v", k, c.Moves, tm.CPUTime(c), k, want)
		}
	}
	if slow != tm.SlowMoveFreeSlots {
		t.Errorf("%d inserts on the slow path, want the last %d", slow, tm.SlowMoveFreeSlots)
	}
}
