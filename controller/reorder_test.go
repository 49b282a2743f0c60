package controller

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/pseudocong/pseudocong/internal/clock"
	"github.com/pseudocong/pseudocong/openflow"
)

// reorderRig is a core with the reorderer on a virtual clock and a fake
// switch that records the decoded wire messages.
type reorderRig struct {
	clk *clock.Sim
	sw  *fakeSwitch
	s   *Session
	m   *Metrics
}

func newReorderRig(t *testing.T, cfg ReorderConfig) *reorderRig {
	t.Helper()
	clk := clock.NewSim(time.Unix(0, 0))
	m := mustMetrics(t)
	core := NewCore(Config{App: &recordingApp{}, Clock: clk, Metrics: m, Reorder: cfg})
	sw := newFakeSwitch(1)
	return &reorderRig{clk: clk, sw: sw, s: core.Connect(sw), m: m}
}

// add sends an ADD of priority prio for TCP destination port dst (every
// rule distinct, so none overlaps another unless the test wants it).
func (r *reorderRig) add(t *testing.T, xid uint32, prio uint16, dst uint16) {
	t.Helper()
	fm := tcpRule(xid, openflow.FlowModAdd, prio, dst)
	if err := r.s.Send(fm); err != nil {
		t.Fatal(err)
	}
}

func tcpRule(xid uint32, cmd uint16, prio, dst uint16) *openflow.FlowMod {
	m := openflow.MatchAll()
	m.Wildcards &^= openflow.WildcardDlType | openflow.WildcardNwProto | openflow.WildcardTpDst
	m.DlType, m.NwProto, m.TpDst = ethIPv4, ipTCP, dst
	out := &openflow.ActionOutput{Port: 2}
	return &openflow.FlowMod{Header: openflow.Header{Xid: xid}, Match: m, Command: cmd, Priority: prio,
		BufferID: openflow.NoBuffer, OutPort: openflow.PortNone, Actions: []openflow.Action{out}}
}

// wire lists the xids of what the switch got, in wire order.
func wire(t *testing.T, msgs []openflow.Message) []uint32 {
	t.Helper()
	var out []uint32
	for _, m := range msgs {
		out = append(out, m.GetXid())
	}
	return out
}

func equalU32(a, b []uint32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestReorderSortsBurstDescendingOnBarrier(t *testing.T) {
	r := newReorderRig(t, ReorderConfig{Window: time.Millisecond})
	// Ascending priorities: the worst order for a highest-first TCAM.
	for i := uint32(1); i <= 5; i++ {
		r.add(t, i, uint16(i*10), uint16(i))
	}
	if got := r.sw.take(); len(got) != 0 {
		t.Fatalf("ADDs went out before the window or a barrier: %d", len(got))
	}
	if err := r.s.Send(&openflow.BarrierRequest{Header: openflow.Header{Xid: 99}}); err != nil {
		t.Fatal(err)
	}
	got := r.sw.take()
	if want := []uint32{5, 4, 3, 2, 1, 99}; !equalU32(wire(t, got), want) {
		t.Fatalf("wire order %v, want %v (descending, barrier last)", wire(t, got), want)
	}
	for i, m := range got[:5] {
		fm := m.(*openflow.FlowMod)
		if fm.Priority != uint16(50-10*i) || len(fm.Actions) != 1 {
			t.Errorf("message %d: priority %d actions %v", i, fm.Priority, fm.Actions)
		}
	}
	if _, ok := got[5].(*openflow.BarrierRequest); !ok {
		t.Errorf("last message %T, want the barrier", got[5])
	}
	rm := r.m.reorder
	if h, mv, b := testutil.ToFloat64(rm.held), testutil.ToFloat64(rm.reordered), testutil.ToFloat64(rm.flushes[flushBarrier]); h != 5 || mv != 4 || b != 1 {
		t.Errorf("held %v moved %v barrier flushes %v, want 5, 4, 1", h, mv, b)
	}
	// The timer of the flushed burst must not fire a second flush.
	r.clk.RunFor(10 * time.Millisecond)
	if n := testutil.ToFloat64(rm.flushes[flushTimer]); n != 0 || len(r.sw.take()) != 0 {
		t.Errorf("stale timer flushed again (%v)", n)
	}
}

func TestReorderNeverCrossesBarrier(t *testing.T) {
	r := newReorderRig(t, ReorderConfig{Window: time.Second})
	r.add(t, 1, 10, 1)
	r.add(t, 2, 20, 2)
	_ = r.s.Send(&openflow.BarrierRequest{Header: openflow.Header{Xid: 50}})
	r.add(t, 3, 30, 3) // higher than both, but after the barrier
	r.add(t, 4, 5, 4)
	_ = r.s.Send(&openflow.BarrierRequest{Header: openflow.Header{Xid: 51}})
	if got, want := wire(t, r.sw.take()), []uint32{2, 1, 50, 3, 4, 51}; !equalU32(got, want) {
		t.Fatalf("wire order %v, want %v", got, want)
	}
}

func TestReorderTimerFlushesAfterWindow(t *testing.T) {
	r := newReorderRig(t, ReorderConfig{Window: time.Millisecond})
	r.add(t, 1, 1, 1)
	r.clk.RunFor(500 * time.Microsecond)
	r.add(t, 2, 2, 2) // same burst: the window counts from the first ADD
	r.clk.RunFor(499 * time.Microsecond)
	if n := len(r.sw.take()); n != 0 {
		t.Fatalf("%d messages before the window ended", n)
	}
	r.clk.RunFor(time.Microsecond)
	if got, want := wire(t, r.sw.take()), []uint32{2, 1}; !equalU32(got, want) {
		t.Fatalf("after the window: %v, want %v", got, want)
	}
	if n := testutil.ToFloat64(r.m.reorder.flushes[flushTimer]); n != 1 {
		t.Errorf("timer flushes %v, want 1", n)
	}
	// A new burst arms a new window.
	r.add(t, 3, 1, 3)
	r.clk.RunFor(time.Millisecond)
	if got := wire(t, r.sw.take()); !equalU32(got, []uint32{3}) {
		t.Fatalf("second burst: %v", got)
	}
}

func TestReorderBoundFlushesEarlyAndCounts(t *testing.T) {
	r := newReorderRig(t, ReorderConfig{Window: time.Hour, Limit: 3})
	for i := uint32(1); i <= 7; i++ {
		r.add(t, i, uint16(i), uint16(i))
	}
	// Two full bursts went out at once, sorted within each; one ADD waits.
	if got, want := wire(t, r.sw.take()), []uint32{3, 2, 1, 6, 5, 4}; !equalU32(got, want) {
		t.Fatalf("wire %v, want %v", got, want)
	}
	if n := testutil.ToFloat64(r.m.reorder.flushes[flushFull]); n != 2 {
		t.Errorf("overflow flushes %v, want 2", n)
	}
	if n := len(r.s.ro.held); n != 1 {
		t.Errorf("%d held, want 1 (bounded by Limit)", n)
	}
}

func TestReorderOverlappingDeleteFlushesFirst(t *testing.T) {
	r := newReorderRig(t, ReorderConfig{Window: time.Hour})
	r.add(t, 1, 10, 80)
	r.add(t, 2, 20, 443)
	// A DELETE of another port overlaps neither: it may overtake them.
	if err := r.s.Send(tcpRule(3, openflow.FlowModDelete, 0, 22)); err != nil {
		t.Fatal(err)
	}
	if got := wire(t, r.sw.take()); !equalU32(got, []uint32{3}) {
		t.Fatalf("non-overlapping delete: wire %v, want [3]", got)
	}
	// A MODIFY of port 80 overlaps ADD 1: the burst goes first, sorted.
	if err := r.s.Send(tcpRule(4, openflow.FlowModModify, 10, 80)); err != nil {
		t.Fatal(err)
	}
	if got, want := wire(t, r.sw.take()), []uint32{2, 1, 4}; !equalU32(got, want) {
		t.Fatalf("overlapping modify: wire %v, want %v", got, want)
	}
	// A delete-all overlaps everything.
	r.add(t, 5, 1, 1)
	del := &openflow.FlowMod{Header: openflow.Header{Xid: 6}, Match: openflow.MatchAll(), Command: openflow.FlowModDelete,
		BufferID: openflow.NoBuffer, OutPort: openflow.PortNone}
	_ = r.s.Send(del)
	if got, want := wire(t, r.sw.take()), []uint32{5, 6}; !equalU32(got, want) {
		t.Fatalf("delete-all: wire %v, want %v", got, want)
	}
	if n := testutil.ToFloat64(r.m.reorder.flushes[flushConflict]); n != 2 {
		t.Errorf("conflict flushes %v, want 2", n)
	}
}

func TestReorderStableForEqualPriorityAndExactFirst(t *testing.T) {
	r := newReorderRig(t, ReorderConfig{Window: time.Hour})
	r.add(t, 1, 7, 1)
	r.add(t, 2, 7, 1) // same match and priority: replaces 1, must stay after it
	exact := &openflow.FlowMod{Header: openflow.Header{Xid: 3}, Match: openflow.Match{DlType: ethIPv4}, Command: openflow.FlowModAdd,
		Priority: 1, BufferID: openflow.NoBuffer, OutPort: openflow.PortNone}
	_ = r.s.Send(exact) // exact match: above every wildcard rule
	r.add(t, 4, 9, 4)
	_ = r.s.Send(&openflow.BarrierRequest{Header: openflow.Header{Xid: 9}})
	if got, want := wire(t, r.sw.take()), []uint32{3, 4, 1, 2, 9}; !equalU32(got, want) {
		t.Fatalf("wire %v, want %v", got, want)
	}
}

func TestReorderPacketOutAndOtherMessages(t *testing.T) {
	r := newReorderRig(t, ReorderConfig{Window: time.Hour})
	r.add(t, 1, 1, 1)
	r.add(t, 2, 2, 2)
	// A PACKET_OUT to a port does not consult the table: it goes at once.
	_ = r.s.Send(&openflow.PacketOut{Header: openflow.Header{Xid: 3}, BufferID: openflow.NoBuffer, InPort: openflow.PortNone,
		Actions: []openflow.Action{&openflow.ActionOutput{Port: 1}}, Data: make([]byte, 60)})
	if got := wire(t, r.sw.take()); !equalU32(got, []uint32{3}) {
		t.Fatalf("packet-out to a port: %v", got)
	}
	// One to OFPP_TABLE must see the rules sent before it.
	_ = r.s.Send(&openflow.PacketOut{Header: openflow.Header{Xid: 4}, BufferID: openflow.NoBuffer, InPort: openflow.PortNone,
		Actions: []openflow.Action{&openflow.ActionOutput{Port: openflow.PortTable}}, Data: make([]byte, 60)})
	if got, want := wire(t, r.sw.take()), []uint32{2, 1, 4}; !equalU32(got, want) {
		t.Fatalf("packet-out to TABLE: %v, want %v", got, want)
	}
	// A stats request observes the table too.
	r.add(t, 5, 1, 5)
	_ = r.s.Send(&openflow.StatsRequest{Header: openflow.Header{Xid: 6}, Body: openflow.DescStatsRequest{}})
	if got, want := wire(t, r.sw.take()), []uint32{5, 6}; !equalU32(got, want) {
		t.Fatalf("stats request: %v, want %v", got, want)
	}
}

func TestReorderDisconnectDropsHeldAndStopsTimer(t *testing.T) {
	r := newReorderRig(t, ReorderConfig{Window: time.Millisecond})
	r.add(t, 1, 1, 1)
	r.add(t, 2, 2, 2)
	r.s.Disconnect()
	r.clk.RunFor(time.Second)
	if n := len(r.sw.take()); n != 0 {
		t.Fatalf("%d messages after disconnect", n)
	}
	if d := testutil.ToFloat64(r.m.reorder.dropped); d != 2 {
		t.Errorf("dropped %v, want 2", d)
	}
	if r.clk.Pending() != 0 {
		t.Errorf("%d timers left pending", r.clk.Pending())
	}
}

func TestReorderOffIsPassThrough(t *testing.T) {
	r := newReorderRig(t, ReorderConfig{})
	if r.s.ro != nil {
		t.Fatal("zero ReorderConfig built a reorderer")
	}
	r.add(t, 1, 1, 1)
	r.add(t, 2, 2, 2)
	if got := wire(t, r.sw.take()); !equalU32(got, []uint32{1, 2}) {
		t.Fatalf("off: %v", got)
	}
}

func TestMatchesOverlap(t *testing.T) {
	ip := func(src uint32, plen int) openflow.Match {
		m := openflow.MatchAll()
		m.Wildcards &^= openflow.WildcardDlType
		m.DlType = ethIPv4
		m.NwSrc = src
		m.SetNwSrcPrefixLen(plen)
		return m
	}
	nonIP := func(src uint32) openflow.Match {
		m := ip(src, 32)
		m.DlType = 0x88cc // LLDP: a switch ignores nw_src
		return m
	}
	all := openflow.MatchAll()
	cases := []struct {
		name string
		a, b openflow.Match
		want bool
	}{
		{"match-all", all, ip(1, 32), true},
		{"same /24", ip(0x0a000001, 32), ip(0x0a000000, 24), true},
		{"other /24", ip(0x0a000101, 32), ip(0x0a000000, 24), false},
		{"non-IP nw_src ignored", nonIP(1), nonIP(2), true},
		{"dl_type differs", ip(1, 32), nonIP(1), false},
	}
	for _, c := range cases {
		if got := matchesOverlap(&c.a, &c.b); got != c.want {
			t.Errorf("%s: overlap %v, want %v", c.name, got, c.want)
		}
		if got := matchesOverlap(&c.b, &c.a); got != c.want {
			t.Errorf("%s (swapped): overlap %v, want %v", c.name, got, c.want)
		}
	}
}

// TestReorderHoldAllocatesNothing: holding and sending an ADD allocates
// nothing once the arena has grown; a burst costs only its window's timer
// (the clock's AfterFunc), the same for 1 ADD as for 32.
func TestReorderHoldAllocatesNothing(t *testing.T) {
	clk := clock.NewSim(time.Unix(0, 0))
	core := NewCore(Config{App: &recordingApp{}, Clock: clk, Reorder: ReorderConfig{Window: time.Hour, Limit: 64}})
	s := core.Connect(&encodingSwitch{})
	fm := tcpRule(1, openflow.FlowModAdd, 1, 1)
	barrier := &openflow.BarrierRequest{}
	burst := func(n int) func() {
		return func() {
			for i := range n {
				fm.Priority = uint16(i)
				_ = s.Send(fm)
			}
			_ = s.Send(barrier)
		}
	}
	burst(32)() // grow the arena and the held slice
	one, many := testing.AllocsPerRun(20, burst(1)), testing.AllocsPerRun(20, burst(32))
	if many != one || one > 2 {
		t.Errorf("a burst of 1 allocates %v times, of 32 %v times; want equal (the timer only) and at most 2", one, many)
	}
}

// signalSwitch is a fakeSwitch that reports each message on a channel.
type signalSwitch struct {
	*fakeSwitch
	got chan struct{}
}

func (s *signalSwitch) Send(m openflow.Message) error {
	err := s.fakeSwitch.Send(m)
	s.got <- struct{}{}
	return err
}

// TestReorderWallClockTimer runs the window on the wall clock, where the
// timer fires on its own goroutine while the app keeps sending (the race
// detector checks the locking); it waits for the messages, not for time.
func TestReorderWallClockTimer(t *testing.T) {
	core := NewCore(Config{App: &recordingApp{}, Reorder: ReorderConfig{Window: 200 * time.Microsecond}})
	sw := &signalSwitch{fakeSwitch: newFakeSwitch(1), got: make(chan struct{}, 64)}
	s := core.Connect(sw)
	const n = 40
	for i := uint32(1); i <= n; i++ {
		if err := s.Send(tcpRule(i, openflow.FlowModAdd, uint16(i), uint16(i))); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.After(30 * time.Second) // a hang guard, not a synchronisation
	for range n {
		select {
		case <-sw.got:
		case <-deadline:
			t.Fatalf("only %d of %d ADDs arrived", len(sw.take()), n)
		}
	}
	got := sw.take()
	seen := map[uint32]bool{}
	for _, m := range got {
		seen[m.GetXid()] = true
	}
	if len(got) != n || len(seen) != n {
		t.Fatalf("%d messages, %d distinct, want %d each", len(got), len(seen), n)
	}
	s.Disconnect()
}

// BenchmarkReorderBurst is the cost per FLOW_MOD of a 32-ADD burst and its
// barrier through a session with the reorderer (held, sorted, sent as
// bytes) and, side by side, without it (sent as they come).
func BenchmarkReorderBurst(b *testing.B) {
	for _, c := range []struct {
		name string
		cfg  ReorderConfig
	}{{"off", ReorderConfig{}}, {"reorder", ReorderConfig{Window: time.Hour, Limit: 64}}} {
		b.Run(c.name, func(b *testing.B) {
			clk := clock.NewSim(time.Unix(0, 0))
			s := NewCore(Config{App: &recordingApp{}, Clock: clk, Reorder: c.cfg}).Connect(&encodingSwitch{})
			fm := tcpRule(1, openflow.FlowModAdd, 1, 1)
			barrier := &openflow.BarrierRequest{}
			b.ReportAllocs()
			for b.Loop() {
				for i := range 32 {
					fm.Priority = uint16(i) // ascending: the burst is reversed
					_ = s.Send(fm)
				}
				_ = s.Send(barrier)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*32), "ns/flowmod")
		})
	}
}
