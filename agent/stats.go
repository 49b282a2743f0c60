package agent

import "time"

// Stats is a snapshot of the agent's counters and queues, for tests and
// experiment reports (Prometheus gets the same through Metrics).
type Stats struct {
	Misses        uint64 // Miss calls
	Built         uint64 // Packet-Ins built by the CPU
	Sent          uint64 // Packet-Ins handed to Output
	Batches       uint64 // batches handed to Output
	TimerFlushes  uint64 // batches sent by the flush timer (the rest: by count)
	JobsSubmitted uint64 // Submit calls
	JobsDone      uint64 // jobs whose Done point was reached
	// PacketInDrops and JobDrops count discarded work by reason.
	PacketInDrops map[DropReason]uint64
	JobDrops      map[DropReason]uint64
	// BusyTime is the CPU time of completed work.
	BusyTime time.Duration
	// Current queue depths.
	MissQueue, JobQueue, RateLimitQueue, BatchQueue int
	// High-water marks of the queue depths.
	MaxMissQueue, MaxJobQueue, MaxRateLimitQueue int
	// CPUBusy reports whether work is on the CPU now.
	CPUBusy bool
}

// DroppedPacketIns is the total over all reasons.
func (s Stats) DroppedPacketIns() uint64 {
	var n uint64
	for _, v := range s.PacketInDrops {
		n += v
	}
	return n
}

// counters is the mutable part the agent keeps under its lock.
type counters struct {
	misses, built, sent, batches, timerFlushes uint64
	jobsSubmitted, jobsDone                    uint64
	packetInDrops, jobDrops                    map[DropReason]uint64
	busy                                       time.Duration
	maxMiss, maxJob, maxRate                   int
}

func newCounters() counters {
	return counters{packetInDrops: map[DropReason]uint64{}, jobDrops: map[DropReason]uint64{}}
}

func copyMap(m map[DropReason]uint64) map[DropReason]uint64 {
	c := make(map[DropReason]uint64, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}
