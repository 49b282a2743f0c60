//go:build integration

package live_test

import (
	"context"
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/experiments/live"
	"github.com/pseudocong/pseudocong/internal/testenv"
	"github.com/pseudocong/pseudocong/probes"
	"github.com/pseudocong/pseudocong/profile"
)

// Paper §2.2 live: one-packet new flows from host 1 to host 2 through
// the pica8-p3297 switch, one-way delay on the hosts' shared clock, next
// to the sim of the same cell. At 100 pps (Packet-In builds keep up) the
// medians must agree within 0.8–1.25; the 1 000 pps row (the local CPU
// saturated, Table 1's staircase) is measured and logged.
func TestSerialLivePacketInAgreesWithSim(t *testing.T) {
	testenv.RequireRoot(t)
	bin := testenv.BuildPseudocong(t)
	prof, err := profile.Load("pica8-p3297")
	if err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, bin)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	res, err := live.Run(ctx, live.Config{
		Binary: bin, Profile: prof, Timers: probes.Berkeley(), Seed: 3,
		ControllerService: 100 * time.Microsecond, LinkLatency: 20 * time.Microsecond,
		Cells: []live.Cell{
			{Label: "100pps", Key: "table1.100pps", Kind: live.KindPacketIn, Flows: 200, Rate: 100, Priority: "constant"},
			{Label: "1000pps", Key: "table1.1000pps", Kind: live.KindPacketIn, Flows: 400, Rate: 1000, Priority: "constant"},
		},
	})
	if err != nil {
		t.Fatalf("live run: %v", err)
	}
	if left := snapshot(t, bin).newSince(before); !left.empty() {
		t.Errorf("left behind: %+v", left)
	}
	for i, o := range res.Outcomes {
		delivered := 0
		var maxDelay time.Duration
		for j, ok := range o.Delivered {
			if ok {
				delivered++
				maxDelay = max(maxDelay, o.Delays[j])
			}
		}
		if delivered != len(o.Delivered) {
			t.Errorf("cell %d: %d of %d packets arrived", i, delivered, len(o.Delivered))
		}
		if o.Agent.Sent == 0 {
			t.Errorf("cell %d: the switch reported no Packet-Ins", i)
		}
		t.Logf("cell %d: max one-way delay %v, %d Packet-Ins in %d batches", i, maxDelay, o.Agent.Sent, o.Agent.Batches)
	}
	r100 := res.Values[live.KeyAgreement+".table1.100pps"]
	r1000 := res.Values[live.KeyAgreement+".table1.1000pps"]
	t.Logf("live/sim median delay: 100 pps %v, 1000 pps %v", r100, r1000)
	if len(r100) != 1 || r100[0] < 0.8 || r100[0] > 1.25 {
		t.Errorf("100 pps: live/sim median one-way delay %v, want within [0.8, 1.25]", r100)
	}
}
