package agent

import (
	"time"

	"github.com/pseudocong/pseudocong/internal/clock"
)

type workKind uint8

const (
	workNone workKind = iota
	workBuild
	workJob
)

// cpuSlot is what occupies the CPU. The CPU is non-preemptive: once work
// starts it runs for its whole cost.
type cpuSlot struct {
	work      workKind
	miss      PacketIn  // workBuild
	job       queuedJob // workJob
	startedAt time.Time
	cost      time.Duration
	timer     clock.Timer // fires when the cost has elapsed
}

// nextWorkLocked applies the scheduling policy.
func (a *Agent) nextWorkLocked() workKind {
	hasJob, hasMiss := a.jobs.len() > 0, a.misses.Len() > 0
	switch {
	case hasJob && hasMiss:
		if !a.misses.JobsFirst() && a.misses.Next().Seq < a.jobs.peek().seq {
			return workBuild
		}
		return workJob
	case hasJob:
		return workJob
	case hasMiss:
		return workBuild
	}
	return workNone
}

// dispatchLocked starts the next piece of work if the CPU is idle.
func (a *Agent) dispatchLocked() { a.dispatchAtLocked(a.clk.Now()) }

// dispatchAtLocked starts the next piece of work at modelled time `free`,
// when the CPU became free. On the wall clock a finishing timer fires late
// (Go timers, up to ~1 ms); starting the next job at the modelled end rather
// than at the late "now" keeps that lateness from adding up over back-to-back
// jobs. A job never starts before it was queued. On the virtual clock free
// equals now, so simulated runs are unchanged.
func (a *Agent) dispatchAtLocked(free time.Time) {
	if a.stopped || a.cpu.work != workNone {
		return
	}
	switch a.nextWorkLocked() {
	case workBuild:
		q := a.misses.Pop()
		now := laterOf(free, q.P.MissAt)
		a.cpu = cpuSlot{work: workBuild, miss: q.P, startedAt: now, cost: a.cfg.PacketInCost}
		a.cpu.timer = a.clk.AfterFunc(max(now.Add(a.cfg.PacketInCost).Sub(a.clk.Now()), 0), a.finishBuild)
	case workJob:
		q := a.jobs.pop()
		a.cpu = cpuSlot{work: workJob, job: q, startedAt: laterOf(free, q.queuedAt)}
		if q.job.Start == nil {
			a.armJobLocked(q.job.Cost)
			return
		}
		// Start runs outside the lock, after every callback already
		// queued (in particular the Done of the previous job), so it sees
		// the shared models in their state at this point of the timeline.
		start := q.job.Start
		a.emitLocked(func() { a.jobStarted(start()) })
	}
}

// jobStarted arms the completion of the running job once Start has told
// its extra cost.
func (a *Agent) jobStarted(extra time.Duration) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.stopped || a.cpu.work != workJob {
		return
	}
	a.armJobLocked(a.cpu.job.job.Cost + max(extra, 0))
}

func (a *Agent) armJobLocked(cost time.Duration) {
	a.cpu.cost = cost
	// On the wall clock Start may have taken real time: keep the modelled
	// end at startedAt + cost.
	wait := a.cpu.startedAt.Add(cost).Sub(a.clk.Now())
	a.cpu.timer = a.clk.AfterFunc(max(wait, 0), a.finishJob)
}

func (a *Agent) finishBuild() {
	a.mu.Lock()
	if a.stopped || a.cpu.work != workBuild {
		a.mu.Unlock()
		return
	}
	p, cost := a.cpu.miss, a.cpu.cost
	end := a.cpu.startedAt.Add(cost)
	a.cpu = cpuSlot{}
	a.chargeLocked(whatPacketIn, cost)
	now := a.clk.Now()
	p.BuiltAt = now
	a.stats.built++
	a.admitLocked(p, now)
	a.dispatchAtLocked(end)
	a.updateGaugesLocked()
	a.mu.Unlock()
	a.drain()
}

func (a *Agent) finishJob() {
	a.mu.Lock()
	if a.stopped || a.cpu.work != workJob {
		a.mu.Unlock()
		return
	}
	q, cost := a.cpu.job, a.cpu.cost
	end := a.cpu.startedAt.Add(cost)
	a.cpu = cpuSlot{}
	a.chargeLocked(q.job.kind(), cost)
	a.stats.jobsDone++
	if a.m != nil {
		a.m.jobLatency.WithLabelValues(q.job.kind()).Observe(a.clk.Now().Sub(q.queuedAt).Seconds())
	}
	if q.job.Done != nil {
		a.emitLocked(q.job.Done)
	}
	a.dispatchAtLocked(end)
	a.updateGaugesLocked()
	a.mu.Unlock()
	a.drain()
}

func (a *Agent) chargeLocked(work string, cost time.Duration) {
	a.stats.busy += cost
	if a.m != nil {
		a.m.cpuBusy.WithLabelValues(work).Add(cost.Seconds())
	}
}

func laterOf(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
