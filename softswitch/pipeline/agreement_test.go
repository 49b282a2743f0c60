package pipeline

import (
	"encoding/binary"
	"sync"
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/internal/clock"
	"github.com/pseudocong/pseudocong/profile"
	"github.com/pseudocong/pseudocong/softswitch"
	"github.com/pseudocong/pseudocong/softswitch/dataplane"
)

// One pipeline, two clocks: the same small scenario (swap-ins with their
// upcalls, then hits) run on the wall clock and then on the virtual clock,
// replaying the wall run's actual send times, gives each packet at least
// its modelled delay: the wall clock's timers fire late, never early, and a
// late timer must not let a later packet through sooner. That holds on any
// machine under any load; the bound above is seconds, for a stalled
// machine only. How closely the two agree is
// TestSerialSimAndWallClockAgree's measurement.
func TestWallClockNeverBeatsSim(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 0.5 s of wall time")
	}
	wall, sent := agreementScenario(t, true, nil)
	sim, _ := agreementScenario(t, false, sent)
	for i := range sim {
		if d := wall[i] - sim[i]; d < 0 || d > 5*time.Second {
			t.Errorf("packet %d (sent at +%v): wall %v vs sim %v", i, sent[i], wall[i], sim[i])
		}
	}
}

// The same comparison as a measurement: on a machine with nothing else to
// do the wall clock agrees with the model within timer noise. 15 ms holds
// only without competition: TestSerial* tests run alone in .ci/run's serial
// phase.
func TestSerialSimAndWallClockAgree(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 0.5 s of wall time")
	}
	wall, sent := agreementScenario(t, true, nil)
	sim, _ := agreementScenario(t, false, sent)
	const slack = 15 * time.Millisecond // timer and scheduling noise on an idle 2-core host
	for i := range sim {
		d := wall[i] - sim[i]
		t.Logf("packet %d sent at +%v: sim %v, wall %v", i, sent[i], sim[i], wall[i])
		if d < 0 || d > slack {
			t.Errorf("packet %d: wall %v vs sim %v", i, wall[i], sim[i])
		}
	}
}

// agreementScenario returns each packet's delay from Receive to delivery
// and when each was sent, since the first. On the wall clock packets go
// out on a fixed plan (they are late by however long the sleeps overrun);
// on the virtual clock at the times `at` if given, else on the plan.
func agreementScenario(t *testing.T, live bool, at []time.Duration) (delays, sentAt []time.Duration) {
	const base, flows, gap = 900, 5, 50 * time.Millisecond
	prof := loadProfile(t, "pica8-p3297", func(p *profile.Profile) {
		p.TCAM.Capacity = 1000
		p.TCAM.Timing.SlowMoveFreeSlots = 0
	})
	var clk clock.Clock
	var simClk *clock.Sim
	if live {
		clk = clock.Wall{}
	} else {
		simClk = clock.NewSim(t0)
		clk = simClk
	}
	var (
		mu    sync.Mutex
		sent  = map[uint32]time.Time{}
		delay = make([]time.Duration, 2*flows)
		n     int
		done  = make(chan struct{})
	)
	sw := softswitch.New(clk, softswitch.Config{TableCapacity: TableCapacity(prof, 16)})
	out := softswitch.NewMemPort(2, "p2", softswitch.MemPortMAC(1, 2), func(frame []byte) {
		seq := binary.BigEndian.Uint32(frame[len(frame)-4:])
		mu.Lock()
		defer mu.Unlock()
		delay[seq] = clk.Now().Sub(sent[seq])
		if n++; n == len(delay) {
			close(done)
		}
	})
	for _, port := range []softswitch.Port{softswitch.NewMemPort(1, "p1", softswitch.MemPortMAC(1, 1), nil), out} {
		if err := sw.AddPort(port); err != nil {
			t.Fatal(err)
		}
	}
	p, err := Attach(sw, Options{Profile: prof, BackingCapacity: 16, SwapInUpcall: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	for i := range base {
		if _, err := p.Preload(ruleFor(i, uint16(10+i)), dataplane.InTCAM); err != nil {
			t.Fatal(err)
		}
	}
	for i := range flows {
		if _, err := p.Preload(ruleFor(5000+i, uint16(2000+i)), dataplane.InBacking); err != nil {
			t.Fatal(err)
		}
	}
	// Packet 2i swaps rule i in; packet 2i+1, half a gap later, hits it.
	plan := make([]time.Duration, 2*flows)
	for i := range flows {
		plan[2*i], plan[2*i+1] = time.Duration(i)*gap, time.Duration(i)*gap+gap/2
	}
	if at == nil {
		at = plan
	}
	send := func(seq uint32, host int) {
		mu.Lock()
		sent[seq] = clk.Now()
		mu.Unlock()
		sw.Receive(1, frame(t, host, seq))
	}
	start := clk.Now()
	if !live {
		for seq := range 2 * flows {
			simClk.At(t0.Add(at[seq]), func() { send(uint32(seq), 5000+seq/2) })
		}
		simClk.Run()
	} else {
		for seq := range 2 * flows {
			time.Sleep(time.Until(start.Add(plan[seq])))
			send(uint32(seq), 5000+seq/2)
		}
		select {
		case <-done:
		case <-time.After(30 * time.Second): // ~0.3 s of modelled work; 30 s only if the machine stalls
			t.Fatal("wall-clock run did not deliver every packet")
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if n != len(delay) {
		t.Fatalf("%d of %d packets delivered", n, len(delay))
	}
	sentAt = make([]time.Duration, len(delay))
	for seq := range sentAt {
		sentAt[seq] = sent[uint32(seq)].Sub(start)
	}
	return append([]time.Duration(nil), delay...), sentAt
}
