package pipeline

import (
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/profile"
	"github.com/pseudocong/pseudocong/softswitch/dataplane"
	"github.com/pseudocong/pseudocong/tcam"
)

// A packet whose rule lives only in the backing table waits for a swap-in
// that pays the full insert cost (eviction + write + shifts); packets for
// the same rule share that swap-in and leave in arrival order, one hit
// delay after it is done (paper 000 §3.2). With Options.SwapInUpcall the
// packet's upcall to the CPU (packet_in_cost) comes first.
func TestSwapInPaysFullCostAndReleasesInOrder(t *testing.T) {
	for _, upcall := range []bool{false, true} {
		name := "no upcall"
		if upcall {
			name = "upcall"
		}
		t.Run(name, func(t *testing.T) { testSwapIn(t, upcall) })
	}
}

func testSwapIn(t *testing.T, upcall bool) {
	const slots = 100
	prof := loadProfile(t, "pica8-p3297", func(p *profile.Profile) {
		p.TCAM.Capacity = slots
		// The costs below are computed by hand with the plain per-move
		// price; a 100-slot TCAM is always within the profile's slow-move
		// window (tcam.Timing.SlowMoveFreeSlots), so switch that off here.
		p.TCAM.Timing.SlowMoveFreeSlots = 0
	})
	r := newRig(t, prof, Options{BackingCapacity: 10, SwapInUpcall: upcall})
	// Base load in ascending priority: the first (lowest) rule sits in the
	// last slot and is the least recently used, so the LRU victim leaves
	// the hole at the bottom and the new top rule shifts every other one.
	for i := range slots {
		if _, err := r.p.Preload(ruleFor(i, uint16(10+i)), dataplane.InTCAM); err != nil {
			t.Fatal(err)
		}
	}
	const target = 1000
	id, err := r.p.Preload(ruleFor(target, 500), dataplane.InBacking)
	if err != nil {
		t.Fatal(err)
	}
	if r.p.Where(id) != dataplane.InBacking {
		t.Fatalf("target at %v", r.p.Where(id))
	}
	if s := r.p.TableStats(); s.CPUTime != 0 || s.Preloads != slots+1 {
		t.Fatalf("preload was priced or lost: %+v", s)
	}
	arrivals := []time.Duration{0, 100 * time.Microsecond, 200 * time.Microsecond, 250 * time.Microsecond}
	for seq, at := range arrivals {
		r.at(at, func() { r.sw.Receive(1, frame(t, target, uint32(seq))) })
	}
	r.run()

	tm := prof.TCAM.Timing
	swapCPU := tm.DriverPerInvalidate + tm.DriverPerWrite + (slots-1)*tm.DriverPerMove
	// Independent reference: the same insert into a plain TCAM model.
	ref, _ := tcam.New(slots, tcam.HighestFirst(), tm)
	for i := 1; i < slots; i++ {
		_, _ = ref.Insert(tcam.Entry{Priority: uint32(10 + i), ID: uint64(i)})
	}
	rc, _ := ref.InsertCost(tcam.Entry{Priority: 500, ID: 1000})
	if got := tm.CPUTime(rc) + tm.DriverPerInvalidate; got != swapCPU {
		t.Fatalf("reference swap-in cost %v, hand computed %v", got, swapCPU)
	}
	got := r.deliveries()
	if len(got) != len(arrivals) {
		t.Fatalf("%d packets delivered, want %d", len(got), len(arrivals))
	}
	var upcallCPU time.Duration
	if upcall {
		upcallCPU = prof.Agent.PacketInCost
	}
	release := t0.Add(upcallCPU + swapCPU + prof.Forwarding.HitDelay)
	for i, d := range got {
		if d.seq != uint32(i) {
			t.Errorf("delivery %d carries seq %d: out of order", i, d.seq)
		}
		if !d.at.Equal(release) {
			t.Errorf("packet %d delivered at +%v, want +%v (upcall %v + swap-in %v + hit %v)",
				i, d.at.Sub(t0), release.Sub(t0), upcallCPU, swapCPU, prof.Forwarding.HitDelay)
		}
	}
	s := r.p.TableStats()
	if s.SwapIns != 1 || s.Evictions != 1 || s.CPUTime != swapCPU || s.Cost.Moves != slots-1 {
		t.Errorf("table stats %+v, want one swap-in of %v with %d moves", s, swapCPU, slots-1)
	}
	if ps := r.p.Stats(); ps.SwapInJobs != 1 || ps.Delivered[dataplane.PathSwapIn] != uint64(len(arrivals)) || ps.Held != 0 {
		t.Errorf("pipeline stats %+v", ps)
	}
	if r.p.Where(id) != dataplane.InTCAM {
		t.Errorf("target at %v after the swap-in", r.p.Where(id))
	}
	if v := counterValue(t, r.reg, "pseudocong_dataplane_swap_ins_total", nil); v != 1 {
		t.Errorf("swap_ins_total %g", v)
	}
	// Now a hit: one hit delay, no further swap-in.
	r.at(time.Second, func() { r.sw.Receive(1, frame(t, target, 99)) })
	r.run()
	last := r.deliveries()[len(arrivals)]
	if last.seq != 99 || last.at.Sub(t0) != time.Second+prof.Forwarding.HitDelay {
		t.Errorf("hit delivered %+v at +%v", last, last.at.Sub(t0))
	}
}

// The bound on held packets drops the excess and counts it.
func TestHeldPacketsAreBounded(t *testing.T) {
	prof := loadProfile(t, "pica8-p3297", func(p *profile.Profile) { p.TCAM.Capacity = 4 })
	r := newRig(t, prof, Options{BackingCapacity: 4, HoldLimit: 10})
	for i := range 4 {
		if _, err := r.p.Preload(ruleFor(i, 10), dataplane.InTCAM); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.p.Preload(ruleFor(50, 20), dataplane.InBacking); err != nil {
		t.Fatal(err)
	}
	// A TCAM preload beyond capacity is refused, not evicted.
	if _, err := r.p.Preload(ruleFor(60, 20), dataplane.InTCAM); err == nil {
		t.Fatal("preload into a full TCAM accepted")
	}
	const burst = 25
	r.at(0, func() {
		for seq := range burst {
			r.sw.Receive(1, frame(t, 50, uint32(seq)))
		}
	})
	r.run()
	got := r.deliveries()
	if len(got) != 10 {
		t.Fatalf("%d delivered, want the 10 held", len(got))
	}
	for i, d := range got {
		if d.seq != uint32(i) {
			t.Fatalf("delivery %d has seq %d", i, d.seq)
		}
	}
	if v := counterValue(t, r.reg, "pseudocong_dataplane_drops_total", map[string]string{"reason": dataplane.DropHoldFull}); v != burst-10 {
		t.Errorf("hold_full drops %g, want %d", v, burst-10)
	}
	if ps := r.p.Stats(); ps.MaxHeld != 10 || ps.Held != 0 {
		t.Errorf("held %d max %d", ps.Held, ps.MaxHeld)
	}
}
