package agent

import (
	"errors"
	"fmt"
	"github.com/pseudocong/pseudocong/internal/outbox"
	"sync"
	"time"

	"github.com/pseudocong/pseudocong/internal/clock"
)

// Agent is the local CPU of one switch. Create it with New; it is safe for
// concurrent use.
type Agent struct {
	clk    clock.Clock
	cfg    Config
	out    Output
	onDrop DropHandler // nil when Output does not implement it
	m      *Metrics    // nil: no Prometheus series

	mu      sync.Mutex
	stopped bool
	seq     uint64 // arrival order across both CPU queues (for FIFO)

	misses Scheduler // the Packet-In scheduling policy
	jobs   *ring[queuedJob]
	cpu    cpuSlot

	lim       limiter // nil: no rate limit; built Packet-Ins waiting for a token
	heldTimer clock.Timer

	batch       []PacketIn
	flushTimer  clock.Timer
	flushGen    uint64    // identifies the armed flush timer
	flushAnchor time.Time // the flush timer ticks at flushAnchor + k·FlushPeriod

	stats counters

	outbox outbox.Outbox // effects run outside mu, in order
}

type queuedJob struct {
	job      Job
	seq      uint64
	queuedAt time.Time
}

// New returns an idle agent. The periodic flush timer starts at clk.Now().
// out must not be nil; m may be nil.
func New(clk clock.Clock, cfg Config, out Output, m *Metrics) (*Agent, error) {
	if clk == nil {
		return nil, errors.New("agent: nil clock")
	}
	if out == nil {
		return nil, errors.New("agent: nil output")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.normalized()
	a := &Agent{
		clk:         clk,
		cfg:         cfg,
		out:         out,
		m:           m,
		flushAnchor: clk.Now(),
		misses:      SchedulerFor(cfg),
		lim:         limiterFor(cfg),
		jobs:        newRing[queuedJob](cfg.JobQueueLimit),
		batch:       make([]PacketIn, 0, cfg.BatchSize),
		stats:       newCounters(),
	}
	a.onDrop, _ = out.(DropHandler)
	return a, nil
}

// Config returns the effective configuration (derived defaults filled in).
func (a *Agent) Config() Config { return a.cfg }

// Miss hands a table miss to the CPU. It returns false when the miss was
// dropped at once (miss queue full, or agent stopped); the drop is counted.
// After true, the agent owns p until it is sent or reported to the
// DropHandler.
func (a *Agent) Miss(p PacketIn) bool {
	a.mu.Lock()
	if p.MissAt.IsZero() {
		p.MissAt = a.clk.Now()
	}
	a.stats.misses++
	ok := false
	if a.stopped {
		a.countPacketInDropLocked(DropStopped)
	} else {
		seq := a.nextSeqLocked()
		dropped, didDrop := a.misses.Push(QueuedMiss{P: p, Seq: seq})
		switch {
		case didDrop && dropped.Seq == seq: // the newcomer
			a.countPacketInDropLocked(DropMissQueueFull)
		default:
			if didDrop { // an older miss made room for it
				a.dropPacketInLocked(dropped.P, DropMissQueueFull)
			}
			ok = true
			a.stats.maxMiss = max(a.stats.maxMiss, a.misses.Len())
			a.dispatchLocked()
		}
	}
	a.updateGaugesLocked()
	a.mu.Unlock()
	a.drain()
	return ok
}

// Submit queues a job for the CPU. It returns false when the job was
// dropped (job queue full, or agent stopped); the caller decides what that
// means (an OpenFlow error, back-pressure on the control channel).
func (a *Agent) Submit(job Job) bool {
	a.mu.Lock()
	a.stats.jobsSubmitted++
	ok := false
	switch {
	case a.stopped:
		a.countJobDropLocked(DropStopped)
	case !a.jobs.push(queuedJob{job: job, seq: a.nextSeqLocked(), queuedAt: a.clk.Now()}):
		a.countJobDropLocked(DropJobQueueFull)
	default:
		ok = true
		a.stats.maxJob = max(a.stats.maxJob, a.jobs.len())
		a.dispatchLocked()
	}
	a.updateGaugesLocked()
	a.mu.Unlock()
	a.drain()
	return ok
}

// Stop cancels the agent's timers and discards all queued work: accepted
// Packet-Ins not yet sent are reported to the DropHandler with reason
// stopped; queued jobs and the running one never reach Done. Later Miss and
// Submit calls return false. Stop is idempotent.
func (a *Agent) Stop() {
	a.mu.Lock()
	if a.stopped {
		a.mu.Unlock()
		return
	}
	a.stopped = true
	for _, t := range []clock.Timer{a.cpu.timer, a.heldTimer, a.flushTimer} {
		if t != nil {
			t.Stop()
		}
	}
	a.heldTimer, a.flushTimer = nil, nil
	switch a.cpu.work {
	case workBuild:
		a.dropPacketInLocked(a.cpu.miss, DropStopped)
	case workJob:
		a.countJobDropLocked(DropStopped)
	}
	a.cpu = cpuSlot{}
	a.misses.Drain(func(q QueuedMiss) { a.dropPacketInLocked(q.P, DropStopped) })
	a.jobs.drain(func(queuedJob) { a.countJobDropLocked(DropStopped) })
	if a.lim != nil {
		a.lim.drain(func(p PacketIn) { a.dropPacketInLocked(p, DropStopped) })
	}
	for _, p := range a.batch {
		a.dropPacketInLocked(p, DropStopped)
	}
	a.batch = nil
	a.updateGaugesLocked()
	a.mu.Unlock()
	a.drain()
}

// Stats returns a snapshot.
func (a *Agent) Stats() Stats {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := Stats{
		Misses:            a.stats.misses,
		Built:             a.stats.built,
		Sent:              a.stats.sent,
		Batches:           a.stats.batches,
		TimerFlushes:      a.stats.timerFlushes,
		JobsSubmitted:     a.stats.jobsSubmitted,
		JobsDone:          a.stats.jobsDone,
		PacketInDrops:     copyMap(a.stats.packetInDrops),
		JobDrops:          copyMap(a.stats.jobDrops),
		BusyTime:          a.stats.busy,
		MissQueue:         a.misses.Len(),
		JobQueue:          a.jobs.len(),
		BatchQueue:        len(a.batch),
		MaxMissQueue:      a.stats.maxMiss,
		MaxJobQueue:       a.stats.maxJob,
		MaxRateLimitQueue: a.stats.maxRate,
		CPUBusy:           a.cpu.work != workNone,
	}
	if a.lim != nil {
		s.RateLimitQueue = a.lim.len()
	}
	return s
}

// String summarises the configuration, for logs.
func (a *Agent) String() string {
	c := a.cfg
	return fmt.Sprintf("agent(p=%v B=%d flush=%v misses≤%d jobs≤%d rate=%g/s burst=%d %s)",
		c.PacketInCost, c.BatchSize, c.FlushPeriod, c.MissQueueLimit, c.JobQueueLimit,
		c.RateLimit, c.BurstLimit, c.Scheduling)
}

func (a *Agent) nextSeqLocked() uint64 {
	a.seq++
	return a.seq
}

// dropPacketInLocked counts a drop of an accepted Packet-In and tells the
// DropHandler.
func (a *Agent) dropPacketInLocked(p PacketIn, reason DropReason) {
	a.countPacketInDropLocked(reason)
	if a.onDrop != nil {
		a.emitLocked(func() { a.onDrop.PacketInDropped(p, reason) })
	}
}

func (a *Agent) countPacketInDropLocked(reason DropReason) {
	a.stats.packetInDrops[reason]++
	if a.m != nil {
		a.m.drops.WithLabelValues(whatPacketIn, string(reason)).Inc()
	}
}

func (a *Agent) countJobDropLocked(reason DropReason) {
	a.stats.jobDrops[reason]++
	if a.m != nil {
		a.m.drops.WithLabelValues(whatJob, string(reason)).Inc()
	}
}

func (a *Agent) updateGaugesLocked() {
	if a.m == nil {
		return
	}
	held := 0
	if a.lim != nil {
		held = a.lim.len()
	}
	a.m.queueDepth.WithLabelValues(queueMiss).Set(float64(a.misses.Len()))
	a.m.queueDepth.WithLabelValues(queueJob).Set(float64(a.jobs.len()))
	a.m.queueDepth.WithLabelValues(queueRateLimit).Set(float64(held))
	a.m.queueDepth.WithLabelValues(queueBatch).Set(float64(len(a.batch)))
}
