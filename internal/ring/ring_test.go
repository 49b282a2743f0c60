package ring

import (
	"math/rand/v2"
	"testing"
)

// The ring behaves as a slice-backed FIFO under random pushes and pops,
// across every regrowth and wrap-around.
func TestBufferIsAFIFO(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var b Buffer[int]
	var ref []int
	next := 0
	for range 100000 {
		if len(ref) == 0 || rng.IntN(3) != 0 {
			b.Push(next)
			ref = append(ref, next)
			next++
		} else {
			if h := *b.Head(); h != ref[0] {
				t.Fatalf("Head %d, want %d", h, ref[0])
			}
			if v := b.Pop(); v != ref[0] {
				t.Fatalf("Pop %d, want %d", v, ref[0])
			}
			ref = ref[1:]
		}
		if b.Len() != len(ref) {
			t.Fatalf("Len %d, want %d", b.Len(), len(ref))
		}
	}
}

// Popped slots are zeroed: a ring of pointers keeps nothing alive.
func TestPopZeroesTheSlot(t *testing.T) {
	var b Buffer[*int]
	x := 1
	b.Push(&x)
	b.Pop()
	for i, p := range b.buf {
		if p != nil {
			t.Fatalf("slot %d still holds a pointer", i)
		}
	}
}

func TestEmptyPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("Pop of an empty buffer did not panic")
		}
	}()
	var b Buffer[int]
	b.Pop()
}

// A steady push/pop run allocates nothing once grown.
func TestSteadyRunDoesNotAllocate(t *testing.T) {
	var b Buffer[int]
	for i := range 100 {
		b.Push(i)
	}
	if n := testing.AllocsPerRun(1000, func() { b.Push(1); b.Pop() }); n != 0 {
		t.Errorf("%v allocs per push+pop, want 0", n)
	}
}
