package agent

// RateLimited is install_first in front of the CPU plus Open vSwitch's
// Packet-In scheduler (ofproto/pinsched.c) behind it: built Packet-Ins
// pass a token bucket of controller_burst_limit tokens refilled at
// controller_rate_limit per second; when no token is free (or some are
// already waiting) they wait in per-ingress-port queues served round-robin
// as tokens come back, at most controller_burst_limit in all; a Packet-In
// arriving at full queues is taken after the oldest Packet-In of the
// longest queue is dropped (reason rate_limited). As in OVS's schema,
// controller_rate_limit must be at least 100 and controller_burst_limit,
// when set, at least 25; unset it is rate/4.
//
// The other policies, given a controller_rate_limit, keep the single-queue
// limiter the agent has always had (one FIFO, the newcomer dropped).
const RateLimited Policy = "rate_limited"

// Bounds of the OVS schema (vswitch.ovsschema, Controller table).
const (
	MinRateLimitedRate  = 100
	MinRateLimitedBurst = 25
)

func newRateLimitedScheduler(limit int) Scheduler {
	return &fifoQueue{q: newRing[QueuedMiss](limit), policy: RateLimited, jobsFirst: true}
}
