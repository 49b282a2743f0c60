package agent

import (
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/internal/clock"
)

// BenchmarkMissToBatch is the host cost of one miss through the whole agent
// (queue, modelled build, batch of 25, Output) on the simulated clock.
func BenchmarkMissToBatch(b *testing.B) {
	sim := clock.NewSim(t0)
	cfg := pica8()
	cfg.MissQueueLimit = 1 << 20
	a, err := New(sim, cfg, OutputFunc(func([]PacketIn) {}), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		a.Miss(PacketIn{})
		sim.Run() // builds it, possibly flushes
	}
	if a.Stats().Built != a.Stats().Misses {
		b.Fatal("misses lost")
	}
}

// BenchmarkJob is the host cost of one Submit-to-Done job with a Start
// callback.
func BenchmarkJob(b *testing.B) {
	sim := clock.NewSim(t0)
	a, err := New(sim, pica8(), OutputFunc(func([]PacketIn) {}), nil)
	if err != nil {
		b.Fatal(err)
	}
	job := Job{Kind: "flow_mod", Cost: ms(0.3), Start: func() time.Duration { return 0 }, Done: func() {}}
	b.ReportAllocs()
	for b.Loop() {
		a.Submit(job)
		sim.Run()
	}
}
