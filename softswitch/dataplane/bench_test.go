package dataplane

import (
	"testing"

	"github.com/pseudocong/pseudocong/tcam"
)

// BenchmarkSwapInFullTCAM is the placement cost of one swap-in into a full
// 4 000-entry TCAM (evict + insert with shifts), the work behind paper
// 000 §3.2. Each iteration swaps a backing rule in and so pushes another
// out, keeping the table full.
func BenchmarkSwapInFullTCAM(b *testing.B) {
	const slots = 4000
	d, err := New(Config{TCAMSlots: slots, Layout: tcam.HighestFirst(), Timing: tcam.Pica8Timing(), BackingCapacity: 64}, nil)
	if err != nil {
		b.Fatal(err)
	}
	for i := range slots {
		if err := d.Preload(rule(uint64(i+1), uint32(i)), InTCAM); err != nil {
			b.Fatal(err)
		}
	}
	const spare = 32
	for i := range spare {
		if err := d.Preload(rule(uint64(slots+1+i), uint32(slots+i)), InBacking); err != nil {
			b.Fatal(err)
		}
	}
	backing := make([]uint64, 0, spare)
	for i := range spare {
		backing = append(backing, uint64(slots+1+i))
	}
	b.ResetTimer()
	for b.Loop() {
		id := backing[0]
		ch, err := d.SwapIn(id)
		if err != nil || !ch.DidEvict {
			b.Fatalf("swap-in %d: %+v %v", id, ch, err)
		}
		backing = append(backing[1:], ch.Evicted)
	}
}

// BenchmarkUsedLRU is the per-hit bookkeeping on the packet path.
func BenchmarkUsedLRU(b *testing.B) {
	d, _ := New(Config{TCAMSlots: 4000, Layout: tcam.HighestFirst(), Timing: tcam.Pica8Timing()}, nil)
	for i := range 4000 {
		_ = d.Preload(rule(uint64(i+1), uint32(i)), InTCAM)
	}
	for i := 0; b.Loop(); i++ {
		d.Used(uint64(i%4000 + 1))
	}
}
