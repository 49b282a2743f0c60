package pipeline

import (
	"time"

	"github.com/pseudocong/pseudocong/agent"
	"github.com/pseudocong/pseudocong/openflow"
	"github.com/pseudocong/pseudocong/softswitch"
)

// Job kinds (label kind of pseudocong_agent_job_latency_seconds).
const (
	jobFlowMod      = "flow_mod"
	jobSwapIn       = "swap_in"
	jobSwapInUpcall = "swap_in_upcall"
	// jobTCAMBackground is the TCAM layout's deferred work (hermes's
	// migration from its shadow slice into the main one), run on the local
	// CPU as a job of its own after the FLOW_MOD that made it due.
	jobTCAMBackground = "tcam_background"
)

// Drop reasons of this package besides dataplane's.
const (
	// dropBarrierQueueFull: too many BARRIERs waiting; the BARRIER gets no
	// reply (a late reply is visible to the controller, an early one
	// would silently break ordering).
	dropBarrierQueueFull = "barrier_queue_full"
)

// jobAcc collects what applying one FLOW_MOD did to the TCAM: the driver
// time (the job's CPU time) and the rules it added, which become usable
// when the job is done.
type jobAcc struct {
	cpu   time.Duration
	added []uint64
	// buffered: the FLOW_MOD names a buffered packet, which the switch
	// runs through the table right after applying it (waitList.direct).
	buffered bool
}

type pendingBarrier struct {
	target uint64 // reply once this many flow_mod jobs are done
	ch     softswitch.Channel
	xid    uint32
}

// Install implements softswitch.Installer: the FLOW_MOD becomes a job on
// the local CPU. It is applied when the CPU picks it (so its TCAM cost
// reflects the table at that point of the timeline) and its new rules are
// usable when the job's CPU time has elapsed, plus the profile's
// install.activation_delay (0 unless set), which holds no CPU.
func (p *Pipeline) Install(ch softswitch.Channel, fm *openflow.FlowMod) {
	acc := &jobAcc{}
	job := agent.Job{
		Kind:  jobFlowMod,
		Start: func() time.Duration { return p.applyFlowMod(ch, fm, acc) },
		Done:  func() { p.flowModDone(acc) },
	}
	p.mu.Lock()
	p.accepted++
	p.mu.Unlock()
	if p.agent.Submit(job) {
		p.mu.Lock()
		p.st.FlowModJobs++
		p.mu.Unlock()
		return
	}
	p.mu.Lock()
	p.accepted--
	p.st.FlowModsRefused++
	p.mu.Unlock()
	p.log.Warn("flow_mod refused: agent job queue full", "xid", fm.Xid)
	p.refuse(ch, fm)
}

// refuse answers a FLOW_MOD the CPU could not take with
// FLOW_MOD_FAILED/EPERM (OpenFlow 1.0 has no "busy" code), through the
// switch's outbox so the error cannot overtake replies queued before it.
func (p *Pipeline) refuse(ch softswitch.Channel, fm *openflow.FlowMod) {
	p.sw.ReplyError(ch, fm, openflow.ErrorTypeFlowModFailed, uint16(openflow.FlowModFailedEPerm))
}

// applyFlowMod is the job's Start: apply the FLOW_MOD, collecting the TCAM
// cost through the table listener.
func (p *Pipeline) applyFlowMod(ch softswitch.Channel, fm *openflow.FlowMod, acc *jobAcc) time.Duration {
	p.mu.Lock()
	if p.stopped {
		p.mu.Unlock()
		return 0
	}
	acc.cpu += p.unbilled
	p.unbilled = 0
	acc.buffered = fm.BufferID != openflow.NoBuffer
	p.acc = acc
	p.mu.Unlock()

	p.sw.ApplyFlowMod(ch, fm)

	p.mu.Lock()
	p.acc = nil
	cpu := acc.cpu
	p.mu.Unlock()
	return cpu
}

// flowModDone is the job's Done: the new rules are in the TCAM, packets
// waiting for them go on, and BARRIERs waiting for this job are answered.
func (p *Pipeline) flowModDone(acc *jobAcc) {
	p.mu.Lock()
	if d := p.prof.Install.ActivationDelay; d > 0 && len(acc.added) > 0 {
		// install.activation_delay: the rules become visible to lookups
		// later, off the CPU (Open vSwitch's revalidators); packets keep
		// waiting for them, but the CPU and the BARRIER go on now. A rule
		// deleted meanwhile has dropped its wait list: releasing it is a
		// no-op.
		// The FLOW_MOD's own buffered packet goes now (waitList.direct).
		now := p.clk.Now()
		for _, id := range acc.added {
			if w, ok := p.waits[id]; ok {
				p.releaseDirectLocked(w, now)
			}
		}
		added := acc.added
		p.clk.AfterFunc(d, func() { p.activate(added) })
	} else {
		now := p.clk.Now()
		for _, id := range acc.added {
			p.releaseLocked(id, now)
		}
	}
	p.done++
	var ready []pendingBarrier
	n := 0
	for _, b := range p.barriers {
		if b.target <= p.done {
			ready = append(ready, b)
			continue
		}
		p.barriers[n] = b
		n++
	}
	clear(p.barriers[n:])
	p.barriers = p.barriers[:n]
	bg := p.backgroundDueLocked()
	p.mu.Unlock()
	for _, b := range ready {
		p.sw.ReplyBarrier(b.ch, b.xid)
	}
	if bg {
		p.submitBackground()
	}
}

// activate releases the packets waiting for rules whose activation delay
// has passed.
func (p *Pipeline) activate(ids []uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return
	}
	now := p.clk.Now()
	for _, id := range ids {
		p.releaseLocked(id, now)
	}
}

// backgroundDueLocked reports whether a tcam_background job should be
// submitted now (the layout has deferred work and none is queued), and
// marks it queued.
func (p *Pipeline) backgroundDueLocked() bool {
	if p.stopped || p.bgQueued || !p.table.Pending() {
		return false
	}
	p.bgQueued = true
	return true
}

// submitBackground queues one batch of the layout's deferred work as a
// job: its CPU time is the batch's driver time, priced when the CPU picks
// it. When it is done and more is due, the next one follows. Layouts
// without deferred work never get here, so the default pipeline's
// timeline is unchanged.
func (p *Pipeline) submitBackground() {
	job := agent.Job{
		Kind: jobTCAMBackground,
		Start: func() time.Duration {
			p.mu.Lock()
			defer p.mu.Unlock()
			p.bgQueued = false
			if p.stopped {
				return 0
			}
			ch, err := p.table.Background()
			if err != nil {
				p.log.Error("tcam background work failed", "err", err)
				return 0
			}
			p.st.TCAMBackgroundJobs++
			return ch.CPUTime
		},
		Done: func() {
			p.mu.Lock()
			bg := p.backgroundDueLocked()
			p.mu.Unlock()
			if bg {
				p.submitBackground()
			}
		},
	}
	if !p.agent.Submit(job) {
		p.mu.Lock()
		p.bgQueued = false
		p.mu.Unlock()
	}
}

// Barrier implements softswitch.Installer: the reply leaves once every
// FLOW_MOD accepted before it has been applied and its rules are usable.
func (p *Pipeline) Barrier(ch softswitch.Channel, req *openflow.BarrierRequest) {
	p.mu.Lock()
	if p.done >= p.accepted {
		p.mu.Unlock()
		p.sw.ReplyBarrier(ch, req.Xid)
		return
	}
	if len(p.barriers) >= p.opts.BarrierLimit {
		p.dropLocked(dropBarrierQueueFull)
		p.mu.Unlock()
		p.log.Warn("barrier dropped: too many waiting", "xid", req.Xid)
		return
	}
	p.barriers = append(p.barriers, pendingBarrier{target: p.accepted, ch: ch, xid: req.Xid})
	p.mu.Unlock()
}

// chargeLocked bills TCAM driver time to the job applying a FLOW_MOD now,
// or, for work outside any job (timeouts), to the next job.
func (p *Pipeline) chargeLocked(d time.Duration) {
	if p.acc != nil {
		p.acc.cpu += d
		return
	}
	p.unbilled += d
}

var _ softswitch.Installer = (*Pipeline)(nil)
var _ softswitch.MissHandler = (*Pipeline)(nil)
var _ softswitch.Forwarder = (*Pipeline)(nil)
