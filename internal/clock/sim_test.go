package clock

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

var epoch = time.Date(2016, 1, 1, 0, 0, 0, 0, time.UTC)

// Compile-time check: both backends satisfy the contract.
var (
	_ Clock = (*Sim)(nil)
	_ Clock = Wall{}
)

func TestSimFiresInTimeOrder(t *testing.T) {
	tests := []struct {
		name   string
		delays []time.Duration
	}{
		{"already sorted", []time.Duration{1, 2, 3, 4, 5}},
		{"reversed", []time.Duration{5 * time.Second, 4 * time.Second, 3 * time.Second, time.Second, 0}},
		{"mixed", []time.Duration{7 * time.Millisecond, time.Microsecond, 3 * time.Hour, 0, 42}},
		{"negative clamps to now", []time.Duration{time.Second, -time.Second, 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := NewSim(epoch)
			var got []time.Duration
			for _, d := range tc.delays {
				s.AfterFunc(d, func() { got = append(got, s.Now().Sub(epoch)) })
			}
			if s.Pending() != len(tc.delays) {
				t.Fatalf("Pending = %d, want %d", s.Pending(), len(tc.delays))
			}
			s.Run()
			want := make([]time.Duration, len(tc.delays))
			for i, d := range tc.delays {
				want[i] = max(d, 0)
			}
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("fire times = %v, want %v", got, want)
			}
			if s.Pending() != 0 {
				t.Fatalf("Pending after Run = %d", s.Pending())
			}
		})
	}
}

func TestSimTiesAreFIFO(t *testing.T) {
	s := NewSim(epoch)
	var order []int
	for i := range 100 {
		// Interleave two instants so the heap really has to sort.
		d := time.Second
		if i%2 == 1 {
			d = 2 * time.Second
		}
		s.AfterFunc(d, func() { order = append(order, i) })
	}
	s.Run()
	var want []int
	for i := 0; i < 100; i += 2 {
		want = append(want, i)
	}
	for i := 1; i < 100; i += 2 {
		want = append(want, i)
	}
	if !slices.Equal(order, want) {
		t.Fatalf("order = %v\nwant    %v", order, want)
	}
}

func TestSimStop(t *testing.T) {
	s := NewSim(epoch)
	fired := map[string]bool{}
	a := s.AfterFunc(time.Second, func() { fired["a"] = true })
	b := s.AfterFunc(2*time.Second, func() { fired["b"] = true })
	var c Timer
	// An event that stops a later one, the way a reply stops a
	// retransmission timer.
	s.AfterFunc(1500*time.Millisecond, func() {
		if !c.Stop() {
			t.Error("Stop of a pending timer from inside an event returned false")
		}
	})
	c = s.AfterFunc(3*time.Second, func() { fired["c"] = true })

	if !b.Stop() {
		t.Fatal("first Stop of pending timer returned false")
	}
	if b.Stop() {
		t.Fatal("second Stop returned true")
	}
	if got := s.Pending(); got != 3 {
		t.Fatalf("Pending = %d, want 3", got)
	}
	s.Run()
	if !fired["a"] || fired["b"] || fired["c"] {
		t.Fatalf("fired = %v, want only a", fired)
	}
	if a.Stop() {
		t.Fatal("Stop after firing returned true")
	}
	if s.Now() != epoch.Add(1500*time.Millisecond) {
		t.Fatalf("Now = %v; stopped events must not advance the clock", s.Now().Sub(epoch))
	}
}

func TestSimNestedScheduling(t *testing.T) {
	s := NewSim(epoch)
	var log []string
	record := func(name string) {
		log = append(log, fmt.Sprintf("%s@%v", name, s.Now().Sub(epoch)))
	}
	s.AfterFunc(time.Second, func() {
		record("outer")
		s.AfterFunc(0, func() { record("same-instant child") })
		s.AfterFunc(time.Second, func() {
			record("child")
			s.AfterFunc(500*time.Millisecond, func() { record("grandchild") })
		})
	})
	s.AfterFunc(time.Second, func() { record("sibling") })
	s.Run()
	want := []string{
		"outer@1s",
		"sibling@1s", // scheduled before the zero-delay child: FIFO at 1s
		"same-instant child@1s",
		"child@2s",
		"grandchild@2.5s",
	}
	if !slices.Equal(log, want) {
		t.Fatalf("log = %q\nwant  %q", log, want)
	}
	if s.Fired() != 5 {
		t.Fatalf("Fired = %d, want 5", s.Fired())
	}
}

func TestSimRunUntilAndStep(t *testing.T) {
	s := NewSim(epoch)
	n := 0
	for i := 1; i <= 5; i++ {
		s.AfterFunc(time.Duration(i)*time.Second, func() { n++ })
	}
	s.RunUntil(epoch.Add(3 * time.Second)) // inclusive bound
	if n != 3 || s.Pending() != 2 {
		t.Fatalf("after RunUntil(3s): fired %d pending %d, want 3 and 2", n, s.Pending())
	}
	s.RunUntil(epoch.Add(3500 * time.Millisecond))
	if s.Now() != epoch.Add(3500*time.Millisecond) {
		t.Fatalf("RunUntil must advance an idle clock to its bound; Now = %v", s.Now().Sub(epoch))
	}
	if next, ok := s.Next(); !ok || next != epoch.Add(4*time.Second) {
		t.Fatalf("Next = %v %v, want 4s true", next.Sub(epoch), ok)
	}
	if !s.Step() || n != 4 || s.Now() != epoch.Add(4*time.Second) {
		t.Fatalf("Step: n=%d now=%v", n, s.Now().Sub(epoch))
	}
	s.RunFor(10 * time.Second)
	if n != 5 || s.Now() != epoch.Add(14*time.Second) {
		t.Fatalf("RunFor: n=%d now=%v", n, s.Now().Sub(epoch))
	}
	if s.Step() {
		t.Fatal("Step on an empty scheduler returned true")
	}
	// RunUntil to the past never moves the clock back.
	s.RunUntil(epoch)
	if s.Now() != epoch.Add(14*time.Second) {
		t.Fatal("clock moved backwards")
	}
}

func TestSimReentryPanics(t *testing.T) {
	s := NewSim(epoch)
	s.AfterFunc(0, func() {
		defer func() {
			if recover() == nil {
				t.Error("Run inside an event did not panic")
			}
		}()
		s.Run()
	})
	s.Run()
}

// TestSimDeterminism runs a randomised workload (schedule, nest, stop) twice
// with the same seed and demands identical traces, and a different trace for
// a different seed so the test can fail.
func TestSimDeterminism(t *testing.T) {
	trace := func(seed uint64) string {
		s := NewSim(epoch)
		r := rand.New(rand.NewPCG(seed, 1))
		var b strings.Builder
		var timers []Timer
		var spawn func(id, depth int)
		spawn = func(id, depth int) {
			// Coarse delays force many ties.
			d := time.Duration(r.IntN(5)) * time.Millisecond
			timers = append(timers, s.AfterFunc(d, func() {
				fmt.Fprintf(&b, "%d@%d ", id, s.Elapsed())
				if depth < 3 {
					for k := range r.IntN(3) {
						spawn(id*10+k, depth+1)
					}
				}
				if len(timers) > 0 && r.IntN(4) == 0 {
					timers[r.IntN(len(timers))].Stop()
				}
			}))
		}
		for i := range 200 {
			spawn(i, 0)
		}
		s.Run()
		return b.String()
	}
	a, b := trace(7), trace(7)
	if a != b {
		t.Fatal("same seed gave different traces")
	}
	if a == trace(8) {
		t.Fatal("different seeds gave the same trace; the test cannot detect anything")
	}
}

// TestSimCompactsStoppedTimers checks lazy deletion does not leak: a model
// that arms and stops a timer per packet keeps the heap small.
func TestSimCompactsStoppedTimers(t *testing.T) {
	s := NewSim(epoch)
	keep := s.AfterFunc(time.Hour, func() {})
	for range 100_000 {
		s.AfterFunc(time.Minute, func() {}).Stop()
	}
	if s.q.len() > 200 {
		t.Fatalf("queue holds %d entries for 1 live timer", s.q.len())
	}
	if s.Pending() != 1 {
		t.Fatalf("Pending = %d, want 1", s.Pending())
	}
	s.Run()
	if s.Now() != epoch.Add(time.Hour) || keep.Stop() {
		t.Fatal("the live timer was lost during compaction")
	}
}

// TestQueueMatchesSort pushes random keys (ties, times on both sides of
// bucket and calendar boundaries, far-future ones) and checks pops come
// out in (time, push) order, with lower (a push before the calendar's
// first bucket, after a look ahead) and filter in the middle.
func TestQueueMatchesSort(t *testing.T) {
	for shift := range uint(16) {
		t.Run(fmt.Sprint(shift), func(t *testing.T) { testQueueMatchesSort(t, shift) })
	}
}

func testQueueMatchesSort(t *testing.T, shift uint) {
	type key struct {
		at  int64
		seq uint64
	}
	r := rand.New(rand.NewPCG(1, uint64(shift)))
	q := eventQueue{shift: shift}
	var want []key
	var seq uint64
	var now int64 // no push is due before now, nothing queued is
	lowered := 0
	push := func(at int64) {
		seq++
		if at < q.floor() {
			q.lower(now)
			lowered++
		}
		q.push(entry{at: at, seq: seq})
		want = append(want, key{at, seq})
	}
	width := int64(1) << shift // the first epoch's; adapt changes it
	span := calBuckets * width
	after := func(d int64) int64 { // now+d for d >= 0, saturating as the Sim does
		if now+d < now {
			return math.MaxInt64
		}
		return now + d
	}
	randAt := func() int64 {
		var d int64
		switch r.IntN(7) {
		case 1:
			d = int64(r.IntN(1000))
		case 2: // around a bucket's or the calendar's edge
			d = int64(r.IntN(3)-1) + []int64{width, span, span - now%span, 2 * span}[r.IntN(4)]
		case 3: // hours ahead
			d = 1<<42 + int64(r.IntN(1<<20))
		case 4:
			d = int64(r.IntN(1 << 30))
		case 5:
			d = r.Int64N(4 * span)
		case 6:
			d = int64(r.IntN(8)) * width
		}
		return after(d)
	}
	sortWant := func() {
		slices.SortFunc(want, func(a, b key) int {
			if a.at != b.at {
				return cmp.Compare(a.at, b.at)
			}
			return cmp.Compare(a.seq, b.seq)
		})
	}
	popOne := func(round int) {
		e := q.front()
		if e == nil {
			t.Fatalf("round %d: empty with %d to go", round, len(want))
		}
		if g := (key{e.at, e.seq}); g != want[0] {
			t.Fatalf("round %d: front %v, want %v", round, g, want[0])
		}
		now = e.at
		q.pop()
		want = want[1:]
	}
	for round := range 300 {
		for range r.IntN(100) {
			push(randAt())
		}
		if round%5 == 4 && len(want) > 0 { // drop a random third, as compact does
			drop := map[uint64]bool{}
			for _, w := range want {
				if r.IntN(3) == 0 {
					drop[w.seq] = true
				}
			}
			q.filter(func(e *entry) bool { return drop[e.seq] })
			want = slices.DeleteFunc(want, func(k key) bool { return drop[k.seq] })
		}
		sortWant()
		if q.len() != len(want) {
			t.Fatalf("round %d: len %d, want %d", round, q.len(), len(want))
		}
		for range r.IntN(len(want) + 1) {
			popOne(round)
		}
		if len(want) > 0 && r.IntN(2) == 0 {
			// A look ahead (RunUntil stopping at a bound) moved the
			// queue to the next entry; the clock stands somewhere
			// before it and schedules from there.
			q.front()
			now = max(now, want[0].at-r.Int64N(4*width))
			push(now)
			for range r.IntN(5) {
				push(after(r.Int64N(2 * span)))
			}
			sortWant()
		}
	}
	for range 50 { // the saturated "never", ties and all, after everything else
		push(max(now, math.MaxInt64-int64(r.IntN(3))))
		push(after(r.Int64N(3 * span)))
	}
	sortWant()
	for len(want) > 0 {
		popOne(-1)
	}
	if q.front() != nil || q.len() != 0 {
		t.Fatal("queue not empty after the last pop")
	}
	t.Logf("shift %d -> %d, lowered %d", shift, q.shift, lowered)
	if lowered < 10 {
		t.Fatalf("lower ran %d times; the test does not exercise it", lowered)
	}
}

// BenchmarkSimScheduleFire measures one AfterFunc plus its firing with a
// steady population of pending events (as in a busy sim).
func BenchmarkSimScheduleFire(b *testing.B) {
	for _, pending := range []int{0, 1000, 100_000} {
		b.Run(fmt.Sprintf("pending=%d", pending), func(b *testing.B) {
			s := NewSim(epoch)
			s.SetLimits(Limits{}) // b.N events: more than any budget at a long -benchtime
			nop := func() {}
			r := rand.New(rand.NewPCG(3, 4))
			for range pending {
				s.AfterFunc(time.Duration(r.IntN(1e9))+time.Hour, nop)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				s.AfterFunc(time.Duration(i%1000)*time.Microsecond, nop)
				s.Step()
			}
		})
	}
}

// BenchmarkSimChain is the self-rescheduling pattern of a paced sender.
func BenchmarkSimChain(b *testing.B) {
	s := NewSim(epoch)
	s.SetLimits(Limits{}) // b.N events in one Run
	b.ReportAllocs()
	n := 0
	var tick func()
	tick = func() {
		n++
		if n < b.N {
			s.AfterFunc(time.Millisecond, tick)
		}
	}
	s.AfterFunc(0, tick)
	b.ResetTimer()
	s.Run()
}
