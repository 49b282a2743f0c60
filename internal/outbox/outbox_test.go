package outbox

import (
	"sync"
	"testing"
)

// Effects run in push order, without the lock, and effects pushed by an
// effect run in the same drain after the ones already queued.
func TestDrainOrderAndReentry(t *testing.T) {
	var (
		mu  sync.Mutex
		o   Outbox
		got []int
	)
	push := func(f func()) {
		mu.Lock()
		o.PushLocked(f)
		mu.Unlock()
		o.Drain(&mu)
	}
	mu.Lock()
	o.PushLocked(func() {
		got = append(got, 1)
		if !mu.TryLock() {
			t.Error("effect ran with the lock held")
		} else {
			mu.Unlock()
		}
		push(func() { got = append(got, 3) }) // nested: appended, not run here
		got = append(got, 2)
	})
	o.PushLocked(func() { got = append(got, 4) })
	if n := o.LenLocked(); n != 2 {
		t.Errorf("LenLocked = %d, want 2", n)
	}
	mu.Unlock()
	o.Drain(&mu)
	want := []int{1, 2, 4, 3}
	if len(got) != len(want) {
		t.Fatalf("ran %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("ran %v, want %v", got, want)
		}
	}
	if o.LenLocked() != 0 {
		t.Errorf("outbox not empty after drain")
	}
}

// With several goroutines pushing and draining, every effect runs exactly
// once and never two at a time.
func TestConcurrentDrainRunsEachEffectOnceSerially(t *testing.T) {
	var (
		mu      sync.Mutex
		o       Outbox
		running bool
		ran     int
		check   sync.Mutex
	)
	const workers, each = 8, 500
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range each {
				mu.Lock()
				o.PushLocked(func() {
					check.Lock()
					if running {
						t.Error("two effects ran at once")
					}
					running = true
					check.Unlock()
					ran++
					check.Lock()
					running = false
					check.Unlock()
				})
				mu.Unlock()
				o.Drain(&mu)
			}
		})
	}
	wg.Wait()
	o.Drain(&mu)
	if ran != workers*each {
		t.Errorf("ran %d effects, want %d", ran, workers*each)
	}
}

// A drain takes the whole queue at once: LenLocked no longer counts the
// taken effects while they run, and in a steady state (the two arrays
// alternating) pushing and draining allocate nothing.
func TestDrainTakesTheBatch(t *testing.T) {
	var (
		mu sync.Mutex
		o  Outbox
	)
	lens := []int{}
	f := func() {
		mu.Lock()
		lens = append(lens, o.LenLocked())
		mu.Unlock()
	}
	mu.Lock()
	o.PushLocked(f)
	o.PushLocked(f)
	mu.Unlock()
	o.Drain(&mu)
	if len(lens) != 2 || lens[0] != 0 || lens[1] != 0 {
		t.Fatalf("LenLocked seen by the effects of a taken batch: %v, want [0 0]", lens)
	}
	nop := func() {}
	step := func() {
		mu.Lock()
		for range 8 {
			o.PushLocked(nop)
		}
		mu.Unlock()
		o.Drain(&mu)
	}
	step()
	step()
	if n := testing.AllocsPerRun(100, step); n != 0 {
		t.Fatalf("push and drain allocate %v times in a steady state", n)
	}
}
