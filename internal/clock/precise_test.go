package clock

import (
	"sync"
	"testing"
	"time"
)

// The contract, not the precision (a timing bound would fail on a busy
// host; BenchmarkTimerLateness measures it): timers fire in the order of
// their times, ties in call order, a stopped one never, one made in a
// callback too, and Close drops the rest.
func TestPreciseOrderStopClose(t *testing.T) {
	c, err := NewPrecise()
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var got []int
	fired := make(chan struct{})
	rec := func(i int) func() {
		return func() {
			mu.Lock()
			got = append(got, i)
			mu.Unlock()
		}
	}
	// The dispatcher waits in the first callback until the rest are set
	// up, so no timer fires before Stop and a slow test goroutine cannot
	// reorder them: each AfterFunc below is called after the one before
	// with a duration at least as long, so the times never decrease.
	gate := make(chan struct{})
	c.AfterFunc(0, func() { <-gate })
	c.AfterFunc(-time.Second, rec(0)) // in the past: at once
	c.AfterFunc(time.Millisecond, rec(1))
	stopped := c.AfterFunc(2*time.Millisecond, rec(-1))
	c.AfterFunc(3*time.Millisecond, rec(3))
	c.AfterFunc(3*time.Millisecond, rec(4)) // no earlier than 3: after it
	c.AfterFunc(4*time.Millisecond, func() {
		rec(5)()
		c.AfterFunc(0, func() { rec(6)(); close(fired) })
	})
	never := c.AfterFunc(time.Hour, rec(-2))
	if !stopped.Stop() {
		t.Fatal("Stop of a pending timer reported false")
	}
	if stopped.Stop() {
		t.Fatal("second Stop reported true")
	}
	close(gate)
	<-fired
	mu.Lock()
	want := []int{0, 1, 3, 4, 5, 6}
	if len(got) != len(want) {
		t.Fatalf("fired %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("fired %v, want %v", got, want)
		}
	}
	mu.Unlock()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if never.Stop() {
		t.Fatal("Stop after Close reported true")
	}
	if c.AfterFunc(0, rec(-3)).Stop() {
		t.Fatal("a timer made after Close is pending")
	}
	if err := c.Close(); err != nil {
		t.Fatal("second Close:", err)
	}
}

// BenchmarkTimerLateness reports how late 1 ms timers fire on the Go
// runtime's timers (Wall) and on Precise, on an otherwise idle process:
// the delay lines of the live link emulation run on one of them.
func BenchmarkTimerLateness(b *testing.B) {
	p, err := NewPrecise()
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	for _, bc := range []struct {
		name string
		clk  Clock
	}{{"wall", Wall{}}, {"precise", p}} {
		b.Run(bc.name, func(b *testing.B) {
			var sum time.Duration
			done := make(chan time.Duration)
			for b.Loop() {
				at := time.Now().Add(time.Millisecond)
				bc.clk.AfterFunc(time.Millisecond, func() { done <- time.Since(at) })
				sum += <-done
			}
			b.ReportMetric(float64(sum.Microseconds())/float64(b.N), "late-µs/op")
		})
	}
}
