package pipeline

import (
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/openflow"
	"github.com/pseudocong/pseudocong/softswitch/dataplane"
)

// FLOW_MODs are applied on the local CPU one after another, each taking
// its TCAM driver time; a BARRIER is answered only when all earlier ones
// are done, and a packet for a rule whose install is still running waits
// for it.
func TestBarrierWaitsForModelledInstalls(t *testing.T) {
	const n = 10
	prof := loadProfile(t, "pica8-p3297", nil)
	r := newRig(t, prof, Options{})
	r.at(0, func() {
		for i := range n {
			r.send(ruleFor(i, uint16(100+i))) // ascending: insert i moves i entries
		}
		r.send(barrier(77))
	})
	tm := prof.TCAM.Timing
	var total time.Duration
	for i := range n {
		total += tm.DriverPerWrite + time.Duration(i)*tm.DriverPerMove
	}
	// A packet for the last rule arrives after its FLOW_MOD was applied
	// (the job started) but before its TCAM write is done.
	lastStart := total - (tm.DriverPerWrite + (n-1)*tm.DriverPerMove)
	r.at(lastStart+100*time.Microsecond, func() { r.sw.Receive(1, frame(t, n-1, 5)) })
	r.run()
	msgs := r.ctl.take()
	if len(msgs) != 1 {
		t.Fatalf("controller got %d messages, want only the barrier reply", len(msgs))
	}
	if br, ok := msgs[0].m.(*openflow.BarrierReply); !ok || br.Xid != 77 {
		t.Fatalf("got %v", msgs[0].m.MsgType())
	}
	if at := msgs[0].at.Sub(t0); at != total {
		t.Errorf("barrier reply at +%v, want +%v (sum of the installs' CPU time)", at, total)
	}
	d := r.deliveries()
	if len(d) != 1 || d[0].at.Sub(t0) != total+prof.Forwarding.HitDelay {
		t.Errorf("waiting packet delivered %+v, want at +%v", d, total+prof.Forwarding.HitDelay)
	}
	if ps := r.p.Stats(); ps.Delivered[dataplane.PathInstallWait] != 1 || ps.FlowModJobs != n {
		t.Errorf("stats %+v", ps)
	}
	// With nothing pending a barrier is answered at once.
	r.at(time.Second, func() { r.send(barrier(78)) })
	r.run()
	if msgs := r.ctl.take(); len(msgs) != 1 || msgs[0].at.Sub(t0) != time.Second {
		t.Errorf("idle barrier: %+v", msgs)
	}
}

// A FLOW_MOD the agent's full job queue refuses is answered with
// FLOW_MOD_FAILED/EPERM, and a later BARRIER does not wait for it.
func TestRefusedFlowModIsAnswered(t *testing.T) {
	prof := loadProfile(t, "pica8-p3297", nil)
	prof.Agent.JobQueueLimit = 2
	r := newRig(t, prof, Options{})
	r.at(0, func() {
		for i := range 5 { // one runs, two queue, two are refused
			r.send(ruleFor(i, 10))
		}
		r.send(barrier(9))
	})
	r.run()
	var errs, replies int
	for _, m := range r.ctl.take() {
		switch m := m.m.(type) {
		case *openflow.ErrorMsg:
			if m.Type != openflow.ErrorTypeFlowModFailed || m.Code != uint16(openflow.FlowModFailedEPerm) {
				t.Errorf("error %v/%d", m.Type, m.Code)
			}
			errs++
		case *openflow.BarrierReply:
			replies++
		}
	}
	if errs != 2 || replies != 1 {
		t.Errorf("%d errors, %d barrier replies; want 2 and 1", errs, replies)
	}
	if n, _ := r.p.Occupancy(); n != 3 {
		t.Errorf("%d rules placed, want 3", n)
	}
}
