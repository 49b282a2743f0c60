package agent

import (
	"sync"
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/internal/clock"
)

// On the wall clock timers fire on their own goroutines and callers come
// from several goroutines; run with -race. Output must see batches one at a
// time, each Packet-In exactly once.
func TestWallClockConcurrency(t *testing.T) {
	const workers, perWorker = 4, 25
	cfg := Config{PacketInCost: 200 * time.Microsecond, BatchSize: 8, FlushPeriod: 20 * time.Millisecond,
		MissQueueLimit: 1000, JobQueueLimit: 1000, RateLimit: 5000, BurstLimit: 50}
	var (
		mu       sync.Mutex
		inOutput bool
		seen     = map[int]int{}
		all      = make(chan struct{})
		jobsDone sync.WaitGroup
	)
	out := OutputFunc(func(batch []PacketIn) {
		mu.Lock()
		if inOutput {
			t.Error("Output called concurrently")
		}
		inOutput = true
		mu.Unlock()
		time.Sleep(100 * time.Microsecond)
		mu.Lock()
		for _, p := range batch {
			seen[p.Cookie.(int)]++
		}
		inOutput = false
		if len(seen) == workers*perWorker {
			close(all)
		}
		mu.Unlock()
	})
	a, err := New(clock.Wall{}, cfg, out, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Stop()
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range perWorker {
				if !a.Miss(PacketIn{Cookie: w*perWorker + i}) {
					t.Errorf("miss %d refused", w*perWorker+i)
				}
				jobsDone.Add(1)
				a.Submit(Job{Cost: 50 * time.Microsecond, Start: func() time.Duration { return 10 * time.Microsecond },
					Done: jobsDone.Done})
			}
		})
	}
	wg.Wait()
	select {
	case <-all:
	case <-time.After(5 * time.Second):
		t.Fatalf("only %d of %d Packet-Ins reached Output", len(seen), workers*perWorker)
	}
	jobsDone.Wait()
	mu.Lock()
	defer mu.Unlock()
	for id, n := range seen {
		if n != 1 {
			t.Errorf("Packet-In %d sent %d times", id, n)
		}
	}
	if s := a.Stats(); s.JobsDone != workers*perWorker || s.DroppedPacketIns() != 0 {
		t.Errorf("stats %+v", s)
	}
}

// On the wall clock each finishing timer fires a little late. The next
// build must start at the modelled end of the previous one, not at the late
// firing, or the lateness adds up: 400 back-to-back builds of 250 µs must
// leave the CPU busy for about 100 ms, not 100 ms plus 400 timer delays.
func TestWallClockBackToBackBuildsDoNotDrift(t *testing.T) {
	const n, cost = 400, 250 * time.Microsecond
	var (
		mu   sync.Mutex
		last time.Time
		got  int
		done = make(chan struct{})
	)
	out := OutputFunc(func(batch []PacketIn) {
		mu.Lock()
		defer mu.Unlock()
		for _, p := range batch {
			if p.BuiltAt.After(last) {
				last = p.BuiltAt
			}
		}
		if got += len(batch); got == n {
			close(done)
		}
	})
	a, err := New(clock.Wall{}, Config{PacketInCost: cost, BatchSize: 1, MissQueueLimit: n, JobQueueLimit: n}, out, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Stop()
	start := time.Now()
	for i := range n {
		if !a.Miss(PacketIn{Cookie: i, MissAt: start}) {
			t.Fatalf("miss %d refused", i)
		}
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("builds did not finish")
	}
	mu.Lock()
	busy := last.Sub(start)
	mu.Unlock()
	// The modelled total is n·cost = 100 ms. Only the last timer's lateness
	// (and the test's own scheduling) may add to it; allow 40 ms of that.
	if want := time.Duration(n) * cost; busy < want || busy > want+40*time.Millisecond {
		t.Errorf("400 builds of %v took %v of modelled CPU time, want %v (+ at most one timer's lateness)", cost, busy, want)
	}
}
