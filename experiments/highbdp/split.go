package highbdp

import (
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/pseudocong/pseudocong/internal/clock"
	"github.com/pseudocong/pseudocong/netsim"
)

// A split cell runs on two event loops, one per core: the senders' side
// (the sources and what the cut leaves with them) and the sinks' side
// (the rest). The cut is a set of links: L both ways (SplitBottleneck;
// the senders' side keeps the access links, R1 and L's forward queue), or
// every source's access link for the data and L for the ACKs
// (SplitMixed; the senders' side keeps the sources, their access queues,
// L's reverse far end and R1's links back to the sources, which balances
// the two sides better). A packet that starts on a cut link at t reaches
// the other side at t + serialisation + the link's delay, so neither side
// can affect the other sooner than the shortest such delay. It is the
// lookahead of a conservative parallel simulation: both sides run a
// window of that length at once, each on its own clock, and between
// windows the packets the cut links carried are handed over, all of them
// due after the window just run.
//
// Each side is a deterministic function of its own events and of what it
// is handed at the window's end, in a fixed order, so a split run gives
// the same results every time, whatever the threads do. It is not the
// serial run's event order: two events due at the same nanosecond on one
// side keep the order they were posted in, and a packet handed over is
// posted at the window's end, not when it started, so such ties can break
// the other way (docs/high-bdp.md, "Round 5").

// Where a cell is cut (Scenario.Split).
const (
	SplitNone       = ""
	SplitBottleneck = "bottleneck"
	SplitMixed      = "mixed"
)

// knownSplit reports whether split names a cut (or none).
func knownSplit(split string) bool {
	return split == SplitNone || split == SplitBottleneck || split == SplitMixed
}

// crossing is a packet on its way over a cut link to the other side, by
// value: the sending side copies it out of its descriptor (which goes
// straight back to its own pool) and the receiving side into one of its
// own when it delivers. Handing over pointers instead made every packet a
// cache line written on one core and read on the other, and moved the
// descriptors between the pools in cold batches: it cost more than half
// of what the second core won (docs/high-bdp.md, "Round 5"). Copies are
// written and read in order, which the caches stream.
type crossing struct {
	at   time.Duration // since epoch: when its last bit arrives
	flow int32
	len  int32
	ecn  netsim.ECN
	seg  wireSeg
}

// inbound is a cut link's far end: the packets handed over, in the order
// they started (their arrival order: one delay for all), delivered when
// the side's clock reaches them, with at most one event pending, as
// netsim.Link's wire does.
//
// The crossings travel in batches, never copied on the way: the sending
// side appends a window's to out, and between windows, both sides
// stopped, handOver moves that slice whole to the receiving side's queue
// (batches) and the receiving side's emptied slices back to the sending
// side for reuse. A window's crossings are due a window later, when the
// side that reads them runs, so each side touches only its own fields
// while the windows run.
type inbound struct {
	// The receiving side's.
	sim     *clock.Sim
	pool    *netsim.Pool[pkt]
	batches [][]crossing // handed over, oldest first; batches[0][head:] not yet delivered
	head    int
	drained [][]crossing // delivered, to go back to the sending side
	armed   bool
	deliver func(*netsim.Packet)
	fire    func()
	// deliveredBytes counts what reached the far end: the cut link's
	// DeliveredBytes counterpart (a link that hands off delivers nothing
	// itself).
	deliveredBytes uint64

	// The sending side's, a cache line away from the receiving side's
	// (and from the next inbound's): both sides write theirs for every
	// packet, and a line written by both cores moves between them each
	// time.
	_     [64]byte
	out   []crossing   // this window's
	spare [][]crossing // empty slices to fill next
	_     [64]byte
}

func newInbound(sim *clock.Sim, pool *netsim.Pool[pkt], deliver func(*netsim.Packet)) *inbound {
	in := &inbound{sim: sim, pool: pool, deliver: deliver}
	in.fire = in.onFire
	return in
}

// handOver runs between windows, with both sides stopped: this window's
// crossings to the receiving side, the slices it emptied to the sending
// side.
func (in *inbound) handOver() {
	if len(in.out) > 0 {
		in.batches = append(in.batches, in.out)
		in.out = nil
		if k := len(in.spare); k > 0 {
			in.out, in.spare = in.spare[k-1][:0], in.spare[:k-1]
		}
	}
	in.spare = append(in.spare, in.drained...)
	clear(in.drained)
	in.drained = in.drained[:0]
	in.arm()
}

// next is the first crossing not yet delivered, nil if none.
func (in *inbound) next() *crossing {
	for len(in.batches) > 0 {
		if b := in.batches[0]; in.head < len(b) {
			return &b[in.head]
		}
		in.drained = append(in.drained, in.batches[0])
		in.batches[0] = nil
		in.batches, in.head = in.batches[1:], 0
	}
	return nil
}

func (in *inbound) arm() {
	if in.armed {
		return
	}
	if c := in.next(); c != nil {
		in.armed = true
		in.sim.Post(c.at-in.sim.Elapsed(), in.fire)
	}
}

func (in *inbound) onFire() {
	in.armed = false
	now := in.sim.Elapsed()
	for c := in.next(); c != nil && c.at <= now; c = in.next() {
		p := in.pool.Get()
		p.seg, p.flow = c.seg, c.flow
		p.p.Len, p.p.ECN = int(c.len), c.ecn
		in.head++
		in.deliveredBytes += uint64(p.p.Len)
		in.deliver(&p.p)
	}
	in.arm()
}

// halves is a split cell's two sides and what passes between them.
type halves struct {
	sims  [2]*clock.Sim
	pools [2]*netsim.Pool[pkt]
	ends  []*inbound // the cut links' far ends
	// spare, if set, says before each window whether a second core is
	// free for it (Scenario.SpareCore).
	spare func() bool
}

// cut makes a cut link's far end on the side other than from, delivering
// to deliver, and returns it and the Handoff for the link on side from.
func (h *halves) cut(from int, deliver func(*netsim.Packet)) (*inbound, func(*netsim.Packet, time.Time)) {
	in := newInbound(h.sims[1-from], h.pools[1-from], deliver)
	h.ends = append(h.ends, in)
	pool := h.pools[from]
	return in, func(np *netsim.Packet, at time.Time) {
		p := np.Meta.(*pkt)
		in.out = append(in.out, crossing{at: at.Sub(epoch), flow: p.flow, len: int32(np.Len), ecn: np.ECN, seg: p.seg})
		pool.Put(p)
	}
}

// run advances both sides to d, window by window (w, at most the cut
// links' delay), the sinks' side on its own goroutine locked to an OS
// thread, and returns that thread's CPU time. each, if set, runs between
// windows with both sides stopped (progress, cancellation); its error
// stops the run.
//
// A window for which spare says no core is free runs both sides on the
// calling thread, one after the other. The results are the same: within
// a window neither side sees anything of the other's but what was handed
// over before it. Two threads on one core would only take turns, and the
// one waiting would spin away the other's time.
func (h *halves) run(d, w time.Duration, each func(at time.Duration) error) (time.Duration, error) {
	if w <= 0 {
		return 0, fmt.Errorf("highbdp: split: window %v: want > 0 (the cut links' delay)", w)
	}
	// Written before a raise, read after the matching await (the
	// atomics order them). In a window both sides run on this thread,
	// errRcv is this thread's: the sinks' goroutine waits for a raise.
	var (
		target time.Duration // the window's end; < 0: stop
		errRcv error
		cpuRcv time.Duration
		start  = newSignal()
		done   = newSignal()
	)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		c0 := threadCPUTime()
		for k := uint64(1); ; k++ {
			start.await(k)
			if target < 0 {
				cpuRcv = threadCPUTime() - c0
				done.raise(k)
				return
			}
			errRcv = h.sims[rcvSide].TryRunUntil(epoch.Add(target))
			done.raise(k)
		}
	}()
	var err error
	k := uint64(0)
	for at := time.Duration(0); at < d && err == nil; {
		at = min(at+w, d)
		var errSnd error
		if h.spare != nil && !h.spare() {
			errSnd = h.sims[sndSide].TryRunUntil(epoch.Add(at))
			errRcv = h.sims[rcvSide].TryRunUntil(epoch.Add(at))
		} else {
			k++
			target = at
			start.raise(k)
			errSnd = h.sims[sndSide].TryRunUntil(epoch.Add(at))
			done.await(k)
		}
		if err = errors.Join(errSnd, errRcv); err != nil {
			break
		}
		for _, in := range h.ends {
			in.handOver()
		}
		if each != nil {
			err = each(at)
		}
	}
	k++
	target = -1
	start.raise(k)
	done.await(k)
	return cpuRcv, err
}

// signal is a counter one goroutine raises and another waits for. A
// window's end is usually less than a window away on the other side, and
// waking a sleeping thread cost up to a millisecond on the 2-core virtual
// machine this was measured on (an idle virtual CPU must be woken by the
// host): with windows of 2 ms (a cut at the access links) that was 40 %
// of the run.
// So await spins for up to spinFor, and only then sleeps on the channel
// (raise always leaves a token, so a sleeper cannot miss it). A split
// cell therefore keeps two cores busy even while one side waits: it is
// for free cores (docs/high-bdp.md, "Round 5").
//
// A side that had to sleep last time spins only spinShort: it has less
// work than the other side, so it waits for most of each window, and its
// spinning would only take the core from a thread that has work (another
// cell's, with more cells than cores). Its wake-up comes late by at most
// a wake-up latency, which that slack absorbs. The side with the more
// work keeps spinning, as its waits are short. (A SplitMixed side whose
// peer was descheduled once also spins short from then on; keying the
// short spin to waits longer than spinFor instead measured the same for
// SplitMixed and a little slower for SplitBottleneck, docs/high-bdp.md
// "Round 9".)
type signal struct {
	n     atomic.Uint64
	wake  chan struct{}
	slept bool // the last await slept; only the awaiting goroutine uses it
}

func newSignal() *signal { return &signal{wake: make(chan struct{}, 1)} }

// spinFor bounds the spinning: longer than a SplitMixed window (the
// access links' 2 ms), so two busy sides never sleep, and short beside a
// SplitBottleneck one (L's 53 ms). spinShort is the bound after a sleep.
const (
	spinFor   = 5 * time.Millisecond
	spinShort = 50 * time.Microsecond
)

func (s *signal) raise(v uint64) {
	s.n.Store(v)
	select {
	case s.wake <- struct{}{}:
	default: // a token is waiting already
	}
}

func (s *signal) await(v uint64) {
	limit := spinFor
	if s.slept {
		limit = spinShort
	}
	s.slept = false
	var since time.Time
	for i := 1; s.n.Load() < v; i++ {
		if i%1024 != 0 {
			continue
		}
		switch now := time.Now(); {
		case since.IsZero():
			since = now
		case now.Sub(since) > limit:
			<-s.wake
			s.slept = true
			since = time.Time{}
		}
	}
}
