package agent

// FIFO serves builds and jobs in the order they arrived, one queue for
// both: a Flow-Mod waits behind every miss that came before it. Kept for
// comparison (it erases paper 000's staircase, see the package comment).
// A miss arriving at a full queue is dropped.
const FIFO Policy = "fifo"

func newFIFOScheduler(limit int) Scheduler {
	return &fifoQueue{q: newRing[QueuedMiss](limit), policy: FIFO, jobsFirst: false}
}
