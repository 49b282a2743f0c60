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
// upcalls, then hits) gives the same per-packet delays on the virtual
// clock and on the wall clock, within timer noise.
func TestSimAndWallClockAgree(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 0.5 s of wall time")
	}
	sim := agreementScenario(t, false)
	wall := agreementScenario(t, true)
	const slack = 15 * time.Millisecond // timer and scheduling noise on a loaded 2-core host
	for i := range sim {
		d := wall[i] - sim[i]
		t.Logf("packet %d: sim %v, wall %v", i, sim[i], wall[i])
		if d < -time.Millisecond || d > slack {
			t.Errorf("packet %d: wall %v vs sim %v", i, wall[i], sim[i])
		}
	}
}

// agreementScenario returns each packet's delay from Receive to delivery.
func agreementScenario(t *testing.T, live bool) []time.Duration {
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
	send := func(seq uint32, host int) {
		mu.Lock()
		sent[seq] = clk.Now()
		mu.Unlock()
		sw.Receive(1, frame(t, host, seq))
	}
	if !live {
		for i := range flows {
			simClk.At(t0.Add(time.Duration(i)*gap), func() { send(uint32(2*i), 5000+i) })
			simClk.At(t0.Add(time.Duration(i)*gap+gap/2), func() { send(uint32(2*i+1), 5000+i) })
		}
		simClk.Run()
	} else {
		start := time.Now()
		for i := range flows {
			time.Sleep(time.Until(start.Add(time.Duration(i) * gap)))
			send(uint32(2*i), 5000+i)
			time.Sleep(time.Until(start.Add(time.Duration(i)*gap + gap/2)))
			send(uint32(2*i+1), 5000+i)
		}
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatal("wall-clock run did not deliver every packet")
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if n != len(delay) {
		t.Fatalf("%d of %d packets delivered", n, len(delay))
	}
	return append([]time.Duration(nil), delay...)
}
