package highbdp

import (
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/pseudocong/pseudocong/internal/clock"
	"github.com/pseudocong/pseudocong/internal/ring"
	"github.com/pseudocong/pseudocong/netsim"
	"github.com/pseudocong/pseudocong/tcp"
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
	end  int32         // the far end's index in halves.ends
	flow int32
	len  int
	ecn  netsim.ECN
	seg  tcp.Segment
}

// inbound is a cut link's far end: the packets handed over, in the order
// they started (their arrival order: one delay for all), delivered when
// the side's clock reaches them, with at most one event pending, as
// netsim.Link's wire does.
type inbound struct {
	sim     *clock.Sim
	pool    *netsim.Pool[pkt] // this side's
	wire    ring.Buffer[crossing]
	armed   bool
	deliver func(*netsim.Packet)
	fire    func()
	// deliveredBytes counts what reached the far end: the cut link's
	// DeliveredBytes counterpart (a link that hands off delivers nothing
	// itself).
	deliveredBytes uint64
}

func newInbound(sim *clock.Sim, pool *netsim.Pool[pkt], deliver func(*netsim.Packet)) *inbound {
	in := &inbound{sim: sim, pool: pool, deliver: deliver}
	in.fire = in.onFire
	return in
}

func (in *inbound) arm() {
	if in.armed || in.wire.Len() == 0 {
		return
	}
	in.armed = true
	in.sim.Post(in.wire.Head().at-in.sim.Elapsed(), in.fire)
}

func (in *inbound) onFire() {
	in.armed = false
	now := in.sim.Elapsed()
	for in.wire.Len() > 0 && in.wire.Head().at <= now {
		c := in.wire.Head()
		p := in.pool.Get()
		p.seg, p.flow = c.seg, int(c.flow)
		p.p.Len, p.p.ECN = c.len, c.ecn
		in.wire.Pop()
		in.deliveredBytes += uint64(p.p.Len)
		in.deliver(&p.p)
	}
	in.arm()
}

// halves is a split cell's two sides and what passes between them.
type halves struct {
	sims  [2]*clock.Sim
	pools [2]*netsim.Pool[pkt]
	out   [2][]crossing // handed off this window, by the side that sent them
	ends  []*inbound    // the cut links' far ends
}

// cut makes a cut link's far end on the side other than from, delivering
// to deliver, and returns it and the Handoff for the link on side from.
func (h *halves) cut(from int, deliver func(*netsim.Packet)) (*inbound, func(*netsim.Packet, time.Time)) {
	in := newInbound(h.sims[1-from], h.pools[1-from], deliver)
	k := int32(len(h.ends))
	h.ends = append(h.ends, in)
	out, pool := &h.out[from], h.pools[from]
	return in, func(np *netsim.Packet, at time.Time) {
		p := np.Meta.(*pkt)
		*out = append(*out, crossing{at: at.Sub(epoch), end: k, flow: int32(p.flow), len: np.Len, ecn: np.ECN, seg: p.seg})
		pool.Put(p)
	}
}

// run advances both sides to d, window by window (w, at most the cut
// links' delay), the sinks' side on its own goroutine locked to an OS
// thread, and returns that thread's CPU time. each, if set, runs between
// windows with both sides stopped (progress, cancellation); its error
// stops the run.
func (h *halves) run(d, w time.Duration, each func(at time.Duration) error) (time.Duration, error) {
	if w <= 0 {
		return 0, fmt.Errorf("highbdp: split: window %v: want > 0 (the cut links' delay)", w)
	}
	// Written before a raise, read after the matching await (the
	// atomics order them).
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
		k++
		target = at
		start.raise(k)
		errSnd := h.sims[sndSide].TryRunUntil(epoch.Add(at))
		done.await(k)
		if err = errors.Join(errSnd, errRcv); err != nil {
			break
		}
		for side := range h.out {
			for _, c := range h.out[side] {
				h.ends[c.end].wire.Push(c)
			}
			h.out[side] = h.out[side][:0]
		}
		for _, in := range h.ends {
			in.arm()
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
type signal struct {
	n    atomic.Uint64
	wake chan struct{}
}

func newSignal() *signal { return &signal{wake: make(chan struct{}, 1)} }

// spinFor bounds the spinning: longer than a SplitMixed window (the
// access links' 2 ms), so two busy sides never sleep, and short beside a
// SplitBottleneck one (L's 53 ms).
const spinFor = 5 * time.Millisecond

func (s *signal) raise(v uint64) {
	s.n.Store(v)
	select {
	case s.wake <- struct{}{}:
	default: // a token is waiting already
	}
}

func (s *signal) await(v uint64) {
	var since time.Time
	for i := 1; s.n.Load() < v; i++ {
		if i%1024 != 0 {
			continue
		}
		switch now := time.Now(); {
		case since.IsZero():
			since = now
		case now.Sub(since) > spinFor:
			<-s.wake
			since = time.Time{}
		}
	}
}
