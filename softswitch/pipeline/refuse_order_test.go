package pipeline

import (
	"slices"
	"testing"

	"github.com/pseudocong/pseudocong/openflow"
)

// hookChannel records like recChannel and runs onSend (once) after the
// first message it records, still inside the switch's outbox drain.
type hookChannel struct {
	*recChannel
	onSend func()
}

func (c *hookChannel) Send(m openflow.Message) error {
	err := c.recChannel.Send(m)
	if f := c.onSend; f != nil {
		c.onSend = nil
		f()
	}
	return err
}

// A FLOW_MOD the agent refuses is answered through the switch's ordered
// outbox: a BARRIER_REPLY queued while Install runs (as a job finishing on
// another goroutine would queue it) leaves before the FLOW_MOD_FAILED.
// Sent straight on the connection, the error would overtake it.
func TestRefusalKeepsOutboxOrder(t *testing.T) {
	r := newRig(t, loadProfile(t, "pica8-p3297", nil), Options{})
	r.p.agent.Stop() // every job is refused from now on
	fm := ruleFor(1, 10)
	ch := &hookChannel{recChannel: r.ctl}
	ch.onSend = func() {
		r.sw.ReplyBarrier(ch, 2) // queued behind the running effect
		r.p.Install(ch, fm)      // refused
	}
	r.at(0, func() { r.sw.HandleMessage(ch, barrier(1)) })
	r.run()

	var got []string
	for _, m := range r.ctl.take() {
		got = append(got, m.m.MsgType().String())
		if e, ok := m.m.(*openflow.ErrorMsg); ok && (e.Type != openflow.ErrorTypeFlowModFailed || e.Code != uint16(openflow.FlowModFailedEPerm) || e.Xid != fm.Xid) {
			t.Errorf("error %v/%d xid %d, want FLOW_MOD_FAILED/EPERM xid %d", e.Type, e.Code, e.Xid, fm.Xid)
		}
	}
	want := []string{openflow.TypeBarrierReply.String(), openflow.TypeBarrierReply.String(), openflow.TypeError.String()}
	if !slices.Equal(got, want) {
		t.Errorf("messages %v, want %v", got, want)
	}
	if s := r.p.Stats(); s.FlowModsRefused != 1 {
		t.Errorf("FlowModsRefused = %d, want 1", s.FlowModsRefused)
	}
}
