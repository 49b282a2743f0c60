package agent

import "time"

// Scheduler is the Packet-In scheduling policy: it holds the table misses
// waiting for the local CPU, decides which one the CPU builds next and
// which one is dropped when the queue is full, and says whether queued jobs
// (Flow-Mod processing, TCAM writes) run before queued builds. Policies
// live one per file (sched_*.go); SchedulerFor picks one by Config.
//
// Contract (every implementation, checked by the unit tests):
//   - Push queues m, or drops one miss to stay within the limit it was
//     built with: either m itself (returned with dropped true) or an older
//     queued miss, returned instead while m is queued. Len never exceeds the
//     limit.
//   - Next and Pop are only called when Len() > 0; Next returns the miss
//     Pop would return, without removing it.
//   - Drain removes every queued miss, passing each to f.
//   - The policy reads no clock and draws no random numbers: the same
//     pushes give the same pops, so runs on clock.Sim are deterministic.
//   - JobsFirst true: a queued job runs before a queued build. False: the
//     CPU serves builds and jobs in arrival order (QueuedMiss.Seq against
//     the job's).
type Scheduler interface {
	Policy() Policy
	Push(m QueuedMiss) (dropped QueuedMiss, didDrop bool)
	Len() int
	Next() *QueuedMiss
	Pop() QueuedMiss
	Drain(f func(QueuedMiss))
	JobsFirst() bool
}

// QueuedMiss is a miss waiting for the CPU, with its arrival sequence
// number (shared with jobs, for FIFO).
type QueuedMiss struct {
	P   PacketIn
	Seq uint64
}

// Policies lists every scheduling policy, the default first.
func Policies() []Policy {
	return []Policy{InstallFirst, FIFO, PerPortFair, SYNFirst, RateLimited}
}

// SchedulerFor returns the miss scheduler of cfg's policy, bounded by
// cfg.MissQueueLimit. cfg must be valid.
func SchedulerFor(cfg Config) Scheduler {
	cfg = cfg.normalized()
	switch cfg.Scheduling {
	case FIFO:
		return newFIFOScheduler(cfg.MissQueueLimit)
	case PerPortFair:
		return newFairScheduler(cfg.MissQueueLimit)
	case SYNFirst:
		return newSYNFirstScheduler(cfg.MissQueueLimit)
	case RateLimited:
		return newRateLimitedScheduler(cfg.MissQueueLimit)
	default:
		return newInstallFirstScheduler(cfg.MissQueueLimit)
	}
}

// limiter is the stage between a built Packet-In and the batch: a token
// bucket with a bounded queue for the Packet-Ins waiting for a token.
type limiter interface {
	// admit offers p, built at now. pass: p goes on at once. Otherwise p
	// waits, and dropped names a Packet-In (p or an older one) discarded
	// to make room.
	admit(p PacketIn, now time.Time) (pass bool, dropped PacketIn, didDrop bool)
	// release returns the next waiting Packet-In if a token is free at now.
	release(now time.Time) (PacketIn, bool)
	// nextToken is the earliest time release can succeed.
	nextToken(now time.Time) time.Time
	len() int
	drain(f func(PacketIn))
}

// limiterFor returns cfg's rate limiter, or nil when there is none: the
// OVS pinsched for the rate_limited policy, else (controller_rate_limit
// set) the single-queue limiter every other policy has always had.
func limiterFor(cfg Config) limiter {
	switch {
	case cfg.Scheduling == RateLimited:
		return newPinsched(cfg.RateLimit, cfg.BurstLimit)
	case cfg.RateLimit > 0:
		return newSingleQueueLimiter(cfg.RateLimit, cfg.BurstLimit)
	}
	return nil
}
