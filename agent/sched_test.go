package agent

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/internal/clock"
)

func qm(port uint16, seq uint64) QueuedMiss {
	return QueuedMiss{P: PacketIn{InPort: port, Cookie: int(seq)}, Seq: seq}
}

func drainSeqs(s Scheduler) []uint64 {
	var out []uint64
	for s.Len() > 0 {
		n := s.Next().Seq
		m := s.Pop()
		if m.Seq != n {
			panic("Next and Pop disagree")
		}
		out = append(out, m.Seq)
	}
	return out
}

// Round-robin order across ingress ports, each port in arrival order, a
// port's turn passing when its queue empties (pinsched get_tx_packet).
func TestPerPortFairRoundRobin(t *testing.T) {
	s := SchedulerFor(Config{Scheduling: PerPortFair, MissQueueLimit: 100})
	for i, port := range []uint16{1, 1, 1, 2, 2, 3} {
		if _, drop := s.Push(qm(port, uint64(i+1))); drop {
			t.Fatal("drop below the limit")
		}
	}
	// ports 1,2,3,1,2,1 → seqs 1,4,6,2,5,3
	if got, want := drainSeqs(s), []uint64{1, 4, 6, 2, 5, 3}; !slices.Equal(got, want) {
		t.Errorf("pop order %v, want %v", got, want)
	}
	// A port that arrives while others are served joins the rotation.
	s.Push(qm(1, 10))
	s.Push(qm(1, 11))
	if s.Pop().Seq != 10 {
		t.Fatal("first pop")
	}
	s.Push(qm(7, 12))
	if got, want := drainSeqs(s), []uint64{11, 12}; !slices.Equal(got, want) {
		t.Errorf("pop order %v, want %v", got, want)
	}
}

// A full per-port-fair queue drops the oldest miss of the longest port
// queue (pinsched drop_packet) and takes the newcomer.
func TestPerPortFairDropsOldestOfLongest(t *testing.T) {
	s := SchedulerFor(Config{Scheduling: PerPortFair, MissQueueLimit: 5})
	for i, port := range []uint16{2, 1, 1, 1, 3} {
		s.Push(qm(port, uint64(i+1)))
	}
	dropped, did := s.Push(qm(3, 6))
	if !did || dropped.Seq != 2 { // port 1 is longest; its oldest is seq 2
		t.Fatalf("dropped %v (%v), want seq 2", dropped.Seq, did)
	}
	if s.Len() != 5 {
		t.Fatalf("len %d after a drop, want the limit 5", s.Len())
	}
	// Ties: ports 1 and 3 both hold 2 now; the first in round-robin order
	// from the next to serve (port 2's turn, then 1) loses its oldest.
	dropped, _ = s.Push(qm(2, 7))
	if dropped.Seq != 3 {
		t.Fatalf("tie dropped seq %d, want 3 (port 1, first after port 2 in round-robin order)", dropped.Seq)
	}
}

// FIFO and install_first hold one queue in arrival order and drop the
// newcomer; they differ only in whether jobs go first.
func TestFIFOAndInstallFirstQueues(t *testing.T) {
	for _, p := range []Policy{FIFO, InstallFirst, RateLimited} {
		s := SchedulerFor(Config{Scheduling: p, MissQueueLimit: 3, RateLimit: 100})
		for i, port := range []uint16{3, 1, 2} {
			s.Push(qm(port, uint64(i+1)))
		}
		if d, did := s.Push(qm(1, 4)); !did || d.Seq != 4 {
			t.Errorf("%s: full queue dropped %d (%v), want the newcomer 4", p, d.Seq, did)
		}
		if got := drainSeqs(s); !slices.Equal(got, []uint64{1, 2, 3}) {
			t.Errorf("%s: order %v", p, got)
		}
		if s.JobsFirst() != (p != FIFO) {
			t.Errorf("%s: JobsFirst %v", p, s.JobsFirst())
		}
	}
}

// synFrame builds an Ethernet/IPv4/TCP frame with the given TCP flags.
func synFrame(flags byte, vlan bool) []byte {
	var f []byte
	f = append(f, make([]byte, 12)...)
	if vlan {
		f = append(f, 0x81, 0x00, 0, 10)
	}
	f = append(f, 0x08, 0x00)
	ip := make([]byte, 20)
	ip[0], ip[9] = 0x45, 6
	f = append(f, ip...)
	tcp := make([]byte, 20)
	tcp[12], tcp[13] = 0x50, flags
	return append(f, tcp...)
}

func TestIsTCPSYN(t *testing.T) {
	for _, tc := range []struct {
		name  string
		frame []byte
		want  bool
	}{
		{"syn", synFrame(0x02, false), true},
		{"syn vlan", synFrame(0x02, true), true},
		{"syn-ack", synFrame(0x12, false), false},
		{"ack", synFrame(0x10, false), false},
		{"truncated", synFrame(0x02, false)[:40], false},
		{"empty", nil, false},
	} {
		if got := IsTCPSYN(tc.frame); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	udp := synFrame(0x02, false)
	udp[14+9] = 17
	if IsTCPSYN(udp) {
		t.Error("udp counted as syn")
	}
}

// SYNs are built before every other miss, each class in arrival order; a
// SYN arriving at a full queue pushes out the oldest other miss, anything
// else arriving at a full queue is dropped itself.
func TestSYNFirst(t *testing.T) {
	s := SchedulerFor(Config{Scheduling: SYNFirst, MissQueueLimit: 4})
	push := func(seq uint64, syn bool) (QueuedMiss, bool) {
		m := qm(1, seq)
		if syn {
			m.P.Data = synFrame(0x02, false)
		} else {
			m.P.Data = synFrame(0x10, false)
		}
		return s.Push(m)
	}
	push(1, false)
	push(2, true)
	push(3, false)
	push(4, true)
	if d, did := push(5, false); !did || d.Seq != 5 {
		t.Fatalf("non-SYN at a full queue: dropped %d (%v), want itself", d.Seq, did)
	}
	if d, did := push(6, true); !did || d.Seq != 1 {
		t.Fatalf("SYN at a full queue: dropped %d (%v), want the oldest other miss 1", d.Seq, did)
	}
	if got, want := drainSeqs(s), []uint64{2, 4, 6, 3}; !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
}

// The agent with syn_first builds a SYN queued behind other misses first.
func TestAgentSYNFirstBuildsSYNsFirst(t *testing.T) {
	cfg := DefaultConfig()
	cfg.PacketInCost = time.Millisecond
	cfg.Scheduling = SYNFirst
	sim := clock.NewSim(t0)
	a, rec := newTestAgent(t, sim, cfg, nil)
	for i := range 4 {
		p := PacketIn{Cookie: i, Data: synFrame(0x10, false)}
		if i == 3 {
			p.Data = synFrame(0x02, false)
		}
		a.Miss(p)
	}
	sim.Run()
	var order []int
	for _, b := range rec.batches {
		order = append(order, b.pins[0].Cookie.(int))
	}
	// miss 0 is on the CPU when the SYN arrives; the SYN overtakes 1 and 2.
	if want := []int{0, 3, 1, 2}; !slices.Equal(order, want) {
		t.Errorf("sent %v, want %v", order, want)
	}
}

// The agent with per_port_fair reports an older miss it dropped to the
// DropHandler and accepts the newcomer.
func TestAgentPerPortFairReportsDrops(t *testing.T) {
	cfg := DefaultConfig()
	cfg.PacketInCost = time.Millisecond
	cfg.MissQueueLimit = 2
	cfg.Scheduling = PerPortFair
	sim := clock.NewSim(t0)
	a, rec := newTestAgent(t, sim, cfg, nil)
	a.Miss(PacketIn{InPort: 1, Cookie: 0}) // on the CPU
	a.Miss(PacketIn{InPort: 1, Cookie: 1})
	a.Miss(PacketIn{InPort: 1, Cookie: 2})
	if !a.Miss(PacketIn{InPort: 2, Cookie: 3}) {
		t.Fatal("newcomer refused")
	}
	sim.Run()
	if d := rec.drops[DropMissQueueFull]; len(d) != 1 || d[0].Cookie.(int) != 1 {
		t.Fatalf("drops %v, want miss 1 (oldest of the longest queue)", d)
	}
	if got := a.Stats().PacketInDrops[DropMissQueueFull]; got != 1 {
		t.Errorf("counted %d drops", got)
	}
	var order []int
	for _, b := range rec.batches {
		order = append(order, b.pins[0].Cookie.(int))
	}
	if want := []int{0, 2, 3}; !slices.Equal(order, want) {
		t.Errorf("sent %v, want %v", order, want)
	}
}

// rate_limited: the token bucket passes burst Packet-Ins at once and then
// one per 1/rate; waiting Packet-Ins leave round-robin across ports; at
// burst waiting, the oldest of the longest port queue is dropped.
func TestRateLimitedPinsched(t *testing.T) {
	cfg := DefaultConfig() // p = 0, B = 1
	cfg.Scheduling = RateLimited
	cfg.RateLimit, cfg.BurstLimit = 100, 25
	sim := clock.NewSim(t0)
	a, rec := newTestAgent(t, sim, cfg, nil)
	// 25 pass on the burst; then 30 more: 20 from port 1, 10 from port 2,
	// interleaved 2:1. 25 can wait; 5 are dropped, each the oldest of the
	// longest queue (port 1 whenever it is longer).
	for i := range 25 {
		a.Miss(PacketIn{InPort: 9, Cookie: i})
	}
	next := 25
	var port1 []int // port 1's misses in arrival order
	for range 10 {
		for _, port := range []uint16{1, 1, 2} {
			a.Miss(PacketIn{InPort: port, Cookie: next})
			if port == 1 {
				port1 = append(port1, next)
			}
			next++
		}
	}
	sim.Run()
	if len(rec.batches) != 50 {
		t.Fatalf("sent %d, want 50", len(rec.batches))
	}
	for i, b := range rec.batches {
		want := time.Duration(0)
		if i >= 25 {
			want = time.Duration(i-24) * 10 * time.Millisecond
		}
		if b.at != want {
			t.Fatalf("send %d at %v, want %v (burst 25, then one per 10 ms)", i, b.at, want)
		}
	}
	drops := rec.drops[DropRateLimited]
	if len(drops) != 5 || a.Stats().PacketInDrops[DropRateLimited] != 5 {
		t.Fatalf("%d drops, want 5", len(drops))
	}
	for i, d := range drops {
		if d.Cookie.(int) != port1[i] {
			t.Errorf("drop %d is miss %v, want port 1's oldest %d", i, d.Cookie, port1[i])
		}
	}
	// Round-robin: after the burst, ports 1 and 2 alternate while both wait.
	var ports []uint16
	for _, b := range rec.batches[25:35] {
		ports = append(ports, b.pins[0].InPort)
	}
	if want := []uint16{1, 2, 1, 2, 1, 2, 1, 2, 1, 2}; !slices.Equal(ports, want) {
		t.Errorf("ports after the burst %v, want alternation %v", ports, want)
	}
	if s := a.Stats(); s.MaxRateLimitQueue != 25 {
		t.Errorf("rate-limit queue high-water %d, want the burst 25", s.MaxRateLimitQueue)
	}
}

// OVS schema bounds for rate_limited and the rate/4 default burst.
func TestRateLimitedBounds(t *testing.T) {
	base := DefaultConfig()
	base.Scheduling = RateLimited
	for _, tc := range []struct {
		rate  float64
		burst int
		err   string
	}{
		{0, 0, "at least 100"},
		{99, 0, "at least 100"},
		{100, 24, "at least 25"},
		{100, 25, ""},
		{400, 0, ""},
	} {
		c := base
		c.RateLimit, c.BurstLimit = tc.rate, tc.burst
		err := c.Validate()
		if (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("rate %g burst %d: %v, want %q", tc.rate, tc.burst, err, tc.err)
		}
	}
	c := base
	c.RateLimit = 400
	if got := c.normalized().BurstLimit; got != 100 {
		t.Errorf("default burst %d, want rate/4 = 100", got)
	}
	bad := DefaultConfig()
	bad.Scheduling = "lifo"
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "per_port_fair") {
		t.Errorf("unknown policy: %v", err)
	}
}

// Every policy keeps the Scheduler contract: never more than the limit
// queued, every pushed miss either popped once or dropped once.
func TestSchedulerContract(t *testing.T) {
	for _, p := range Policies() {
		s := SchedulerFor(Config{Scheduling: p, MissQueueLimit: 7, RateLimit: 100})
		if s.Policy() != p {
			t.Errorf("SchedulerFor(%s).Policy() = %s", p, s.Policy())
		}
		seen := map[uint64]int{}
		seq := uint64(0)
		for round := range 200 {
			if round%3 != 2 {
				seq++
				m := qm(uint16(seq%3), seq)
				if seq%4 == 0 {
					m.P.Data = synFrame(0x02, false)
				}
				if d, did := s.Push(m); did {
					seen[d.Seq]++
				}
			} else if s.Len() > 0 {
				seen[s.Pop().Seq]++
			}
			if s.Len() > 7 {
				t.Fatalf("%s: %d queued over the limit 7", p, s.Len())
			}
		}
		s.Drain(func(m QueuedMiss) { seen[m.Seq]++ })
		for i := uint64(1); i <= seq; i++ {
			if seen[i] != 1 {
				t.Fatalf("%s: miss %d left %d times", p, i, seen[i])
			}
		}
	}
}
