package agent

// InstallFirst is the default policy: misses are built in arrival order,
// a queued job runs before a queued build, and a miss arriving at a full
// queue is dropped (Miss returns false). See the package comment for why
// it reproduces paper 000's staircase.
const InstallFirst Policy = "install_first"

// fifoQueue is one bounded queue in arrival order that drops the newcomer
// when full; install_first and fifo differ only in JobsFirst.
type fifoQueue struct {
	q         *ring[QueuedMiss]
	policy    Policy
	jobsFirst bool
}

func newInstallFirstScheduler(limit int) Scheduler {
	return &fifoQueue{q: newRing[QueuedMiss](limit), policy: InstallFirst, jobsFirst: true}
}

func (f *fifoQueue) Policy() Policy  { return f.policy }
func (f *fifoQueue) JobsFirst() bool { return f.jobsFirst }
func (f *fifoQueue) Len() int        { return f.q.len() }
func (f *fifoQueue) Next() *QueuedMiss {
	return f.q.peek()
}
func (f *fifoQueue) Pop() QueuedMiss           { return f.q.pop() }
func (f *fifoQueue) Drain(fn func(QueuedMiss)) { f.q.drain(fn) }

func (f *fifoQueue) Push(m QueuedMiss) (QueuedMiss, bool) {
	if !f.q.push(m) {
		return m, true
	}
	return QueuedMiss{}, false
}
