package softswitch

import (
	"bytes"
	"testing"

	"github.com/pseudocong/pseudocong/openflow"
)

// DeliverBatch runs the hits' actions in order, as Deliver one by one
// would, and the per-packet FIFOs are empty once the outbox has drained.
func TestDeliverBatchKeepsOrder(t *testing.T) {
	r := newRig(t, 3, Config{})
	var hits []Hit
	for i := range 5 {
		f := udpFrame(t, uint16(100+i), 9)
		out := uint16(2 + i%2)
		hits = append(hits, Hit{InPort: 1, Frame: f, Actions: []openflow.Action{output(out)}})
	}
	r.sw.DeliverBatch(hits)
	got2, got3 := r.sent(2), r.sent(3)
	if len(got2) != 3 || len(got3) != 2 {
		t.Fatalf("port 2 got %d, port 3 got %d frames; want 3 and 2", len(got2), len(got3))
	}
	for i, f := range append(got2, got3...) {
		want := hits[[]int{0, 2, 4, 1, 3}[i]].Frame
		if !bytes.Equal(f, want) {
			t.Fatalf("frame %d out of order", i)
		}
	}
	r.sw.mu.Lock()
	defer r.sw.mu.Unlock()
	if r.sw.pendingHits.Len() != 0 || r.sw.pendingTx.Len() != 0 {
		t.Fatalf("pending hits %d, transmits %d after the drain", r.sw.pendingHits.Len(), r.sw.pendingTx.Len())
	}
}

// A hit through Receive reaches the port, and the pending FIFOs drain.
func TestReceiveHitDrainsFIFOs(t *testing.T) {
	r := newRig(t, 2, Config{})
	r.send(flowMod(openflow.FlowModAdd, matchInPort(1), 10, output(2)))
	for range 3 {
		r.sw.Receive(1, udpFrame(t, 1, 2))
	}
	if n := len(r.sent(2)); n != 3 {
		t.Fatalf("port 2 sent %d frames, want 3", n)
	}
	r.sw.mu.Lock()
	defer r.sw.mu.Unlock()
	if r.sw.pendingHits.Len() != 0 || r.sw.pendingTx.Len() != 0 {
		t.Fatal("FIFOs not empty after the drain")
	}
}
