package pipeline

import (
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/openflow"
	"github.com/pseudocong/pseudocong/profile"
)

// install.activation_delay: the BARRIER is answered when the install job
// ends, a packet for the new rule waits a further activation delay, and
// the CPU is not held for it (a second FLOW_MOD's job runs meanwhile).
func TestActivationDelayIsOffTheCPU(t *testing.T) {
	const delay = 6 * time.Millisecond
	prof := loadProfile(t, "pica8-p3297", func(p *profile.Profile) { p.Install.ActivationDelay = delay })
	r := newRig(t, prof, Options{})
	r.at(0, func() {
		r.send(ruleFor(0, 100))
		r.send(barrier(1))
		r.send(ruleFor(1, 50))
		r.send(barrier(2))
	})
	tm := prof.TCAM.Timing
	job0 := tm.DriverPerWrite
	job1 := tm.DriverPerWrite // lower priority below the first: highest-first moves none
	r.at(100*time.Microsecond, func() { r.sw.Receive(1, frame(t, 0, 5)) })
	r.run()
	msgs := r.ctl.take()
	if len(msgs) != 2 {
		t.Fatalf("controller got %d messages, want two barrier replies", len(msgs))
	}
	if br, ok := msgs[0].m.(*openflow.BarrierReply); !ok || br.Xid != 1 || msgs[0].at.Sub(t0) != job0 {
		t.Errorf("first barrier reply %v at +%v, want xid 1 at +%v", msgs[0].m.MsgType(), msgs[0].at.Sub(t0), job0)
	}
	if at := msgs[1].at.Sub(t0); at != job0+job1 {
		t.Errorf("second barrier reply at +%v, want +%v: the activation delay must not hold the CPU", at, job0+job1)
	}
	d := r.deliveries()
	if want := job0 + delay + prof.Forwarding.HitDelay; len(d) != 1 || d[0].at.Sub(t0) != want {
		t.Errorf("waiting packet delivered %+v, want at +%v", d, want)
	}
	// After activation the rule is a plain hit.
	r.at(time.Second, func() { r.sw.Receive(1, frame(t, 0, 6)) })
	r.run()
	if d := r.deliveries(); len(d) != 2 || d[1].at.Sub(t0) != time.Second+prof.Forwarding.HitDelay {
		t.Errorf("later packet delivered %+v, want at +1s+hit delay", d)
	}
}

// The FLOW_MOD's own buffered packet does not wait for the activation: the
// switch's CPU runs it through its table, which has the rule once the job
// ends (Open vSwitch executes it in userspace); a packet from a port
// meanwhile does wait.
func TestActivationDelaySkipsTheBufferedPacket(t *testing.T) {
	const delay = 6 * time.Millisecond
	prof := loadProfile(t, "pica8-p3297", func(p *profile.Profile) { p.Install.ActivationDelay = delay })
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
	r.at(at+10*time.Microsecond, func() { r.sw.Receive(1, frame(t, 0, 6)) })
	r.run()
	job := prof.TCAM.Timing.DriverPerWrite
	d := r.deliveries()
	if len(d) != 2 {
		t.Fatalf("deliveries %+v, want 2", d)
	}
	if got, want := d[0].at.Sub(t0), at+job+prof.Forwarding.HitDelay; got != want {
		t.Errorf("buffered packet at +%v, want +%v (job end + hit delay)", got, want)
	}
	if got, want := d[1].at.Sub(t0), at+job+delay+prof.Forwarding.HitDelay; got != want {
		t.Errorf("port packet at +%v, want +%v (after the activation delay)", got, want)
	}
	if s := r.p.Stats(); s.MaxHeld != 2 {
		t.Errorf("max held %d, want 2", s.MaxHeld)
	}
}

// A rule deleted during its activation delay drops the packets waiting
// for it (rule_gone); the activation that follows finds nothing to release.
func TestActivationDelayRuleDeletedMeanwhile(t *testing.T) {
	const delay = 6 * time.Millisecond
	prof := loadProfile(t, "pica8-p3297", func(p *profile.Profile) { p.Install.ActivationDelay = delay })
	r := newRig(t, prof, Options{})
	r.at(0, func() { r.send(ruleFor(0, 100)) })
	job := prof.TCAM.Timing.DriverPerWrite
	r.at(job+time.Millisecond, func() { r.sw.Receive(1, frame(t, 0, 5)) })
	r.at(job+2*time.Millisecond, func() {
		del := ruleFor(0, 100)
		del.Command, del.Actions = openflow.FlowModDeleteStrict, nil
		r.send(del)
	})
	r.run()
	if d := r.deliveries(); len(d) != 0 {
		t.Errorf("deliveries %+v, want none", d)
	}
	if s := r.p.Stats(); s.Drops["rule_gone"] != 1 {
		t.Errorf("drops %v, want one rule_gone", s.Drops)
	}
}
