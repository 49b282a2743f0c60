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

func (r *refSched) run() {
	for {
		best := -1
		for i, e := range r.ev {
			if *e.stopped {
				continue
			}
			if best < 0 || e.at < r.ev[best].at || (e.at == r.ev[best].at && e.seq < r.ev[best].seq) {
				best = i
			}
		}
		if best < 0 {
			return
		}
		e := r.ev[best]
		r.ev = slices.Delete(r.ev, best, best+1)
		r.now = e.at
		e.f()
	}
}

// A random model mixing Post, AfterFunc, Stop (of pending, fired and
// already stopped timers) and nested scheduling with many ties fires the
// same trace on the Sim as on the reference scheduler.
func TestSimMatchesReferenceOrder(t *testing.T) {
	seeds := uint64(20)
	if testing.Short() {
		seeds = 4 // the race phase: 20 seeds take 7 s under -race
	}
	for seed := range seeds {
		simTrace := func() string {
			s := NewSim(epoch)
			r := rand.New(rand.NewPCG(seed, 9))
			var b strings.Builder
			var timers []Timer
			var spawn func(id, depth int)
			spawn = func(id, depth int) {
				d := time.Duration(r.IntN(4)) * time.Millisecond // coarse: many ties
				f := func() {
					fmt.Fprintf(&b, "%d@%d ", id, s.Elapsed())
					if depth < 4 {
						for k := range r.IntN(3) {
							spawn(id*10+k, depth+1)
						}
					}
					if len(timers) > 0 && r.IntN(3) == 0 {
						timers[r.IntN(len(timers))].Stop()
					}
				}
				if r.IntN(2) == 0 {
					s.Post(d, f)
				} else {
					timers = append(timers, s.AfterFunc(d, f))
				}
			}
			for i := range 300 {
				spawn(i, 0)
			}
			s.Run()
			if s.Pending() != 0 {
				t.Fatalf("seed %d: %d pending after Run", seed, s.Pending())
			}
			return b.String()
		}
		refTrace := func() string {
			ref := &refSched{}
			r := rand.New(rand.NewPCG(seed, 9))
			var b strings.Builder
			var timers []*bool
			var fired []*bool
			var spawn func(id, depth int)
			spawn = func(id, depth int) {
				d := time.Duration(r.IntN(4)) * time.Millisecond
				var done *bool
				f := func() {
					if done != nil {
						*done = true
					}
					fmt.Fprintf(&b, "%d@%d ", id, ref.now)
					if depth < 4 {
						for k := range r.IntN(3) {
							spawn(id*10+k, depth+1)
						}
					}
					if len(timers) > 0 && r.IntN(3) == 0 {
						k := r.IntN(len(timers))
						if !*fired[k] {
							*timers[k] = true
						}
					}
				}
				post := r.IntN(2) == 0
				st := ref.add(d, f)
				if !post {
					done = new(bool)
					timers, fired = append(timers, st), append(fired, done)
				}
			}
			for i := range 300 {
				spawn(i, 0)
			}
			ref.run()
			return b.String()
		}
		got, want := simTrace(), refTrace()
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
	for {
		best := -1
		for i, e := range r.ev {
			if *e.stopped {
				continue
			}
			if best < 0 || e.at < r.ev[best].at || (e.at == r.ev[best].at && e.seq < r.ev[best].seq) {
				best = i
			}
		}
		if best < 0 || r.ev[best].at > bound {
			break
		}
		e := r.ev[best]
		r.ev = slices.Delete(r.ev, best, best+1)
		r.now = e.at
		e.f()
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
	for seed := range seeds {
		simTrace := func() string {
			s := NewSim(epoch)
			r := rand.New(rand.NewPCG(seed, 11))
			var b strings.Builder
			var timers []Timer
			var spawn func(id, depth int)
			spawn = func(id, depth int) {
				d := fineDelay(r)
				f := func() {
					fmt.Fprintf(&b, "%d@%d ", id, s.Elapsed())
					if r.IntN(4) == 0 {
						s.Next()
					}
					if depth < 6 {
						for k := range r.IntN(3) {
							spawn(id*10+k, depth+1)
						}
					}
					if len(timers) > 0 && r.IntN(3) == 0 {
						timers[r.IntN(len(timers))].Stop()
					}
				}
				if r.IntN(2) == 0 {
					s.Post(d, f)
				} else {
					timers = append(timers, s.AfterFunc(d, f))
				}
			}
			for i := range steps {
				for k := range r.IntN(4) {
					spawn(1000*i+k, 0)
				}
				s.RunUntil(s.Now().Add(time.Duration(r.IntN(4 << 8))))
				fmt.Fprintf(&b, "| ")
			}
			s.Run()
			return b.String()
		}
		refTrace := func() string {
			ref := &refSched{}
			r := rand.New(rand.NewPCG(seed, 11))
			var b strings.Builder
			var timers []*bool
			var fired []*bool
			var spawn func(id, depth int)
			spawn = func(id, depth int) {
				d := fineDelay(r)
				var done *bool
				f := func() {
					if done != nil {
						*done = true
					}
					fmt.Fprintf(&b, "%d@%d ", id, ref.now)
					r.IntN(4) // the Sim's Next: it changes nothing
					if depth < 6 {
						for k := range r.IntN(3) {
							spawn(id*10+k, depth+1)
						}
					}
					if len(timers) > 0 && r.IntN(3) == 0 {
						k := r.IntN(len(timers))
						if !*fired[k] {
							*timers[k] = true
						}
					}
				}
				post := r.IntN(2) == 0
				st := ref.add(d, f)
				if !post {
					done = new(bool)
					timers, fired = append(timers, st), append(fired, done)
				}
			}
			for i := range steps {
				for k := range r.IntN(4) {
					spawn(1000*i+k, 0)
				}
				ref.runUntil(ref.now + int64(r.IntN(4<<8)))
				fmt.Fprintf(&b, "| ")
			}
			ref.run()
			return b.String()
		}
		got, want := simTrace(), refTrace()
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

// Post costs no allocation, and an event that schedules its follow-up
// (the hole path) none either.
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
