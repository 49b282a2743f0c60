package sim

import (
	"github.com/pseudocong/pseudocong/agent"
	"github.com/pseudocong/pseudocong/softswitch"
	"github.com/pseudocong/pseudocong/softswitch/dataplane"
	"github.com/pseudocong/pseudocong/softswitch/pipeline"
)

// upcallForwarder wraps the pipeline's Forwarder seam to charge the local
// CPU for the upcall that precedes a swap-in: the chip cannot consult the
// backing table by itself, so a packet whose rule is not in the TCAM goes
// up to the local CPU exactly as a table miss does (the chip-to-CPU
// transfer and handling that the profile prices as packet_in_cost); the
// agent finds the rule in its software table, and only then the swap-in
// job writes it into the TCAM. Packets for the same rule share one upcall.
//
// It belongs in package softswitch/pipeline (the swap-in job's Cost); it
// lives here until that change is made, so that the sim and the live
// switch differ only by this upcall (docs/calibration.md).
type upcallForwarder struct {
	pl      *pipeline.Pipeline
	pending map[uint64][]softswitch.Hit
}

func newUpcallForwarder(pl *pipeline.Pipeline) *upcallForwarder {
	return &upcallForwarder{pl: pl, pending: map[uint64][]softswitch.Hit{}}
}

// Forward implements softswitch.Forwarder.
func (u *upcallForwarder) Forward(h softswitch.Hit) {
	id := h.EntryID
	if waiting, ok := u.pending[id]; ok {
		u.pending[id] = append(waiting, h)
		return
	}
	if u.pl.Where(id) != dataplane.InBacking {
		u.pl.Forward(h)
		return
	}
	u.pending[id] = []softswitch.Hit{h}
	ok := u.pl.Agent().Submit(agent.Job{
		Kind: "swap_in_upcall",
		Cost: u.pl.Profile().Agent.PacketInCost,
		Done: func() {
			hits := u.pending[id]
			delete(u.pending, id)
			for _, h := range hits {
				u.pl.Forward(h)
			}
		},
	})
	if !ok {
		// The CPU refused the work (job queue full): the packets go on to
		// the pipeline, which queues or drops them as it would.
		hits := u.pending[id]
		delete(u.pending, id)
		for _, h := range hits {
			u.pl.Forward(h)
		}
	}
}

var _ softswitch.Forwarder = (*upcallForwarder)(nil)
