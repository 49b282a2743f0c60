package pipeline

import (
	"fmt"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pseudocong/pseudocong/profile"
)

// Options configure a Pipeline. Only Profile is required.
type Options struct {
	// Profile is the switch model: agent, tcam and forwarding sections.
	Profile *profile.Profile
	// BackingCapacity bounds the rules held outside the TCAM; it overrides
	// the profile's backing_table.capacity. 0: the profile's, and when the
	// profile leaves it 0 too, DefaultBackingCapacity (BackingCapacity).
	BackingCapacity int
	// Eviction names the TCAM eviction policy (dataplane.EvictionByName);
	// it overrides the profile's backing_table.eviction. "": the
	// profile's, and when the profile leaves it empty too, "lru".
	Eviction string
	// HoldLimit bounds the packets waiting for their rule (swap-in or
	// install), over all rules. Default 4096.
	HoldLimit int
	// DelayLineLimit bounds the packets in flight through the hit delay.
	// Default 65536.
	DelayLineLimit int
	// BarrierLimit bounds the BARRIERs waiting for earlier FLOW_MODs.
	// Default 4096.
	BarrierLimit int
	// SwapInUpcall charges an upcall before each swap-in: the chip cannot
	// read the backing table, so a packet whose rule is not in the TCAM
	// goes up to the local CPU exactly as a table miss does (a job costing
	// the profile's agent.packet_in_cost); the agent finds the rule in its
	// software table and only then submits the swap-in job; off, a swap-in
	// costs only its TCAM work. It is the profile's
	// backing_table.swap_in_upcall: a switch modelled by a profile sets it
	// to SwapInUpcall(profile), as `pseudocong switch` and the simulator
	// (experiments/sim) do. Tests set it directly.
	SwapInUpcall bool
	// Registerer gets the agent's and the data plane's series; nil: none.
	Registerer prometheus.Registerer
	// Logger: default discard.
	Logger *slog.Logger
}

// DefaultBackingCapacity is the backing table's size when Options and the
// profile both leave it 0. Paper 000 gives no figure for the Pica8's on-chip / software table
// beyond "larger than the TCAM" (§1.2); 65 536 is assumed, large enough
// for every experiment of the paper (at most 4 000 + 500 rules).
const DefaultBackingCapacity = 65536

func (o Options) withDefaults() (Options, error) {
	if o.Profile == nil {
		return o, fmt.Errorf("pipeline: nil profile")
	}
	if o.BackingCapacity < 0 {
		return o, fmt.Errorf("pipeline: backing capacity %d: must not be negative", o.BackingCapacity)
	}
	o.BackingCapacity = BackingCapacity(o.Profile, o.BackingCapacity)
	if o.Eviction == "" {
		o.Eviction = o.Profile.BackingTable.Eviction
	}
	if o.HoldLimit <= 0 {
		o.HoldLimit = 4096
	}
	if o.DelayLineLimit <= 0 {
		o.DelayLineLimit = 65536
	}
	if o.BarrierLimit <= 0 {
		o.BarrierLimit = 4096
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o, nil
}

// DefaultSwapInUpcall is the swap-in upcall when the profile leaves
// backing_table.swap_in_upcall unset: on, the calibrated model
// (docs/calibration.md fits Fig. 19 with it).
const DefaultSwapInUpcall = true

// SwapInUpcall is Options.SwapInUpcall for a switch modelled by p: the
// profile's backing_table.swap_in_upcall, DefaultSwapInUpcall when unset.
func SwapInUpcall(p *profile.Profile) bool {
	if v := p.BackingTable.SwapInUpcall; v != nil {
		return *v
	}
	return DefaultSwapInUpcall
}

// TableCapacity is the flow-table size a switch modelled by p must be
// built with (softswitch.Config.TableCapacity), so that the flow table
// refuses with ALL_TABLES_FULL exactly when the TCAM and the backing table
// are both full. backing 0 means BackingCapacity(p, 0).
func TableCapacity(p *profile.Profile, backing int) int {
	return p.TCAM.Capacity + BackingCapacity(p, backing)
}

// BackingCapacity is the backing table's size a pipeline for p uses when
// Options.BackingCapacity is backing: backing itself unless 0, then the
// profile's backing_table.capacity unless 0, then DefaultBackingCapacity.
func BackingCapacity(p *profile.Profile, backing int) int {
	if backing == 0 {
		backing = p.BackingTable.Capacity
	}
	if backing == 0 {
		backing = DefaultBackingCapacity
	}
	return backing
}
