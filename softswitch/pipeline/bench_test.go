package pipeline

import (
	"testing"

	"github.com/pseudocong/pseudocong/softswitch/dataplane"
)

// BenchmarkHitPath is one packet through the switch and the modelled
// pipeline on a TCAM hit: lookup, Forward, the hit-delay line and
// delivery, on the virtual clock.
func BenchmarkHitPath(b *testing.B) {
	prof := loadProfile(b, "pica8-p3297", nil)
	r := newRig(b, prof, Options{})
	for i := range 1000 {
		if _, err := r.p.Preload(ruleFor(i, uint16(i+1)), dataplane.InTCAM); err != nil {
			b.Fatal(err)
		}
	}
	frames := make([][]byte, 1000)
	for i := range frames {
		frames[i] = frame(b, i, uint32(i))
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		f := frames[i%len(frames)]
		r.sw.Receive(1, append([]byte(nil), f...))
		r.sim.Run()
	}
	b.StopTimer()
	if got := r.p.Stats().Delivered[dataplane.PathHit]; got == 0 {
		b.Fatal("nothing delivered")
	}
	r.mu.Lock()
	r.out = nil
	r.mu.Unlock()
}
