package pipeline

import (
	"time"

	"github.com/pseudocong/pseudocong/agent"
	"github.com/pseudocong/pseudocong/softswitch"
	"github.com/pseudocong/pseudocong/softswitch/dataplane"
)

// Forward implements softswitch.Forwarder. The flow table already chose
// the rule; where the rule lives decides the delay:
//   - a job putting it into the TCAM is in flight: wait for it;
//   - in the backing table: wait for a swap-in, submitting it (after the
//     upcall, with Options.SwapInUpcall) if this is the first packet to
//     need it;
//   - in the TCAM: the hit delay.
func (p *Pipeline) Forward(h softswitch.Hit) {
	p.mu.Lock()
	if p.stopped {
		p.dropLocked(dataplane.DropStopped)
		p.mu.Unlock()
		return
	}
	id := h.EntryID
	if w, ok := p.waits[id]; ok {
		if w.expectDirect > 0 {
			// The FLOW_MOD's buffered packet, run through the table right
			// after the rule was added (on the wall clock a port's packet
			// in those same µs could take its place: harmless).
			w.expectDirect--
			p.holdDirectLocked(w, h)
		} else {
			p.holdLocked(w, h)
		}
		p.mu.Unlock()
		return
	}
	if p.table.Where(id) != dataplane.InBacking {
		// In the TCAM; or not placed at all (an entry the listener could
		// not place, or one deleted since the lookup), which the software
		// table still forwards.
		p.table.Used(id)
		// From the lookup's time (h.At), the switch's now: the same
		// instant on the virtual clock, and on the wall clock a clock
		// read per packet saved and a delay counted from the arrival.
		p.line.pushLocked(h, dataplane.PathHit, h.At)
		p.mu.Unlock()
		return
	}
	p.openWaitLocked(id, dataplane.PathSwapIn)
	p.holdLocked(p.waits[id], h)
	p.mu.Unlock()

	if !p.opts.SwapInUpcall {
		p.submitSwapIn(id)
		return
	}
	upcall := agent.Job{
		Kind: jobSwapInUpcall,
		Cost: p.prof.Agent.PacketInCost,
		Done: func() { p.submitSwapIn(id) },
	}
	if !p.agent.Submit(upcall) {
		p.mu.Lock()
		p.dropWaitLocked(id, dataplane.DropSwapInRefused)
		p.mu.Unlock()
	}
}

// submitSwapIn queues the job that brings rule id into the TCAM; the
// packets waiting for it are dropped if the CPU refuses the job.
func (p *Pipeline) submitSwapIn(id uint64) {
	p.mu.Lock()
	if _, waiting := p.waits[id]; !waiting || p.stopped {
		// The rule was deleted during the upcall (its packets were
		// dropped then): nothing to swap in.
		p.mu.Unlock()
		return
	}
	p.st.SwapInJobs++
	p.mu.Unlock()
	job := agent.Job{
		Kind:  jobSwapIn,
		Start: func() time.Duration { return p.swapIn(id) },
		Done:  func() { p.swapInDone(id) },
	}
	if !p.agent.Submit(job) {
		p.mu.Lock()
		p.dropWaitLocked(id, dataplane.DropSwapInRefused)
		p.mu.Unlock()
	}
}

// swapIn is the swap-in job's Start: move the rule into the TCAM now and
// return the driver time (eviction plus insert with its moves).
func (p *Pipeline) swapIn(id uint64) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return 0
	}
	cpu := p.unbilled
	p.unbilled = 0
	ch, err := p.table.SwapIn(id)
	if err != nil {
		// Deleted while queued: its waiting packets were dropped then.
		return cpu
	}
	return cpu + ch.CPUTime
}

// swapInDone releases the packets waiting for the rule, in arrival order.
func (p *Pipeline) swapInDone(id uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.releaseLocked(id, p.clk.Now())
}
