package clock

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// refSched is the specification of the Sim's order, written as plainly as
// possible: a list of (time, seq) kept unsorted, the minimum found by a
// scan. The Sim (a heap whose fired root is replaced by the first event
// its callback schedules) must fire exactly the same events in exactly
// the same order.
type refSched struct {
	now, seq int64
	ev       []refEv
}

type refEv struct {
	at, seq int64
	f       func()
	stopped *bool
}

func (r *refSched) add(d time.Duration, f func()) *bool {
	r.seq++
	st := new(bool)
	r.ev = append(r.ev, refEv{at: r.now + int64(max(d, 0)), seq: r.seq, f: f, stopped: st})
	return st
}

// first is the index of the next event to fire, -1 if none is left.
func (r *refSched) first() int {
	best := -1
	for i, e := range r.ev {
		if *e.stopped {
			continue
		}
		if best < 0 || e.at < r.ev[best].at || (e.at == r.ev[best].at && e.seq < r.ev[best].seq) {
			best = i
		}
	}
	return best
}

// fire removes event i and runs it at its time.
func (r *refSched) fire(i int) {
	e := r.ev[i]
	r.ev = slices.Delete(r.ev, i, i+1)
	r.now = e.at
	e.f()
}

func (r *refSched) run() {
	for i := r.first(); i >= 0; i = r.first() {
		r.fire(i)
	}
}

// orderModel is the random model of the order tests: events that
// schedule events (Post or AfterFunc, one in two), stop a random earlier
// timer (pending, fired or already stopped; one callback in three), and
// with next call Next (one in four). Its spawn draws from r the same way
// whatever runs it, so the Sim and the reference see the same model.
type orderModel struct {
	delay func(*rand.Rand) time.Duration
	depth int  // nesting limit
	next  bool // callbacks call Next
}

// orderSched is what the model needs from the Sim or the reference.
type orderSched interface {
	// schedule runs f after d; for an AfterFunc (not post) it returns a
	// stop that does what Timer.Stop does.
	schedule(d time.Duration, post bool, f func()) (stop func())
	elapsed() int64
	next()
}

// spawner returns spawn(id, depth), which schedules event id and writes
// "id@time " to b when it fires.
func (m orderModel) spawner(r *rand.Rand, s orderSched, b *strings.Builder) func(id, depth int) {
	var stops []func()
	var spawn func(id, depth int)
	spawn = func(id, depth int) {
		d := m.delay(r)
		f := func() {
			fmt.Fprintf(b, "%d@%d ", id, s.elapsed())
			if m.next && r.IntN(4) == 0 {
				s.next()
			}
			if depth < m.depth {
				for k := range r.IntN(3) {
					spawn(id*10+k, depth+1)
				}
			}
			if len(stops) > 0 && r.IntN(3) == 0 {
				stops[r.IntN(len(stops))]()
			}
		}
		post := r.IntN(2) == 0
		if stop := s.schedule(d, post, f); !post {
			stops = append(stops, stop)
		}
	}
	return spawn
}

type simOrder struct{ s *Sim }

func (o simOrder) schedule(d time.Duration, post bool, f func()) func() {
	if post {
		o.s.Post(d, f)
		return nil
	}
	t := o.s.AfterFunc(d, f)
	return func() { t.Stop() }
}
func (o simOrder) elapsed() int64 { return int64(o.s.Elapsed()) }
func (o simOrder) next()          { o.s.Next() }

// The reference's stop, like Timer.Stop, does nothing once f has run.
func (r *refSched) schedule(d time.Duration, post bool, f func()) func() {
	fired := new(bool)
	st := r.add(d, func() { *fired = true; f() })
	return func() {
		if !*fired {
			*st = true
		}
	}
}
func (r *refSched) elapsed() int64 { return r.now }
func (r *refSched) next()          {} // the Sim's Next changes nothing

// A random model mixing Post, AfterFunc, Stop (of pending, fired and
// already stopped timers) and nested scheduling with many ties fires the
// same trace on the Sim as on the reference scheduler.
func TestSimMatchesReferenceOrder(t *testing.T) {
	seeds := uint64(20)
	if testing.Short() {
		seeds = 4 // the race phase: 20 seeds take 7 s under -race
	}
	m := orderModel{delay: func(r *rand.Rand) time.Duration { return time.Duration(r.IntN(4)) * time.Millisecond }, depth: 4} // coarse: many ties
	for seed := range seeds {
		trace := func(s orderSched, run func()) string {
			var b strings.Builder
			spawn := m.spawner(rand.New(rand.NewPCG(seed, 9)), s, &b)
			for i := range 300 {
				spawn(i, 0)
			}
			run()
			return b.String()
		}
		sim := NewSim(epoch)
		ref := &refSched{}
		got, want := trace(simOrder{sim}, sim.Run), trace(ref, ref.run)
		if sim.Pending() != 0 {
			t.Fatalf("seed %d: %d pending after Run", seed, sim.Pending())
		}
		if got != want {
			t.Fatalf("seed %d: the Sim's order differs from the reference\nsim: %.300s\nref: %.300s", seed, got, want)
		}
		if strings.Count(got, " ") < 300 {
			t.Fatalf("seed %d: only %d events fired", seed, strings.Count(got, " "))
		}
	}
}

// runUntil fires every event due at or before bound, then moves the clock
// to bound if that is later.
func (r *refSched) runUntil(bound int64) {
	for i := r.first(); i >= 0 && r.ev[i].at <= bound; i = r.first() {
		r.fire(i)
	}
	r.now = max(r.now, bound)
}

// fineDelay draws the delays that probe the event queue's structure:
// ties, times inside one calendar bucket and on both sides of a bucket's
// and the calendar's edges, and far ones that wait in its heap.
func fineDelay(r *rand.Rand) time.Duration {
	const shift = 8 // the queue's bucket width in the 10 Gbit/s cells
	const span = calBuckets << shift
	switch r.IntN(6) {
	case 0:
		return 0
	case 1:
		return time.Duration(r.IntN(1 << shift))
	case 2:
		return time.Duration(r.IntN(8)<<shift + r.IntN(3) - 1)
	case 3:
		return time.Duration(span + r.IntN(5) - 2)
	case 4:
		return time.Duration(r.IntN(3 * span))
	}
	return time.Duration(r.IntN(4)) * time.Second
}

// The same as TestSimMatchesReferenceOrder with delays that exercise the
// queue's buckets (fineDelay), driven by RunUntil in steps with events
// scheduled from outside between them and Next called inside callbacks:
// both make the queue look past the clock, and what is scheduled next is
// due before what it looked at.
func TestSimMatchesReferenceOrderFine(t *testing.T) {
	seeds := uint64(20)
	if testing.Short() {
		seeds = 4
	}
	const steps = 200
	m := orderModel{delay: fineDelay, depth: 6, next: true}
	for seed := range seeds {
		// Between steps the model spawns up to three events from
		// outside and runs to a random bound past the clock.
		trace := func(s orderSched, runUntil func(d time.Duration), run func()) string {
			var b strings.Builder
			r := rand.New(rand.NewPCG(seed, 11))
			spawn := m.spawner(r, s, &b)
			for i := range steps {
				for k := range r.IntN(4) {
					spawn(1000*i+k, 0)
				}
				runUntil(time.Duration(r.IntN(4 << 8)))
				fmt.Fprintf(&b, "| ")
			}
			run()
			return b.String()
		}
		sim := NewSim(epoch)
		ref := &refSched{}
		got := trace(simOrder{sim}, func(d time.Duration) { sim.RunUntil(sim.Now().Add(d)) }, sim.Run)
		want := trace(ref, func(d time.Duration) { ref.runUntil(ref.now + int64(d)) }, ref.run)
		if got != want {
			i := 0
			for i < min(len(got), len(want)) && got[i] == want[i] {
				i++
			}
			lo := max(0, i-150)
			t.Fatalf("seed %d: the Sim's order differs from the reference at byte %d\nsim: %.300s\nref: %.300s", seed, i, got[lo:], want[lo:])
		}
		if n := strings.Count(got, "@"); n < 1000 {
			t.Fatalf("seed %d: only %d events fired", seed, n)
		}
	}
}

func TestSimPostAllocations(t *testing.T) {
	s := NewSim(epoch)
	n := 0
	var tick func()
	tick = func() {
		n++
		if n%100 != 0 {
			s.Post(time.Microsecond, tick)
		}
	}
	for range 10 { // grow the heap
		s.Post(0, tick)
	}
	s.Run()
	allocs := testing.AllocsPerRun(100, func() {
		s.Post(time.Millisecond, tick)
		s.Run()
	})
	if allocs != 0 {
		t.Errorf("%.1f allocations per 100 posted events, want 0", allocs)
	}
}

// A callback that panics must not leave its own event behind: the next
// Run fires what was scheduled after it, not the panicking event again.
func TestSimPanicInCallbackLeavesNoHole(t *testing.T) {
	s := NewSim(epoch)
	var log []string
	s.Post(time.Millisecond, func() { log = append(log, "boom"); panic("model bug") })
	s.Post(2*time.Millisecond, func() { log = append(log, "after") })
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("the panic did not reach Run's caller")
			}
		}()
		s.Run()
	}()
	if s.Pending() != 1 {
		t.Fatalf("Pending = %d, want 1", s.Pending())
	}
	if next, ok := s.Next(); !ok || next != epoch.Add(2*time.Millisecond) {
		t.Fatalf("Next = %v %v, want the 2 ms event", next, ok)
	}
	s.Run()
	if !slices.Equal(log, []string{"boom", "after"}) {
		t.Fatalf("fired %v, want boom then after", log)
	}
}

// Next and Stop (which may compact the heap) called from inside a
// callback see the heap without the firing event.
func TestSimNextAndCompactInsideCallback(t *testing.T) {
	s := NewSim(epoch)
	var timers []Timer
	for i := range 200 {
		timers = append(timers, s.AfterFunc(time.Duration(i+10)*time.Millisecond, func() {}))
	}
	var next time.Time
	s.AfterFunc(time.Millisecond, func() {
		var ok bool
		if next, ok = s.Next(); !ok {
			t.Error("Next inside a callback: no event")
		}
		for _, tm := range timers[:150] { // enough to compact
			tm.Stop()
		}
	})
	s.Run()
	if next != epoch.Add(10*time.Millisecond) {
		t.Fatalf("Next inside the callback = %v, want 10 ms (not the firing event)", next.Sub(epoch))
	}
	if s.Fired() != 51 || s.Now() != epoch.Add(209*time.Millisecond) {
		t.Fatalf("fired %d, now %v: want 51 and 209 ms", s.Fired(), s.Now().Sub(epoch))
	}
}

// Mono on a Sim reads the same nanoseconds as Now().Sub(base), for a base
// that is the Sim's time, one before its start, and one with a monotonic
// reading; on the wall clock it falls back to Now().Sub.
func TestMonoMatchesSub(t *testing.T) {
	s := NewSim(epoch)
	s.RunFor(1500 * time.Millisecond)
	bases := []time.Time{s.Now(), epoch.Add(-time.Hour), time.Now(), time.Time{}}
	var monos []Mono
	for _, b := range bases {
		monos = append(monos, NewMono(s, b))
	}
	if monos[0].Sim() != s || monos[1].Sim() != s {
		t.Fatal("no fast path on the Sim")
	}
	for range 5 {
		s.RunFor(123456789 * time.Nanosecond)
		for i, b := range bases {
			if got, want := monos[i].Now(), int64(s.Now().Sub(b)); got != want {
				t.Fatalf("base %v: Mono %d, Sub %d", b, got, want)
			}
		}
	}
	w := NewMono(Wall{}, time.Now())
	if w.Sim() != nil || w.Now() < 0 {
		t.Fatalf("wall Mono: sim %v, now %d", w.Sim(), w.Now())
	}
}
