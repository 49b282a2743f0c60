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

// On the wall clock the switch really holds packets: a swap-in into a
// TCAM of 2 000 shifted entries delays the packet by its modelled CPU time
// (≈ 33 ms), and a stream of hits leaves in order after the hit delay.
func TestWallClockHoldsPacketsForTheModelledTime(t *testing.T) {
	const slots = 2000
	prof := loadProfile(t, "pica8-p3297", func(p *profile.Profile) {
		p.TCAM.Capacity = slots
		p.TCAM.Timing.SlowMoveFreeSlots = 0 // the modelled time below is c_write + k·c_move
	})
	sw := softswitch.New(clock.Wall{}, softswitch.Config{TableCapacity: TableCapacity(prof, 16)})
	var (
		mu  sync.Mutex
		got []struct {
			seq uint32
			at  time.Time
		}
		done = make(chan struct{}, 1)
	)
	const stream = 500
	out := softswitch.NewMemPort(2, "p2", softswitch.MemPortMAC(1, 2), func(frame []byte) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, struct {
			seq uint32
			at  time.Time
		}{binary.BigEndian.Uint32(frame[len(frame)-4:]), time.Now()})
		if len(got) == 1 || len(got) == 1+stream {
			done <- struct{}{}
		}
	})
	for _, port := range []softswitch.Port{softswitch.NewMemPort(1, "p1", softswitch.MemPortMAC(1, 1), nil), out} {
		if err := sw.AddPort(port); err != nil {
			t.Fatal(err)
		}
	}
	p, err := Attach(sw, Options{Profile: prof, BackingCapacity: 16})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	for i := range slots {
		if _, err := p.Preload(ruleFor(i, uint16(10+i)), dataplane.InTCAM); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.Preload(ruleFor(5000, 9000), dataplane.InBacking); err != nil {
		t.Fatal(err)
	}
	tm := prof.TCAM.Timing
	modelled := tm.DriverPerInvalidate + tm.DriverPerWrite + (slots-1)*tm.DriverPerMove + prof.Forwarding.HitDelay

	sent := time.Now()
	sw.Receive(1, frame(t, 5000, 0))
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("swapped-in packet never delivered")
	}
	mu.Lock()
	held := got[0].at.Sub(sent)
	mu.Unlock()
	t.Logf("swap-in held the packet %v (modelled %v)", held, modelled)
	if held < modelled {
		t.Errorf("packet left after %v, before the modelled %v", held, modelled)
	}
	if held > modelled+time.Second {
		t.Errorf("packet held %v, far beyond the modelled %v", held, modelled)
	}

	// A stream of hits on rules in the TCAM leaves in order.
	for seq := 1; seq <= stream; seq++ {
		sw.Receive(1, frame(t, seq%slots, uint32(seq)))
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("stream not delivered")
	}
	mu.Lock()
	defer mu.Unlock()
	for i, d := range got {
		if d.seq != uint32(i) {
			t.Fatalf("delivery %d carries seq %d: reordered", i, d.seq)
		}
	}
}
