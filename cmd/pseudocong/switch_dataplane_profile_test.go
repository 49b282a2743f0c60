package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/internal/clock"
	"github.com/pseudocong/pseudocong/openflow"
	"github.com/pseudocong/pseudocong/profile"
	"github.com/pseudocong/pseudocong/softswitch"
	"github.com/pseudocong/pseudocong/softswitch/dataplane"
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

// --table-size out of range is a usage error naming the range, before any
// table is allocated (1e12 used to be accepted and allocate at run time).
func TestSwitchTableSizeBounds(t *testing.T) {
	for _, size := range []int{-1, 4000, 4000 + profile.MaxBackingCapacity + 1, 1e12} {
		_, err := loadSwitchDataPlane("pica8-p3297", size)
		var ue usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), "must be in [4001, ") {
			t.Errorf("--table-size %d: %v, want a usage error naming the range", size, err)
		}
	}
	if _, err := loadSwitchDataPlane("pica8-p3297", 4000+profile.MaxBackingCapacity); err != nil {
		t.Errorf("largest --table-size refused: %v", err)
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

// The switch's pipeline takes the swap-in upcall from the profile's
// backing_table.swap_in_upcall: a packet whose rule is only in the backing
// table waits packet_in_cost longer with it on (the built-in) than with it
// off (a copy of the profile with the key flipped). Fails if attach
// ignores the key (hard-codes either value).
func TestSwitchSwapInUpcallFromProfile(t *testing.T) {
	data, err := os.ReadFile("../../profile/builtin/pica8-p3297.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "swap_in_upcall: true") {
		t.Fatal("fixture: swap_in_upcall: true not in the pica8 profile")
	}
	off := filepath.Join(t.TempDir(), "no-upcall.yaml")
	if err := os.WriteFile(off, []byte(strings.Replace(string(data), "swap_in_upcall: true", "swap_in_upcall: false", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		arg    string
		upcall bool
	}{{"pica8-p3297", true}, {off, false}} {
		d, err := loadSwitchDataPlane(tc.arg, 0)
		if err != nil {
			t.Fatal(err)
		}
		got := swapInDelay(t, d)
		// The swap-in into an empty TCAM is one write; the packet then
		// leaves after the hit delay. Virtual clock: exact.
		p := d.profile
		want := p.TCAM.Timing.DriverPerWrite + p.Forwarding.HitDelay
		if tc.upcall {
			want += p.Agent.PacketInCost
		}
		if got != want {
			t.Errorf("%s (swap_in_upcall %v): swapped-in packet delayed %v, want %v", tc.arg, tc.upcall, got, want)
		}
	}
}

// swapInDelay is the delay through the switch d builds (on a virtual
// clock) of one packet whose rule is only in the backing table.
func swapInDelay(t *testing.T, d switchDataPlane) time.Duration {
	t.Helper()
	start := time.Unix(0, 0)
	clk := clock.NewSim(start)
	sw := softswitch.New(clk, softswitch.Config{TableCapacity: d.tableCapacity, TieBreak: d.tieBreak})
	var out []time.Time
	for _, port := range []*softswitch.MemPort{
		softswitch.NewMemPort(1, "in", softswitch.MemPortMAC(1, 1), nil),
		softswitch.NewMemPort(2, "out", softswitch.MemPortMAC(1, 2), func([]byte) { out = append(out, clk.Now()) }),
	} {
		if err := sw.AddPort(port); err != nil {
			t.Fatal(err)
		}
	}
	pl, err := d.attach(sw, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pl.Stop)
	all := &openflow.FlowMod{
		Header:  openflow.Header{Version: openflow.Version, Type: openflow.TypeFlowMod},
		Match:   openflow.Match{Wildcards: openflow.WildcardAll},
		Command: openflow.FlowModAdd, Priority: 100, BufferID: openflow.NoBuffer, OutPort: openflow.PortNone,
		Actions: []openflow.Action{openflow.ActionOutput{Port: 2}},
	}
	if _, err := pl.Preload(all, dataplane.InBacking); err != nil {
		t.Fatal(err)
	}
	frame := make([]byte, 60)
	dst, src := softswitch.MemPortMAC(9, 2), softswitch.MemPortMAC(9, 1)
	copy(frame[0:6], dst[:])
	copy(frame[6:12], src[:])
	frame[12], frame[13] = 0x88, 0xb5 // IEEE local experimental EtherType
	sw.Receive(1, frame)
	clk.Run()
	if len(out) != 1 {
		t.Fatalf("%d packets out of port 2, want 1", len(out))
	}
	if s := pl.TableStats(); s.SwapIns != 1 {
		t.Fatalf("%d swap-ins, want 1", s.SwapIns)
	}
	return out[0].Sub(start)
}
