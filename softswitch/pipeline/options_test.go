package pipeline

import (
	"testing"

	"github.com/pseudocong/pseudocong/profile"
)

// SwapInUpcall reads the profile's backing_table.swap_in_upcall; a profile
// that leaves it out gets the calibrated model's upcall (on), so a profile
// file written before the key existed behaves as it did.
func TestSwapInUpcallFromProfile(t *testing.T) {
	yes, no := true, false
	for _, tc := range []struct {
		name string
		v    *bool
		want bool
	}{{"unset", nil, true}, {"on", &yes, true}, {"off", &no, false}} {
		p := &profile.Profile{BackingTable: profile.BackingTable{SwapInUpcall: tc.v}}
		if got := SwapInUpcall(p); got != tc.want {
			t.Errorf("%s: SwapInUpcall = %v, want %v", tc.name, got, tc.want)
		}
	}
	for _, name := range profile.Names() {
		if !SwapInUpcall(loadProfile(t, name, nil)) {
			t.Errorf("built-in %s: swap-in upcall off, want on (the calibrated model)", name)
		}
	}
}
