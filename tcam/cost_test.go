package tcam

import (
	"testing"
	"time"
)

func TestTimingTime(t *testing.T) {
	pica := Pica8Timing()
	tests := []struct {
		name     string
		timing   Timing
		cost     Cost
		wantChip time.Duration
		wantCPU  time.Duration
	}{
		{
			// docs/calibration.md: install = c_write + s·c_move.
			name: "pica8 insert shifting 100", timing: pica,
			cost:     Cost{Writes: 101, Reads: 100, Moves: 100, Cycles: 201},
			wantChip: 503 * time.Nanosecond, // 201 cycles at 400 MHz = 502.5 ns
			wantCPU:  pica.DriverPerWrite + 100*pica.DriverPerMove,
		},
		{
			name: "pica8 lookup costs the CPU nothing", timing: pica,
			cost:     Cost{Lookups: 1, Cycles: 1},
			wantChip: 3 * time.Nanosecond, // 2.5 ns rounds half away from zero
			wantCPU:  0,
		},
		{
			name: "explicit reads and invalidates",
			timing: Timing{ClockHz: 1e6, DriverPerRead: time.Millisecond, DriverPerInvalidate: 2 * time.Millisecond,
				DriverPerWrite: time.Hour, DriverPerMove: time.Minute},
			cost:     Cost{Reads: 3, Invalidates: 2, Cycles: 5},
			wantChip: 5 * time.Microsecond,
			wantCPU:  3*time.Millisecond + 4*time.Millisecond,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			chip, cpu := tt.timing.Time(tt.cost)
			if chip != tt.wantChip || cpu != tt.wantCPU {
				t.Errorf("Time = chip %v cpu %v, want chip %v cpu %v", chip, cpu, tt.wantChip, tt.wantCPU)
			}
		})
	}
}

// TestInsertCostMatchesCalibrationFormula drives a real TCAM with the Pica8
// timing: the n-th ascending insert into highest-first must cost
// c_write + (n-1)·c_move of local CPU.
func TestInsertCostMatchesCalibrationFormula(t *testing.T) {
	tm := Pica8Timing()
	tc, err := New(50, HighestFirst(), tm)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		c, err := tc.Insert(Entry{Priority: uint32(i), ID: uint64(i)})
		if err != nil {
			t.Fatal(err)
		}
		want := tm.DriverPerWrite + time.Duration(i)*tm.DriverPerMove
		if got := tm.CPUTime(c); got != want {
			t.Fatalf("insert %d: cpu %v, want %v", i, got, want)
		}
		if wantCycles := int64(2*i + 1); c.Cycles != wantCycles {
			t.Fatalf("insert %d: %d cycles, want %d", i, c.Cycles, wantCycles)
		}
	}
}

func TestTCAMCountsEveryOperation(t *testing.T) {
	tm := Timing{ClockHz: 1e9, CyclesPerLookup: 2, CyclesPerWrite: 3, CyclesPerRead: 5, CyclesPerInvalidate: 7}
	tc, err := New(4, HighestFirst(), tm)
	if err != nil {
		t.Fatal(err)
	}
	mustDo := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	_, err = tc.Insert(Entry{Priority: 1, ID: 1}) // 1 write
	mustDo(err)
	_, err = tc.Insert(Entry{Priority: 2, ID: 2}) // 1 move + 1 write
	mustDo(err)
	tc.Lookup(Key{})       // 1 lookup
	_, _, err = tc.Read(0) // 1 read
	mustDo(err)
	_, err = tc.Delete(1) // 1 invalidate
	mustDo(err)
	want := Cost{Lookups: 1, Writes: 3, Reads: 2, Invalidates: 1, Moves: 1}
	want.Cycles = 1*2 + 3*3 + 2*5 + 1*7
	if got := tc.Total(); got != want {
		t.Errorf("total %+v, want %+v", got, want)
	}
}

func TestTimingValidate(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(*Timing)
		valid bool
	}{
		{"pica8", func(*Timing) {}, true},
		{"zero clock", func(tm *Timing) { tm.ClockHz = 0 }, false},
		{"negative cycles", func(tm *Timing) { tm.CyclesPerWrite = -1 }, false},
		{"negative driver", func(tm *Timing) { tm.DriverPerMove = -time.Microsecond }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tm := Pica8Timing()
			tt.edit(&tm)
			if err := tm.Validate(); (err == nil) != tt.valid {
				t.Errorf("Validate() = %v, want valid=%v", err, tt.valid)
			}
		})
	}
}
