package softswitch

import (
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/openflow"
)

// slowInstaller is a modelled installer as the agent will be: FLOW_MODs
// and BARRIERs queue in one FIFO; each FLOW_MOD takes cost of CPU time.
type slowInstaller struct {
	sw    *Switch
	cost  time.Duration
	queue []func()
	busy  bool
}

func (i *slowInstaller) Install(ch Channel, fm *openflow.FlowMod) {
	i.push(func() {
		i.sw.Clock().AfterFunc(i.cost, func() { i.sw.ApplyFlowMod(ch, fm); i.next() })
	})
}

func (i *slowInstaller) Barrier(ch Channel, req *openflow.BarrierRequest) {
	i.push(func() { i.sw.ReplyBarrier(ch, req.Xid); i.next() })
}

func (i *slowInstaller) push(f func()) {
	i.queue = append(i.queue, f)
	if !i.busy {
		i.next()
	}
}

func (i *slowInstaller) next() {
	if len(i.queue) == 0 {
		i.busy = false
		return
	}
	i.busy = true
	f := i.queue[0]
	i.queue = i.queue[1:]
	f()
}

func TestModelledInstallerKeepsBarrierOrder(t *testing.T) {
	r := newRig(t, 2, Config{})
	inst := &slowInstaller{sw: r.sw, cost: 10 * time.Millisecond}
	r.sw.SetInstaller(inst)
	for p := uint16(1); p <= 3; p++ {
		r.send(flowMod(openflow.FlowModAdd, matchInPort(p), 1, output(2)))
	}
	r.send(&openflow.BarrierRequest{Header: openflow.Header{Xid: 50}})
	// Nothing is applied yet: a packet now misses.
	r.sw.Receive(1, udpFrame(t, 1, 2))
	if pi := only[*openflow.PacketIn](t, r.ctl); pi.InPort != 1 {
		t.Fatalf("packet-in %+v", pi)
	}
	r.sim.RunFor(25 * time.Millisecond)
	if msgs := r.ctl.take(); len(msgs) != 0 {
		t.Fatalf("barrier answered before the third FLOW_MOD was applied: %v", types(msgs))
	}
	r.sim.Run()
	if br := only[*openflow.BarrierReply](t, r.ctl); br.Xid != 50 || r.sim.Elapsed() != 30*time.Millisecond {
		t.Fatalf("barrier reply xid %d at %v, want 50 at 30ms", br.Xid, r.sim.Elapsed())
	}
	r.sw.Receive(1, udpFrame(t, 1, 2))
	if len(r.sent(2)) != 1 {
		t.Fatal("flow must be installed after the barrier")
	}
}

// delayForwarder holds every hit for a fixed delay.
type delayForwarder struct {
	sw    *Switch
	delay time.Duration
}

func (f delayForwarder) Forward(h Hit) {
	f.sw.Clock().AfterFunc(f.delay, func() { f.sw.Deliver(h) })
}

func TestModelledForwarderHoldsFrames(t *testing.T) {
	r := newRig(t, 2, Config{})
	r.sw.SetForwarder(delayForwarder{r.sw, 50 * time.Microsecond})
	r.send(flowMod(openflow.FlowModAdd, matchInPort(1), 1, output(2)))
	r.sw.Receive(1, udpFrame(t, 1, 2))
	if len(r.sent(2)) != 0 {
		t.Fatal("frame left before the hit delay")
	}
	r.sim.RunFor(49 * time.Microsecond)
	if len(r.sent(2)) != 0 {
		t.Fatal("frame left before the hit delay")
	}
	r.sim.RunFor(time.Microsecond)
	if len(r.sent(2)) != 1 {
		t.Fatal("frame must leave at the hit delay")
	}
}

// droppingMiss discards every PACKET_IN, as an overloaded agent would.
type droppingMiss struct{ sw *Switch }

func (d droppingMiss) HandleMiss(m Miss) { d.sw.DropPacketIn(m.PacketIn) }

func TestDroppedPacketInFreesBuffer(t *testing.T) {
	r := newRig(t, 2, Config{Buffers: 1})
	r.sw.SetMissHandler(droppingMiss{r.sw})
	r.sw.Receive(1, udpFrame(t, 1, 2))
	r.sw.SetMissHandler(nil)
	r.sw.Receive(1, udpFrame(t, 1, 2))
	// The only buffer was freed by the drop, so the second miss is buffered.
	if pi := only[*openflow.PacketIn](t, r.ctl); pi.BufferID == openflow.NoBuffer {
		t.Fatal("buffer of the dropped packet-in was not freed")
	}
}
