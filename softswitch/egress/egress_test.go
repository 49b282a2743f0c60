package egress

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/pseudocong/pseudocong/internal/clock"
	"github.com/pseudocong/pseudocong/netsim"
	"github.com/pseudocong/pseudocong/packet"
)

var t0 = time.Unix(1_000_000, 0)

// lateClock is the virtual clock with the wall clock's vice: every timer
// fires late, by up to max (uniform, seeded).
type lateClock struct {
	*clock.Sim
	max time.Duration
	rng *rand.Rand
}

func newLateClock(max time.Duration) *lateClock {
	return &lateClock{Sim: clock.NewSim(t0), max: max, rng: rand.New(rand.NewPCG(1, 2))}
}

func (c *lateClock) AfterFunc(d time.Duration, f func()) clock.Timer {
	// A wall-clock timer is late even when due at once (d ≤ 0).
	d = max(d, 0)
	if c.max > 0 {
		d += time.Duration(c.rng.Int64N(int64(c.max)))
	}
	return c.Sim.AfterFunc(d, f)
}

// sink records what the shaper sends, and when.
type sink struct {
	clk    clock.Clock
	frames [][]byte
	at     []time.Time
	bytes  int
}

func (k *sink) send(f []byte) error {
	k.frames = append(k.frames, append([]byte(nil), f...))
	k.at = append(k.at, k.clk.Now())
	k.bytes += len(f)
	return nil
}

// frame is an Ethernet frame of n bytes carrying seq in its payload.
func frame(n int, seq uint32) []byte {
	f := make([]byte, n)
	binary.BigEndian.PutUint16(f[12:], 0x88b5) // local experimental ethertype
	binary.BigEndian.PutUint32(f[14:], seq)
	return f
}

func seqOf(f []byte) uint32 { return binary.BigEndian.Uint32(f[14:]) }

func mustQdisc(t *testing.T, spec string) netsim.Qdisc {
	t.Helper()
	q, err := netsim.ParseQdisc(spec)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// offer transmits a frame of n bytes every gap from the clock's now for d,
// each scheduled on the sim directly (on time: the offered load is exact).
func offer(t *testing.T, sim *clock.Sim, s *Shaper, n int, gap, d time.Duration) (offered int) {
	t.Helper()
	for at := time.Duration(0); at < d; at += gap {
		seq := uint32(offered)
		offered++
		sim.AfterFunc(at, func() {
			if err := s.Transmit(frame(n, seq)); err != nil && !errors.Is(err, ErrDropped) {
				t.Errorf("transmit: %v", err)
			}
		})
	}
	return offered
}

// A delay line on timers that fire up to 1 ms late sends every frame
// between its due time and 1 ms after, in order: lateness does not add up.
func TestDelayLineSendsEachFrameAtItsDueTime(t *testing.T) {
	clk := newLateClock(time.Millisecond)
	k := &sink{clk: clk}
	const delay = 15 * time.Millisecond
	s, err := New(clk, k.send, Config{Delay: delay})
	if err != nil {
		t.Fatal(err)
	}
	const gap = 300 * time.Microsecond
	n := offer(t, clk.Sim, s, 100, gap, 2*time.Second)
	clk.Run()
	if len(k.frames) != n {
		t.Fatalf("sent %d of %d", len(k.frames), n)
	}
	for i, f := range k.frames {
		if seq := seqOf(f); seq != uint32(i) {
			t.Fatalf("frame %d carries seq %d: reordered", i, seq)
		}
		due := t0.Add(time.Duration(i)*gap + delay)
		if late := k.at[i].Sub(due); late < 0 || late > time.Millisecond {
			t.Fatalf("frame %d sent %v after its due time, want 0..1ms", i, late)
		}
	}
	if st := s.Stats(); st.InDelay != 0 || st.Sent != uint64(n) {
		t.Errorf("stats %+v", st)
	}
}

// A TBF offered twice its rate for 5 s sends its rate (plus the burst),
// to 0.1 %, although every wake-up is up to 1 ms late.
func TestTBFRateExactOnLateTimers(t *testing.T) {
	for _, late := range []time.Duration{0, time.Millisecond} {
		clk := newLateClock(late)
		k := &sink{clk: clk}
		s, err := New(clk, k.send, Config{Qdisc: mustQdisc(t, "tbf,rate=20mbit,burst=32kb,latency=50ms")})
		if err != nil {
			t.Fatal(err)
		}
		// 100 frames of 500 B every 10 ms is 40 Mbit/s, in batches so
		// that between them only the shaper's timers send: a frame's
		// worth of tokens (200 µs) comes faster than a late timer, so a
		// shaper sending one frame per wake-up would fall behind.
		const d = 5 * time.Second
		for range 100 {
			offer(t, clk.Sim, s, 500, 10*time.Millisecond, d)
		}
		clk.RunUntil(t0.Add(d))
		want := 20e6/8*d.Seconds() + 32<<10
		if got := float64(k.bytes); got < want*0.999 || got > want+500 {
			t.Errorf("late %v: sent %.0f bytes in %v, want %.0f (0.1 %%)", late, got, d, want)
		}
		st := s.Stats()
		if st.QdiscDropped == 0 || st.Backlog == 0 {
			t.Errorf("late %v: a TBF offered twice its rate neither dropped nor queued: %+v", late, st)
		}
		if st.BacklogBytes > 125_000+32<<10 {
			t.Errorf("backlog %d bytes passes the TBF's limit", st.BacklogBytes)
		}
	}
}

// A line rate makes a DropTail queue build, and its rate holds on late
// timers too.
func TestLineRateBuildsQueue(t *testing.T) {
	clk := newLateClock(time.Millisecond)
	k := &sink{clk: clk}
	s, err := New(clk, k.send, Config{Rate: 10_000_000, Qdisc: mustQdisc(t, "droptail,limit=50")})
	if err != nil {
		t.Fatal(err)
	}
	const d = 4 * time.Second
	offer(t, clk.Sim, s, 1500, 600*time.Microsecond, d) // 20 Mbit/s
	clk.RunUntil(t0.Add(d))
	want := 10e6 / 8 * d.Seconds()
	if got := float64(k.bytes); got < want*0.999 || got > want*1.001+2*1518 {
		t.Errorf("sent %.0f bytes, want %.0f", got, want)
	}
	st := s.Stats()
	if st.Backlog < 40 || st.QdiscDropped == 0 {
		t.Errorf("stats %+v: want a full 50-packet queue and drops", st)
	}
}

// Transmit copies: the caller may reuse its buffer at once.
func TestTransmitCopiesTheFrame(t *testing.T) {
	sim := clock.NewSim(t0)
	k := &sink{clk: sim}
	s, err := New(sim, k.send, Config{Delay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	buf := frame(64, 7)
	if err := s.Transmit(buf); err != nil {
		t.Fatal(err)
	}
	binary.BigEndian.PutUint32(buf[14:], 99)
	sim.Run()
	if len(k.frames) != 1 || seqOf(k.frames[0]) != 7 {
		t.Fatalf("sent %v: the shaper kept the caller's buffer", k.frames)
	}
}

// The delay line holds at most its limit and counts what it drops.
func TestDelayLineBounded(t *testing.T) {
	sim := clock.NewSim(t0)
	k := &sink{clk: sim}
	s, err := New(sim, k.send, Config{Delay: 100 * time.Millisecond, DelayLimit: 10_000})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		if err := s.Transmit(frame(1000, uint32(i))); err != nil {
			t.Fatal(err)
		}
	}
	if st := s.Stats(); st.InDelay != 10 || st.InDelayBytes != 10_000 || st.DelayDropped != 10 {
		t.Fatalf("stats %+v, want 10 on the line and 10 dropped", st)
	}
	sim.Run()
	if len(k.frames) != 10 {
		t.Fatalf("sent %d, want 10", len(k.frames))
	}
}

// A qdisc drop is an error (the switch counts tx_dropped); a loss is not.
func TestDropsAndLossCounted(t *testing.T) {
	sim := clock.NewSim(t0)
	k := &sink{clk: sim}
	// A 2 KiB bucket lets two 1000 B frames go, the 3 KiB limit holds three.
	s, err := New(sim, k.send, Config{Qdisc: mustQdisc(t, "tbf,rate=1mbit,burst=2kb,limit=3kb")})
	if err != nil {
		t.Fatal(err)
	}
	var dropped int
	for i := range 6 {
		if err := s.Transmit(frame(1000, uint32(i))); errors.Is(err, ErrDropped) {
			dropped++
		} else if err != nil {
			t.Fatal(err)
		}
	}
	if st := s.Stats(); dropped != 1 || st.QdiscDropped != 1 || st.Sent != 2 || st.Backlog != 3 {
		t.Fatalf("dropped %d, stats %+v", dropped, st)
	}

	loss, err := netsim.ParseLoss("100%")
	if err != nil {
		t.Fatal(err)
	}
	s, err = New(sim, k.send, Config{Loss: loss})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Transmit(frame(100, 0)); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	m.Add(2, "s1-eth2", s)
	want := `
# HELP pseudocong_port_egress_dropped_total Frames the port's emulated link dropped: reason qdisc (refused: full, RED, policer), loss (the loss model), delay_line (the delay line full).
# TYPE pseudocong_port_egress_dropped_total counter
pseudocong_port_egress_dropped_total{iface="s1-eth2",port="2",reason="delay_line"} 0
pseudocong_port_egress_dropped_total{iface="s1-eth2",port="2",reason="loss"} 1
pseudocong_port_egress_dropped_total{iface="s1-eth2",port="2",reason="qdisc"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "pseudocong_port_egress_dropped_total"); err != nil {
		t.Error(err)
	}
}

// RED with ecn marks an ECT frame CE in its IP header, with a checksum
// still right.
func TestREDMarksTheFrame(t *testing.T) {
	sim := clock.NewSim(t0)
	k := &sink{clk: sim}
	red, err := netsim.NewRED(netsim.REDConfig{Limit: 100_000, Min: 1000, Max: 2000, Avpkt: 1000, Weight: 1, ECN: true, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	// A slow line so the queue builds.
	s, err := New(sim, k.send, Config{Qdisc: red, Rate: 1_000_000})
	if err != nil {
		t.Fatal(err)
	}
	for range 10 {
		if err := s.Transmit(ipv4Frame(1000, 0b10)); err != nil {
			t.Fatal(err)
		}
	}
	sim.Run()
	st := s.Stats()
	if st.Marked == 0 || st.Sent != 10 {
		t.Fatalf("stats %+v: want marks and all 10 sent", st)
	}
	ce := 0
	for _, f := range k.frames {
		if f[15]&3 == 3 {
			ce++
		}
		if sum := packet.Checksum(f[14:34], 0); sum != 0 {
			t.Fatalf("IPv4 checksum over the header %#04x, want 0", sum)
		}
	}
	if ce != int(st.Marked) {
		t.Errorf("%d frames CE, %d marked", ce, st.Marked)
	}
}

func ipv4Frame(n int, ecn byte) []byte {
	f := make([]byte, n)
	binary.BigEndian.PutUint16(f[12:], 0x0800)
	ip := f[14:34]
	ip[0], ip[1] = 0x45, ecn
	binary.BigEndian.PutUint16(ip[2:], uint16(n-14))
	ip[8], ip[9] = 64, 17
	copy(ip[12:], []byte{10, 0, 0, 1, 10, 0, 0, 2})
	binary.BigEndian.PutUint16(ip[10:], packet.Checksum(ip, 0))
	return f
}

// On the wall clock, timers' callbacks run on their own goroutines while
// several goroutines transmit: the shaper serialises them (run with -race)
// and sends every frame, in each sender's order.
func TestWallClockConcurrentTransmit(t *testing.T) {
	var mu sync.Mutex
	var got []uint32
	send := func(f []byte) error {
		mu.Lock()
		got = append(got, seqOf(f))
		mu.Unlock()
		return nil
	}
	s, err := New(clock.Wall{}, send, Config{
		Qdisc: mustQdisc(t, "tbf,rate=100mbit,burst=8kb,limit=1mb"),
		Delay: 2 * time.Millisecond,
		Rate:  200_000_000,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	const senders, each = 4, 200
	var wg sync.WaitGroup
	for g := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if err := s.Transmit(frame(1000, uint32(g<<16|i))); err != nil {
					t.Errorf("transmit: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	// 800 kB at 100 Mbit/s is 64 ms; the deadline is generous for a
	// loaded machine.
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n == senders*each {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sent %d of %d within 10 s; stats %+v", n, senders*each, s.Stats())
		}
		time.Sleep(10 * time.Millisecond) // polling, not asserting
	}
	next := make([]int, senders)
	for _, seq := range got {
		g, i := int(seq>>16), int(seq&0xffff)
		if i != next[g] {
			t.Fatalf("sender %d: frame %d after %d: reordered", g, i, next[g]-1)
		}
		next[g]++
	}
	if st := s.Stats(); st.Sent != senders*each || st.Backlog != 0 || st.InDelay != 0 {
		t.Errorf("stats %+v", st)
	}
}

// A backlog drains at the line's rate even when nothing arrives to pump
// it and every wake-up is later than the bucket is deep (a busy host's
// timers: up to 5 ms here, the bucket 2.4 ms at 10 Mbit/s): the time a
// frame waited past its turn is owed to the backlog, not lost. This is
// the ACK-clocked case — TCP's next segments arrive only as the line
// drains — where late timers alone used to set the pace (~17 % short).
func TestLineRateHoldsWhileBackloggedOnVeryLateTimers(t *testing.T) {
	clk := newLateClock(5 * time.Millisecond)
	k := &sink{clk: clk}
	s, err := New(clk, k.send, Config{Rate: 10_000_000, Qdisc: mustQdisc(t, "droptail,limit=1000")})
	if err != nil {
		t.Fatal(err)
	}
	const n = 800
	for i := range n {
		if err := s.Transmit(frame(1500, uint32(i))); err != nil {
			t.Fatal(err)
		}
	}
	clk.RunUntil(t0.Add(10 * time.Second))
	if len(k.frames) != n {
		t.Fatalf("sent %d of %d frames", len(k.frames), n)
	}
	line := time.Duration(n * 1500 * 8 * int64(time.Second) / 10_000_000)
	took := k.at[n-1].Sub(t0)
	if took > line+6*time.Millisecond {
		t.Errorf("%d frames took %v on a line that sends them in %v: late timers slowed the line", n, took, line)
	}
	// The catch-up after a late wake-up is bounded: never more than the
	// backlog cap's worth of frames back to back.
	maxRun, run := 1, 1
	for i := 1; i < n; i++ {
		if k.at[i].Equal(k.at[i-1]) {
			run++
			maxRun = max(maxRun, run)
		} else {
			run = 1
		}
	}
	if capFrames := int(10_000_000/8*int64(txBacklogSlack)/int64(time.Second))/1500 + 2; maxRun > capFrames {
		t.Errorf("%d frames left back to back, want at most %d", maxRun, capFrames)
	}
}
