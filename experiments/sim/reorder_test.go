package sim

import (
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/controller"
	"github.com/pseudocong/pseudocong/probes"
)

// The controller's Tango-style reorderer (controller.ReorderConfig) in the
// simulated network, on paper 000's Packet-In burst (400 new flows at
// 1 000 pps, t_c = 1 ms, empty table). Sorting a burst descending saves
// only the moves the burst's own rules would cause each other: every
// ascending rule still outranks everything installed before its burst and
// shifts it. So the agent's CPU time drops, but a little (about 1.6 % at
// a 50 ms window when this was written), and descending rules, which move
// nothing, gain nothing and only wait for the window.
func TestReorderInSimSavesInBurstMovesOnly(t *testing.T) {
	prof := loadProfile(t, "pica8-p3297")
	run := func(prio string, w time.Duration) *Outcome {
		t.Helper()
		o, err := Run(Scenario{Kind: OneWay, Flows: 400, Rate: 1000, Priority: prio, Profile: prof,
			ControllerService: time.Millisecond, LinkLatency: time.Microsecond, Timers: probes.Berkeley(), Seed: 5,
			Reorder: controller.ReorderConfig{Window: w}})
		if err != nil {
			t.Fatal(err)
		}
		if o.Controller.FlowMods != 400 {
			t.Fatalf("%s window %v: %d FLOW_MODs, want 400", prio, w, o.Controller.FlowMods)
		}
		return o
	}
	const window = 50 * time.Millisecond
	ascOff, ascOn := run("ascending", 0), run("ascending", window)
	descOff, descOn := run("descending", 0), run("descending", window)
	t.Logf("agent CPU: ascending %v -> %v with a %v window; descending %v -> %v",
		ascOff.Agent.BusyTime, ascOn.Agent.BusyTime, window, descOff.Agent.BusyTime, descOn.Agent.BusyTime)
	if ascOn.Agent.BusyTime >= ascOff.Agent.BusyTime {
		t.Errorf("ascending: reordering did not save agent time (%v -> %v)", ascOff.Agent.BusyTime, ascOn.Agent.BusyTime)
	}
	if ascOn.Agent.BusyTime < descOff.Agent.BusyTime {
		t.Errorf("ascending reordered (%v) beat descending numbering (%v): in-burst sorting cannot undo the moves across bursts", ascOn.Agent.BusyTime, descOff.Agent.BusyTime)
	}
	if descOn.Agent.BusyTime != descOff.Agent.BusyTime {
		t.Errorf("descending: the reorderer changed the agent's work (%v -> %v); already-sorted bursts must go out as they are", descOff.Agent.BusyTime, descOn.Agent.BusyTime)
	}
}
