package pipeline

import (
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/openflow"
	"github.com/pseudocong/pseudocong/profile"
)

// The upcall latency (profile upcall) delays a miss on its way to the
// CPU, off the CPU: the first miss (idle) takes idle_latency, one right
// behind it waits for it (misses keep their order), and one after a long
// gap is idle again; the CPU's Packet-In cost comes on top.
func TestUpcallLatencyDelaysMissesInOrder(t *testing.T) {
	u := profile.Upcall{Latency: 100 * time.Microsecond, IdleLatency: 500 * time.Microsecond, IdleTimeConstant: 10 * time.Millisecond}
	prof := loadProfile(t, "pica8-p3297", func(p *profile.Profile) {
		p.Agent.BatchSize, p.Agent.FlushPeriod = 1, 0
		p.Upcall = u
	})
	r := newRig(t, prof, Options{})
	r.at(0, func() { r.sw.Receive(1, frame(t, 0, 1)) })
	r.at(10*time.Microsecond, func() { r.sw.Receive(1, frame(t, 1, 2)) })
	r.at(time.Second, func() { r.sw.Receive(1, frame(t, 2, 3)) })
	r.at(time.Second+20*time.Millisecond, func() { r.sw.Receive(1, frame(t, 3, 4)) })
	r.run()
	pc := prof.Agent.PacketInCost
	want := []time.Duration{
		u.IdleLatency + pc,
		u.IdleLatency + 2*pc, // handed on behind the first, then built after it
		time.Second + u.Delay(time.Second-10*time.Microsecond) + pc,
		time.Second + 20*time.Millisecond + u.Delay(20*time.Millisecond) + pc,
	}
	var got []time.Duration
	for _, m := range r.ctl.take() {
		if _, ok := m.m.(*openflow.PacketIn); ok {
			got = append(got, m.at.Sub(t0))
		}
	}
	if len(got) != len(want) {
		t.Fatalf("got %d PACKET_INs at %v, want %d", len(got), got, len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("PACKET_IN %d at +%v, want +%v", i, got[i], want[i])
		}
	}
	if d := u.Delay(20 * time.Millisecond); d <= u.Latency || d >= u.IdleLatency {
		t.Errorf("a 20 ms gap gives %v, want between the busy and idle latency", d)
	}
}

// Without the upcall keys a miss reaches the CPU at once (every hardware
// profile, and the paper-000 timeline).
func TestNoUpcallLatencyByDefault(t *testing.T) {
	prof := loadProfile(t, "pica8-p3297", func(p *profile.Profile) { p.Agent.BatchSize, p.Agent.FlushPeriod = 1, 0 })
	r := newRig(t, prof, Options{})
	r.at(0, func() { r.sw.Receive(1, frame(t, 0, 1)) })
	r.run()
	n := 0
	for _, m := range r.ctl.take() {
		if _, ok := m.m.(*openflow.PacketIn); ok {
			n++
			if m.at.Sub(t0) != prof.Agent.PacketInCost {
				t.Errorf("PACKET_IN at +%v, want +%v", m.at.Sub(t0), prof.Agent.PacketInCost)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d PACKET_INs, want 1", n)
	}
}

// forwarding.packet_out_delay: the packet a FLOW_MOD's buffer_id releases
// leaves that long after the install job (Open vSwitch's userspace slow
// path), with or without an activation delay; a port packet through the
// same rule afterwards is a hit.
func TestPacketOutDelayForTheReleasedPacket(t *testing.T) {
	const pod = 300 * time.Microsecond
	for _, act := range []time.Duration{0, 4 * time.Millisecond} {
		prof := loadProfile(t, "pica8-p3297", func(p *profile.Profile) {
			p.Agent.BatchSize, p.Agent.FlushPeriod = 1, 0
			p.Forwarding.PacketOutDelay, p.Install.ActivationDelay = pod, act
		})
		r := newRig(t, prof, Options{})
		r.at(0, func() { r.sw.Receive(1, frame(t, 0, 5)) })
		r.run()
		var pi *openflow.PacketIn
		for _, m := range r.ctl.take() {
			if m, ok := m.m.(*openflow.PacketIn); ok {
				pi = m
			}
		}
		if pi == nil || pi.BufferID == openflow.NoBuffer {
			t.Fatalf("want a buffered PACKET_IN, got %+v", pi)
		}
		const at = time.Second
		r.at(at, func() {
			fm := ruleFor(0, 100)
			fm.BufferID = pi.BufferID
			r.send(fm)
		})
		r.at(2*time.Second, func() { r.sw.Receive(1, frame(t, 0, 6)) })
		r.run()
		job := prof.TCAM.Timing.DriverPerWrite
		d := r.deliveries()
		if len(d) != 2 {
			t.Fatalf("activation %v: deliveries %+v, want 2", act, d)
		}
		if got, want := d[0].at.Sub(t0), at+job+pod; got != want {
			t.Errorf("activation %v: released packet at +%v, want +%v (job end + packet-out delay)", act, got, want)
		}
		if got, want := d[1].at.Sub(t0), 2*time.Second+prof.Forwarding.HitDelay; got != want {
			t.Errorf("activation %v: port packet at +%v, want +%v (a hit)", act, got, want)
		}
	}
}

// A miss still on its way to the CPU when the pipeline stops is dropped
// (counted, its buffer freed), never handed on.
func TestUpcallQueueDroppedOnStop(t *testing.T) {
	prof := loadProfile(t, "pica8-p3297", func(p *profile.Profile) {
		p.Agent.BatchSize, p.Agent.FlushPeriod = 1, 0
		p.Upcall = profile.Upcall{Latency: time.Millisecond}
	})
	r := newRig(t, prof, Options{})
	r.at(0, func() { r.sw.Receive(1, frame(t, 0, 1)) })
	r.at(500*time.Microsecond, func() { r.p.Stop() })
	r.run()
	for _, m := range r.ctl.take() {
		if _, ok := m.m.(*openflow.PacketIn); ok {
			t.Errorf("PACKET_IN at +%v after the pipeline stopped", m.at.Sub(t0))
		}
	}
	if s := r.p.Stats(); s.Drops["stopped"] != 1 {
		t.Errorf("drops %v, want one stopped", s.Drops)
	}
}
