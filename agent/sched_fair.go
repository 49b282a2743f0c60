package agent

// PerPortFair keeps one miss queue per ingress port and builds from them
// round-robin, so a storm on one port cannot starve the others of the CPU;
// a queued job runs before a queued build. When MissQueueLimit misses are
// queued, a new one is taken after dropping the oldest miss of the longest
// queue (reported to the DropHandler with reason miss_queue_full): the
// pinsched.c discipline applied to the queue in front of the CPU.
const PerPortFair Policy = "per_port_fair"

type fairScheduler struct {
	pq    *portQueues[QueuedMiss]
	limit int
}

func newFairScheduler(limit int) Scheduler {
	return &fairScheduler{pq: newPortQueues(func(m *QueuedMiss) uint16 { return m.P.InPort }), limit: limit}
}

func (f *fairScheduler) Policy() Policy            { return PerPortFair }
func (f *fairScheduler) JobsFirst() bool           { return true }
func (f *fairScheduler) Len() int                  { return f.pq.len() }
func (f *fairScheduler) Next() *QueuedMiss         { return f.pq.peek() }
func (f *fairScheduler) Pop() QueuedMiss           { return f.pq.pop() }
func (f *fairScheduler) Drain(fn func(QueuedMiss)) { f.pq.drain(fn) }

func (f *fairScheduler) Push(m QueuedMiss) (QueuedMiss, bool) {
	var dropped QueuedMiss
	did := false
	if f.pq.len() >= f.limit {
		dropped, did = f.pq.dropOldestOfLongest(), true
	}
	f.pq.push(m)
	return dropped, did
}
