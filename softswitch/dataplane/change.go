package dataplane

import (
	"time"

	"github.com/pseudocong/pseudocong/tcam"
)

// Change is what one placement operation did and cost.
type Change struct {
	// Cost counts the chip operations: the eviction's invalidate, if any,
	// plus the insert with its moves (or the delete's invalidate).
	Cost tcam.Cost
	// CPUTime is Cost priced by the TCAM's Timing on the local CPU (the
	// driver work the agent is busy for).
	CPUTime time.Duration
	// Evicted is the ID that left the TCAM for the backing table to make
	// room; valid when DidEvict.
	Evicted  uint64
	DidEvict bool
	// From and To are the rule's location before and after.
	From, To Location
}

// Stats are the Table's running totals, for tests and experiment reports
// (Prometheus gets the same through Metrics).
type Stats struct {
	// Adds counts rules placed by Add; SwapIns rules brought in from the
	// backing table; Evictions rules pushed out to it; Removes rules
	// deleted; Preloads rules placed at no cost.
	Adds, SwapIns, Evictions, Removes, Preloads uint64
	// Cost is the sum of every priced change (preloads excluded).
	Cost tcam.Cost
	// CPUTime is Cost on the local CPU.
	CPUTime time.Duration
}
