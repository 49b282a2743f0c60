package dataplane

import (
	"math/rand/v2"
	"testing"

	"github.com/pseudocong/pseudocong/tcam"
)

// Random adds, swap-ins, removes and hits keep every rule in exactly one
// place, both tables within their bounds, and the eviction policy's view
// equal to the TCAM's contents.
func TestRandomOperationsKeepInvariants(t *testing.T) {
	for _, evName := range EvictionNames() {
		ev, _ := EvictionByName(evName)
		rng := rand.New(rand.NewPCG(1, uint64(len(evName))))
		d := newTable(t, 16, 24, tcam.Pica8Timing(), ev)
		placed := map[uint64]bool{}
		next := uint64(1)
		for step := range 5000 {
			switch op := rng.IntN(10); {
			case op < 4:
				_, err := d.Add(rule(next, uint32(rng.IntN(50))))
				full := len(placed) >= 40
				if (err != nil) != full {
					t.Fatalf("%s step %d: add with %d placed: %v", evName, step, len(placed), err)
				}
				if err == nil {
					placed[next] = true
				}
				next++
			case op < 6 && len(placed) > 0:
				id := pick(rng, placed)
				was := d.Where(id)
				ch, err := d.SwapIn(id)
				if err != nil || d.Where(id) != InTCAM || (was == InTCAM && ch.CPUTime != 0) {
					t.Fatalf("%s step %d: swap-in %d from %v: %+v %v", evName, step, id, was, ch, err)
				}
			case op < 8 && len(placed) > 0:
				id := pick(rng, placed)
				if _, err := d.Remove(id); err != nil {
					t.Fatalf("%s step %d: remove %d: %v", evName, step, id, err)
				}
				delete(placed, id)
			case len(placed) > 0:
				d.Used(pick(rng, placed))
			}
			checkInvariants(t, d, placed)
		}
	}
}

func pick(rng *rand.Rand, set map[uint64]bool) uint64 {
	ids := make([]uint64, 0, len(set))
	for id := range set {
		ids = append(ids, id)
	}
	// Map order is random; sort for a reproducible pick.
	for i := 1; i < len(ids); i++ {
		for j := i; j > 0 && ids[j] < ids[j-1]; j-- {
			ids[j], ids[j-1] = ids[j-1], ids[j]
		}
	}
	return ids[rng.IntN(len(ids))]
}

func checkInvariants(t *testing.T, d *Table, placed map[uint64]bool) {
	t.Helper()
	n, b := d.Len()
	tc, bc := d.Capacity()
	if n+b != len(placed) || n > tc || b > bc {
		t.Fatalf("len %d+%d for %d placed, caps %d/%d", n, b, len(placed), tc, bc)
	}
	// Overflow goes to the backing table only when the TCAM is full.
	if b > 0 && n < tc && d.Stats().Removes == 0 {
		t.Fatalf("backing holds %d while tcam has %d/%d and nothing was removed", b, n, tc)
	}
	inTCAM := 0
	for id := range placed {
		switch d.Where(id) {
		case InTCAM:
			inTCAM++
		case Absent:
			t.Fatalf("id %d lost", id)
		}
	}
	if inTCAM != n {
		t.Fatalf("%d ids in tcam, tcam len %d", inTCAM, n)
	}
	if n > 0 {
		v, ok := d.Eviction().Victim()
		if !ok || d.Where(v) != InTCAM {
			t.Fatalf("victim %d (%v) not in tcam", v, ok)
		}
	}
}
