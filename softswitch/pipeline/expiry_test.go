package pipeline

import (
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/openflow"
	"github.com/pseudocong/pseudocong/profile"
	"github.com/pseudocong/pseudocong/softswitch/dataplane"
)

// A rule removed by its timeout costs the driver an invalidate, billed to
// the next CPU job; packets waiting for a rule that times out meanwhile
// are dropped (rule_gone), not forwarded by a rule that no longer exists.
func TestTimeoutRemovalIsBilledAndDropsWaiters(t *testing.T) {
	const slots = 100
	prof := loadProfile(t, "pica8-p3297", func(p *profile.Profile) {
		p.TCAM.Capacity = slots
		p.TCAM.Timing.SlowMoveFreeSlots = 0 // costs below are c_write + k·c_move
	})
	r := newRig(t, prof, Options{BackingCapacity: 4})
	for i := range slots {
		if _, err := r.p.Preload(ruleFor(i, uint16(10+i)), dataplane.InTCAM); err != nil {
			t.Fatal(err)
		}
	}
	// The target lives in the backing table and expires at t = 1 s, in
	// the middle of the swap-in its first packet starts at 999.5 ms.
	target := ruleFor(1000, 500)
	target.HardTimeout = 1
	id, err := r.p.Preload(target, dataplane.InBacking)
	if err != nil {
		t.Fatal(err)
	}
	tm := prof.TCAM.Timing
	swapCPU := tm.DriverPerInvalidate + tm.DriverPerWrite + (slots-1)*tm.DriverPerMove
	sendAt := time.Second - 500*time.Microsecond
	if swapCPU <= 500*time.Microsecond {
		t.Fatalf("fixture: swap-in %v must outlast the 0.5 ms to the expiry", swapCPU)
	}
	r.at(sendAt, func() { r.sw.Receive(1, frame(t, 1000, 1)) })
	// After everything settled, one more FLOW_MOD: its CPU time includes
	// the expired rule's invalidate.
	r.at(2*time.Second, func() {
		// Highest priority: it lands in the slot the expired rule left
		// at the top, moving nothing.
		r.send(ruleFor(2000, 600))
		r.send(barrier(5))
	})
	r.run()

	if d := r.deliveries(); len(d) != 0 {
		t.Errorf("packet for an expired rule delivered: %+v", d)
	}
	if v := counterValue(t, r.reg, "pseudocong_dataplane_drops_total", map[string]string{"reason": dataplane.DropRuleGone}); v != 1 {
		t.Errorf("rule_gone drops %g, want 1", v)
	}
	if r.p.Where(id) != dataplane.Absent {
		t.Errorf("expired rule still at %v", r.p.Where(id))
	}
	var reply *timedMsg
	for _, m := range r.ctl.take() {
		if _, ok := m.m.(*openflow.BarrierReply); ok {
			reply = &m
		}
	}
	want := 2*time.Second + tm.DriverPerInvalidate + tm.DriverPerWrite
	if reply == nil || reply.at.Sub(t0) != want {
		t.Errorf("barrier reply %+v, want at +%v (write + the billed invalidate)", reply, want)
	}
	if ps := r.p.Stats(); ps.Held != 0 || ps.SwapInJobs != 1 {
		t.Errorf("stats %+v", ps)
	}
}
