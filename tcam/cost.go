package tcam

import (
	"fmt"
	"math"
	"time"
)

// Cost counts the chip operations one TCAM call (or a sum of calls) made.
//
// A move relocates one entry: the driver reads it and writes it into
// another slot, so each move also appears once in Reads and once in Writes.
// Writes-Moves is therefore the number of new entries written, and
// Reads-Moves the number of explicit reads. Cycles is the chip time of all
// of it under the TCAM's Timing.
type Cost struct {
	Lookups     int64
	Writes      int64
	Reads       int64
	Invalidates int64
	Moves       int64
	// SlowMoves counts the moves (a subset of Moves) made while the TCAM
	// had at most Timing.SlowMoveFreeSlots free slots: the driver's slow
	// path (see Timing).
	SlowMoves int64
	Cycles    int64
}

// Add returns the field-wise sum of c and o.
func (c Cost) Add(o Cost) Cost {
	return Cost{
		Lookups:     c.Lookups + o.Lookups,
		Writes:      c.Writes + o.Writes,
		Reads:       c.Reads + o.Reads,
		Invalidates: c.Invalidates + o.Invalidates,
		Moves:       c.Moves + o.Moves,
		SlowMoves:   c.SlowMoves + o.SlowMoves,
		Cycles:      c.Cycles + o.Cycles,
	}
}

// Timing turns operation counts into time. The chip part (cycles at
// ClockHz) is spent in the switch ASIC; the driver part is spent by the
// switch's local CPU, which on real switches dominates by orders of
// magnitude (the driver computes the new layout, talks to the chip over a
// slow bus and checks every write). The two are reported separately so the
// agent can charge the driver part to the local CPU's time line.
//
// The struct carries yaml tags so profiles can be decoded into it
// directly; this package itself does not read YAML.
type Timing struct {
	ClockHz             float64 `yaml:"clock_hz"`
	CyclesPerLookup     int64   `yaml:"cycles_per_lookup"`
	CyclesPerWrite      int64   `yaml:"cycles_per_write"`
	CyclesPerRead       int64   `yaml:"cycles_per_read"`
	CyclesPerInvalidate int64   `yaml:"cycles_per_invalidate"`

	// DriverPerWrite is the local-CPU cost of installing one new entry.
	DriverPerWrite time.Duration `yaml:"driver_per_write"`
	// DriverPerMove is the local-CPU cost of relocating one entry (its read
	// and its write together).
	DriverPerMove time.Duration `yaml:"driver_per_move"`
	// DriverPerRead is the local-CPU cost of an explicit entry read.
	DriverPerRead time.Duration `yaml:"driver_per_read"`
	// DriverPerInvalidate is the local-CPU cost of removing one entry.
	DriverPerInvalidate time.Duration `yaml:"driver_per_invalidate"`

	// SlowMoveFreeSlots and DriverPerSlowMove model the driver's slow path
	// near a full table: an insert made while at most SlowMoveFreeSlots
	// slots are free moves each entry at DriverPerSlowMove instead of
	// DriverPerMove. The driver shifts a run of entries in blocks staged
	// through free slots; with fewer free slots than a block it must move
	// entries one by one (read, write, verify each). Only inserts that move
	// entries pay it, so constant and descending priorities stay flat.
	// 0 slots disables it.
	SlowMoveFreeSlots int           `yaml:"slow_move_free_slots"`
	DriverPerSlowMove time.Duration `yaml:"driver_per_slow_move"`
}

// Pica8Timing is the tcam.timing section of the calibrated profile,
// profile/builtin/pica8-p3297.yaml (which says where each number comes
// from; docs/calibration.md has the fit), without its slow path near a
// full table (SlowMoveFreeSlots 0).
//
// It is a copy for the tests of the packages that package profile imports
// (tcam, softswitch/dataplane), which cannot load the profile. The slow
// path is left out because those tests price small tables by hand with the
// plain per-move cost, and every slot of a small table is inside the
// profile's 50-slot window; set the two fields where it matters.
// TestPica8TimingMatchesProfile (package tcam_test) fails when the copy
// and the profile differ. Everything else reads the profile.
func Pica8Timing() Timing {
	return Timing{
		ClockHz:             400e6,
		CyclesPerLookup:     1,
		CyclesPerWrite:      1,
		CyclesPerRead:       1,
		CyclesPerInvalidate: 1,
		DriverPerWrite:      300 * time.Microsecond,
		DriverPerMove:       14400 * time.Nanosecond,
		DriverPerRead:       16 * time.Microsecond,
		DriverPerInvalidate: 300 * time.Microsecond,
	}
}

// Validate reports the first field that cannot be used.
func (tm Timing) Validate() error {
	if !(tm.ClockHz > 0) || math.IsInf(tm.ClockHz, 0) {
		return fmt.Errorf("tcam timing: clock_hz must be positive and finite, got %v", tm.ClockHz)
	}
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"cycles_per_lookup", tm.CyclesPerLookup},
		{"cycles_per_write", tm.CyclesPerWrite},
		{"cycles_per_read", tm.CyclesPerRead},
		{"cycles_per_invalidate", tm.CyclesPerInvalidate},
	} {
		if f.v < 0 {
			return fmt.Errorf("tcam timing: %s must not be negative, got %d", f.name, f.v)
		}
	}
	for _, f := range []struct {
		name string
		v    time.Duration
	}{
		{"driver_per_write", tm.DriverPerWrite},
		{"driver_per_move", tm.DriverPerMove},
		{"driver_per_read", tm.DriverPerRead},
		{"driver_per_invalidate", tm.DriverPerInvalidate},
		{"driver_per_slow_move", tm.DriverPerSlowMove},
	} {
		if f.v < 0 {
			return fmt.Errorf("tcam timing: %s must not be negative, got %v", f.name, f.v)
		}
	}
	if tm.SlowMoveFreeSlots < 0 {
		return fmt.Errorf("tcam timing: slow_move_free_slots must not be negative, got %d", tm.SlowMoveFreeSlots)
	}
	return nil
}

// Cycles is the chip cycles of the operations counted in c (c.Cycles is
// ignored): a move costs one read and one write.
func (tm Timing) Cycles(c Cost) int64 {
	return c.Lookups*tm.CyclesPerLookup + c.Writes*tm.CyclesPerWrite +
		c.Reads*tm.CyclesPerRead + c.Invalidates*tm.CyclesPerInvalidate
}

// ChipTime is c.Cycles at the chip clock, rounded to the nanosecond.
func (tm Timing) ChipTime(c Cost) time.Duration {
	return time.Duration(math.Round(float64(c.Cycles) * (1e9 / tm.ClockHz)))
}

// CPUTime is the local-CPU (driver) time of the operations in c. Lookups
// happen in the chip and cost the CPU nothing.
func (tm Timing) CPUTime(c Cost) time.Duration {
	newWrites := c.Writes - c.Moves
	plainReads := c.Reads - c.Moves
	return time.Duration(newWrites)*tm.DriverPerWrite +
		time.Duration(c.Moves-c.SlowMoves)*tm.DriverPerMove +
		time.Duration(c.SlowMoves)*tm.DriverPerSlowMove +
		time.Duration(plainReads)*tm.DriverPerRead +
		time.Duration(c.Invalidates)*tm.DriverPerInvalidate
}

// Time returns both parts: chip time and local-CPU time.
func (tm Timing) Time(c Cost) (chip, cpu time.Duration) {
	return tm.ChipTime(c), tm.CPUTime(c)
}
