package clock

import (
	"container/heap"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Precise is a wall clock whose timers fire within microseconds of their
// time, for the live link emulation's delay lines and shapers.
//
// Why not time.AfterFunc: an idle Go process waits for its next timer in
// epoll_wait, whose timeout is in whole milliseconds (runtime/netpoll_epoll.go
// rounds a wait below 1 ms up to 1 ms and truncates the rest). Every
// delay-line release was then up to 1 ms late, on average half of it: the
// ten delay lines of paper 003's live path added 4–6 ms to its 30.2 ms round
// trip, more on an idle host than on a busy one (where other wake-ups check
// the timers sooner), and released packets in clumps that depended on the
// host. Precise waits in a timerfd (CLOCK_MONOTONIC, absolute, no timer
// slack) on one goroutine locked to its own thread.
//
// Contract: f runs on that one dispatcher goroutine, one at a time, in the
// order of their times (ties in the order AfterFunc was called). f must
// not block: a slow f delays every timer after it. Stop after Close
// reports false; AfterFunc after Close returns a timer that never fires.
type Precise struct {
	fd   int
	done chan struct{}

	mu     sync.Mutex
	h      preciseHeap
	seq    uint64
	armed  int64 // CLOCK_MONOTONIC ns the timerfd is set for; 0: disarmed
	closed bool
}

type preciseTimer struct {
	c   *Precise
	at  int64 // CLOCK_MONOTONIC ns
	seq uint64
	f   func()
	idx int // in c.h; -1 when not pending
}

// NewPrecise starts a precise clock's dispatcher. Close stops it.
func NewPrecise() (*Precise, error) {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("clock: timerfd_create: %w", err)
	}
	c := &Precise{fd: fd, done: make(chan struct{})}
	go c.run()
	return c, nil
}

// Now is time.Now.
func (*Precise) Now() time.Time { return time.Now() }

// AfterFunc runs f on the dispatcher d from now (see Precise's contract).
func (c *Precise) AfterFunc(d time.Duration, f func()) Timer {
	t := &preciseTimer{c: c, at: monoNS() + max(int64(d), 0), f: f, idx: -1}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return t
	}
	t.seq = c.seq
	c.seq++
	heap.Push(&c.h, t)
	if c.armed == 0 || t.at < c.armed {
		c.arm(t.at)
	}
	return t
}

// Stop removes the timer if it is still pending. The timerfd is left
// armed for it: the dispatcher wakes, finds nothing due and re-arms.
func (t *preciseTimer) Stop() bool {
	c := t.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.idx < 0 {
		return false
	}
	heap.Remove(&c.h, t.idx)
	return true
}

// Close stops the dispatcher (after the f it may be running) and drops
// every pending timer.
func (c *Precise) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	for _, t := range c.h {
		t.idx = -1
	}
	c.h = nil
	c.arm(1) // long past: the blocked read returns at once
	c.mu.Unlock()
	<-c.done
	return unix.Close(c.fd)
}

// arm sets the timerfd to fire at CLOCK_MONOTONIC ns at (absolute), 0
// disarms it. c.mu is held.
func (c *Precise) arm(at int64) {
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(at)}
	if err := unix.TimerfdSettime(c.fd, unix.TFD_TIMER_ABSTIME, &spec, nil); err != nil {
		// Only a bad fd or value fails; neither can happen here.
		panic(fmt.Sprintf("clock: timerfd_settime: %v", err))
	}
	c.armed = at
}

func (c *Precise) run() {
	defer close(c.done)
	// Its own thread: the blocking read is a plain syscall, not the
	// netpoller whose millisecond timeout this clock exists to avoid.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var buf [8]byte
	var due []*preciseTimer
	for {
		if _, err := unix.Read(c.fd, buf[:]); err != nil && !errors.Is(err, unix.EINTR) && !errors.Is(err, unix.EAGAIN) {
			panic(fmt.Sprintf("clock: timerfd read: %v", err))
		}
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return
		}
		now := monoNS()
		due = due[:0]
		for len(c.h) > 0 && c.h[0].at <= now {
			due = append(due, heap.Pop(&c.h).(*preciseTimer))
		}
		next := int64(0)
		if len(c.h) > 0 {
			next = c.h[0].at
		}
		c.arm(next)
		c.mu.Unlock()
		for i, t := range due {
			t.f()
			due[i] = nil
		}
	}
}

func monoNS() int64 {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts) // cannot fail for this clock
	return ts.Nano()
}

// preciseHeap orders timers by (at, seq).
type preciseHeap []*preciseTimer

func (h preciseHeap) Len() int { return len(h) }
func (h preciseHeap) Less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].seq < h[j].seq
}
func (h preciseHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].idx, h[j].idx = i, j
}
func (h *preciseHeap) Push(x any) {
	t := x.(*preciseTimer)
	t.idx = len(*h)
	*h = append(*h, t)
}
func (h *preciseHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = nil
	t.idx = -1
	*h = old[:len(old)-1]
	return t
}
