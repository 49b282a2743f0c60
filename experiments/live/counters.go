package live

import (
	"context"

	"github.com/pseudocong/pseudocong/experiments/sim"
	"github.com/pseudocong/pseudocong/testbed"
)

// counters are the model's work during a cell, read from the processes'
// /metrics, for the report's "what the model did" table.
type counters struct {
	packetIns, batches, flowMods, swapIns, moves float64
}

// scrapeCounters reads the counters; a failed scrape leaves zeros (the
// numbers are informative, not measured results).
func scrapeCounters(ctx context.Context, st *stack) counters {
	var c counters
	if m, err := testbed.Scrape(ctx, st.swMetrics); err == nil {
		c.packetIns, _ = m.Value("pseudocong_agent_packet_ins_sent_total", nil)
		c.batches, _ = m.Value("pseudocong_agent_packet_in_batches_total", nil)
		c.swapIns, _ = m.Value("pseudocong_dataplane_swap_ins_total", nil)
		c.moves, _ = m.Value("pseudocong_tcam_entries_moved_total", nil)
	}
	if m, err := testbed.Scrape(ctx, st.ctrlMetrics); err == nil {
		c.flowMods, _ = m.Value("pseudocong_controller_flow_mods_total", nil)
	}
	return c
}

func (c counters) sub(o counters) counters {
	return counters{
		packetIns: c.packetIns - o.packetIns, batches: c.batches - o.batches,
		flowMods: c.flowMods - o.flowMods, swapIns: c.swapIns - o.swapIns, moves: c.moves - o.moves,
	}
}

func (c counters) fill(o *sim.Outcome) {
	nonneg := func(x float64) uint64 {
		if x < 0 {
			return 0
		}
		return uint64(x)
	}
	o.Agent.Sent = nonneg(c.packetIns)
	o.Agent.Batches = nonneg(c.batches)
	o.Controller.FlowMods = nonneg(c.flowMods)
	o.Table.SwapIns = nonneg(c.swapIns)
	o.Table.Cost.Moves = int64(nonneg(c.moves))
}
