package pipeline

import (
	"testing"

	"github.com/pseudocong/pseudocong/internal/clock"
	"github.com/pseudocong/pseudocong/profile"
	"github.com/pseudocong/pseudocong/softswitch"
)

// The backing table's capacity and eviction policy come from the profile's
// backing_table section unless Options override them, then from the
// package defaults.
func TestBackingTableFromProfile(t *testing.T) {
	for _, tc := range []struct {
		name         string
		profCap      int
		profEviction string
		opts         Options
		wantCap      int
		wantEviction string
	}{
		{"profile values", 7, "fifo", Options{}, 7, "fifo"},
		{"options override", 7, "fifo", Options{BackingCapacity: 9, Eviction: "lru"}, 9, "lru"},
		{"package defaults", 0, "", Options{}, DefaultBackingCapacity, "lru"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prof := loadProfile(t, "pica8-p3297", func(p *profile.Profile) {
				p.BackingTable = profile.BackingTable{Capacity: tc.profCap, Eviction: tc.profEviction}
			})
			if got, want := TableCapacity(prof, tc.opts.BackingCapacity), prof.TCAM.Capacity+tc.wantCap; got != want {
				t.Errorf("TableCapacity = %d, want %d", got, want)
			}
			sw := softswitch.New(clock.NewSim(t0), softswitch.Config{TableCapacity: TableCapacity(prof, tc.opts.BackingCapacity)})
			opts := tc.opts
			opts.Profile = prof
			p, err := Attach(sw, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Stop()
			if _, backing := p.table.Capacity(); backing != tc.wantCap {
				t.Errorf("backing capacity = %d, want %d", backing, tc.wantCap)
			}
			if got := p.table.Eviction().Name(); got != tc.wantEviction {
				t.Errorf("eviction = %s, want %s", got, tc.wantEviction)
			}
		})
	}
}
