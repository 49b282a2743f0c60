package softswitch

import (
	"testing"

	"github.com/pseudocong/pseudocong/internal/clock"
	"github.com/pseudocong/pseudocong/openflow"
)

// refusingInstaller refuses every FLOW_MOD with ReplyError. Before that it
// queues a BARRIER_REPLY, as another goroutine finishing earlier work
// would while Install runs.
type refusingInstaller struct{ sw *Switch }

func (i refusingInstaller) Install(ch Channel, fm *openflow.FlowMod) {
	i.sw.ReplyBarrier(ch, 99)
	i.sw.ReplyError(ch, fm, openflow.ErrorTypeFlowModFailed, uint16(openflow.FlowModFailedEPerm))
}

func (i refusingInstaller) Barrier(ch Channel, req *openflow.BarrierRequest) {
	i.sw.ReplyBarrier(ch, req.Xid)
}

// ReplyError goes through the ordered outbox: it leaves after what was
// queued before it, and quotes the request with its xid.
func TestReplyErrorKeepsOutboxOrder(t *testing.T) {
	sw := New(clock.NewSim(start), Config{})
	ch := newChannel(t, RoleController)
	sw.Attach(ch)
	sw.SetInstaller(refusingInstaller{sw})
	fm := &openflow.FlowMod{Header: openflow.Header{Version: openflow.Version, Type: openflow.TypeFlowMod, Xid: 42},
		Match: openflow.MatchAll(), Command: openflow.FlowModAdd, Priority: 1, BufferID: openflow.NoBuffer,
		OutPort: openflow.PortNone}
	sw.HandleMessage(ch, fm)
	msgs := ch.take()
	if len(msgs) != 2 {
		t.Fatalf("got %v, want BARRIER_REPLY then ERROR", types(msgs))
	}
	if br, ok := msgs[0].(*openflow.BarrierReply); !ok || br.Xid != 99 {
		t.Errorf("first message %v %+v, want BARRIER_REPLY xid 99", msgs[0].MsgType(), msgs[0])
	}
	e, ok := msgs[1].(*openflow.ErrorMsg)
	if !ok {
		t.Fatalf("second message %v, want ERROR", msgs[1].MsgType())
	}
	if e.Xid != 42 || e.Type != openflow.ErrorTypeFlowModFailed || e.Code != uint16(openflow.FlowModFailedEPerm) {
		t.Errorf("error xid %d type %v code %d, want xid 42 FLOW_MOD_FAILED/EPERM", e.Xid, e.Type, e.Code)
	}
	if len(e.Data) == 0 {
		t.Error("error does not quote the request")
	}
}
