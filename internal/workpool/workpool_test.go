package workpool

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
)

// Results come back in index order whatever the number of workers, and
// Progress counts every job once, in order, one call at a time.
func TestMapOrderAndProgress(t *testing.T) {
	for _, w := range []int{0, 1, 3, 50} {
		var seen []int
		var calls []int
		got, err := Map(context.Background(), 20, Options{Workers: w, Progress: func(done, total, i int) {
			if total != 20 {
				t.Errorf("total %d", total)
			}
			calls = append(calls, done) // unsynchronised on purpose: -race checks the calls do not overlap
			seen = append(seen, i)
		}}, func(i int) (int, error) { return i * i, nil })
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range got {
			if v != i*i {
				t.Fatalf("workers %d: result %d is %d", w, i, v)
			}
		}
		slices.Sort(seen)
		if len(calls) != 20 || calls[19] != 20 || !slices.IsSorted(calls) || !slices.Equal(seen, seq(20)) {
			t.Fatalf("workers %d: progress done %v, jobs %v", w, calls, seen)
		}
	}
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// No more than Workers jobs run at once, and that many do: the first
// three jobs wait for each other, which only returns with three workers.
func TestMapBound(t *testing.T) {
	var running, peak atomic.Int32
	var barrier sync.WaitGroup
	barrier.Add(3)
	_, err := Map(context.Background(), 12, Options{Workers: 3}, func(i int) (struct{}, error) {
		n := running.Add(1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		if i < 3 {
			barrier.Done()
			barrier.Wait()
		}
		running.Add(-1)
		return struct{}{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if p := peak.Load(); p != 3 {
		t.Fatalf("peak %d jobs at once, want 3", p)
	}
}

// Every job's error is returned, in index order, and the other jobs run.
func TestMapErrors(t *testing.T) {
	ran := make([]bool, 10)
	_, err := Map(context.Background(), 10, Options{Workers: 4}, func(i int) (int, error) {
		ran[i] = true
		if i == 7 || i == 2 {
			return 0, fmt.Errorf("job %d failed", i)
		}
		return i, nil
	})
	if err == nil || err.Error() != "job 2 failed\njob 7 failed" {
		t.Fatalf("error %q", err)
	}
	if slices.Contains(ran, false) {
		t.Fatalf("ran %v", ran)
	}
}

// Once ctx ends no further job starts and the error says why; a job
// that ran keeps its result.
func TestMapCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var started atomic.Int32
	got, err := Map(ctx, 100, Options{Workers: 1}, func(i int) (int, error) {
		started.Add(1)
		if i == 3 {
			cancel()
		}
		return i + 1, nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if n := started.Load(); n != 4 || got[3] != 4 || got[4] != 0 {
		t.Fatalf("%d jobs started (want 4), results %v", n, got[:6])
	}
	// A context that ends after the last job started is no error.
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	if err := Run(ctx2, 3, Options{Workers: 1}, func(i int) error {
		if i == 2 {
			cancel2()
		}
		return nil
	}); err != nil {
		t.Fatalf("cancel during the last job: %v", err)
	}
}

// A context already ended: the feeder and the workers that were fed just
// the same may both note the skip. Under the race detector this caught
// the feeder's unlocked write (a soak run of experiments/highbdp's
// TestSpecErrors, docs/ci.md round 14).
func TestMapCanceledBeforeStart(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for range 200 {
		var ran atomic.Int32
		_, err := Map(ctx, 8, Options{Workers: 4}, func(int) (int, error) { ran.Add(1); return 0, nil })
		if !errors.Is(err, context.Canceled) || ran.Load() != 0 {
			t.Fatalf("error %v and %d jobs run, want context.Canceled and none", err, ran.Load())
		}
	}
}
