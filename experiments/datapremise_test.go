package experiments

import "testing"

// Paper 000 Fig. 19's premise on every data cell of the paper spec: all
// rules are preloaded in the backing table, so each data packet and each
// ACK is served by a swap-in of its rule and none goes to the controller:
// no Packet-In after the warm-up, no Flow-Mod, and exactly one swap-in per
// rule (2 per flow: the 500 new rules fit in the TCAM at either base load,
// so none is evicted and swapped in again). A copy of the controller's
// match that drifts (experiments/sim ruleMatch) turns every swap-in into a
// miss and fails here.
func TestDataCellsAreServedBySwapIns(t *testing.T) {
	if testing.Short() {
		t.Skip("long single-goroutine simulation: the race phase (-short) leaves it to the integration phase")
	}
	res := execute(t, paperSubset(t, map[string]func(*ExperimentSpec){"data": nil}), Options{})
	n := 0
	for _, c := range res.Cells {
		if c.Exp.Kind != KindData {
			continue
		}
		n++
		o, rules := c.Outcome, uint64(2*c.Exp.Flows)
		if o.ProbeMisses != 0 || o.Controller.FlowMods != 0 {
			t.Errorf("%s: %d data packets missed the table, %d rules installed; want none", c.Label(), o.ProbeMisses, o.Controller.FlowMods)
		}
		if o.Pipeline.SwapInJobs != rules || o.Table.SwapIns != rules || o.Table.Evictions != 0 {
			t.Errorf("%s: %d swap-in jobs, %d swap-ins, %d evictions; want %d, %d, 0",
				c.Label(), o.Pipeline.SwapInJobs, o.Table.SwapIns, o.Table.Evictions, rules, rules)
		}
	}
	if n != 8 {
		t.Errorf("%d data cells, want the paper spec's 8 (4 rates × 2 base loads)", n)
	}
}
