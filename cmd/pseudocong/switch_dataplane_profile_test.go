package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/internal/clock"
	"github.com/pseudocong/pseudocong/softswitch"
	"github.com/pseudocong/pseudocong/tcam"
)

// --table-size overrides the profile's backing_table.capacity; without it
// the flow table is the TCAM plus the profile's backing table.
func TestSwitchTableSizeFromProfile(t *testing.T) {
	data, err := os.ReadFile("../../profile/builtin/pica8-p3297.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "capacity: 65536") {
		t.Fatal("fixture: backing_table.capacity not in the pica8 profile")
	}
	path := filepath.Join(t.TempDir(), "small.yaml")
	if err := os.WriteFile(path, []byte(strings.Replace(string(data), "capacity: 65536", "capacity: 100", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name                   string
		tableSize              int
		wantBacking, wantTable int
	}{
		{"profile", 0, 100, 4100},
		{"--table-size", 5000, 1000, 5000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := loadSwitchDataPlane(path, tc.tableSize)
			if err != nil {
				t.Fatal(err)
			}
			if d.backing != tc.wantBacking || d.tableCapacity != tc.wantTable {
				t.Errorf("backing, table = %d, %d; want %d, %d", d.backing, d.tableCapacity, tc.wantBacking, tc.wantTable)
			}
		})
	}
}

// The switch's flow table breaks priority ties as the profile's TCAM
// layout does (pipeline.Attach refuses anything else).
func TestSwitchTieBreakFromProfile(t *testing.T) {
	data, err := os.ReadFile("../../profile/builtin/pica8-p3297.yaml")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "lowest.yaml")
	if err := os.WriteFile(path, []byte(strings.Replace(string(data), "layout: highest-first", "layout: lowest-first", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	for arg, want := range map[string]tcam.TieBreak{"pica8-p3297": tcam.LowerIDWins, path: tcam.HigherIDWins} {
		d, err := loadSwitchDataPlane(arg, 0)
		if err != nil {
			t.Fatal(err)
		}
		if d.tieBreak != want {
			t.Errorf("%s: tie break %v, want %v", arg, d.tieBreak, want)
		}
		sw := softswitch.New(clock.NewSim(time.Unix(0, 0)), softswitch.Config{TableCapacity: d.tableCapacity, TieBreak: d.tieBreak})
		pl, err := d.attach(sw, nil, nil)
		if err != nil {
			t.Fatalf("%s: %v", arg, err)
		}
		pl.Stop()
	}
}
