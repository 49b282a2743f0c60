package testenv

import (
	"fmt"
	"os"
	"runtime"
	"strconv"

	"golang.org/x/sys/unix"
)

// Real-time scheduling for the timed parts of live tests. On the shared
// 2-core host every process is a CFS task, so a latency measured through
// one (a switch's polling thread, a controller) is mostly how long it
// waited for a core; under SCHED_FIFO it runs as soon as it is woken. Only
// processes and threads the test starts are changed, and only through
// their own scheduling policy: the host's RT throttling
// (kernel.sched_rt_runtime_us) is left alone and still reserves a share
// of each core for normal tasks should one spin.

// RealtimeCommand returns argv run under SCHED_FIFO at prio through
// chrt -f, which execs it (same pid: pidfiles, signals and Pdeathsig
// still reach the program). Threads and children it creates inherit the
// policy.
func RealtimeCommand(prio int, argv ...string) []string {
	return append([]string{"chrt", "-f", strconv.Itoa(prio)}, argv...)
}

// SchedPolicy returns the scheduling policy and real-time priority of
// thread tid (a pid names its main thread), e.g. unix.SCHED_FIFO and 10.
func SchedPolicy(tid int) (policy, prio int, err error) {
	a, err := unix.SchedGetAttr(tid, 0)
	if err != nil {
		return 0, 0, fmt.Errorf("sched_getattr %d: %w", tid, err)
	}
	return int(a.Policy), int(a.Priority), nil
}

// ProcessRealtime reports whether every thread of pid runs under
// SCHED_FIFO at prio, naming the first that does not.
func ProcessRealtime(pid, prio int) error {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return fmt.Errorf("threads of %d: %w", pid, err)
	}
	for _, e := range tasks {
		tid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		pol, pr, err := SchedPolicy(tid)
		if err != nil {
			continue // the thread ended
		}
		if pol != unix.SCHED_FIFO || pr != prio {
			return fmt.Errorf("thread %d of %d: policy %d priority %d, want SCHED_FIFO (%d) at %d", tid, pid, pol, pr, unix.SCHED_FIFO, prio)
		}
	}
	return nil
}

// LockRealtimeThread wires the calling goroutine to its OS thread and
// runs that thread under SCHED_FIFO at prio, for a loop whose timing
// matters (a probe sender: time.Now() just before a write must not be
// separated from the write by a preemption). The returned restore puts
// the thread's old policy back and unwires it; call it on the same
// goroutine. If that fails the thread stays wired, so Go ends it with the
// goroutine instead of reusing a real-time thread. Only this thread changes: Go's other threads (its timers,
// the network poller) stay as they were.
func LockRealtimeThread(prio int) (restore func() error, err error) {
	runtime.LockOSThread()
	old, err := unix.SchedGetAttr(0, 0)
	if err != nil {
		runtime.UnlockOSThread()
		return nil, fmt.Errorf("sched_getattr: %w", err)
	}
	rt := &unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_FIFO, Priority: uint32(prio)}
	if err := unix.SchedSetAttr(0, rt, 0); err != nil {
		runtime.UnlockOSThread()
		return nil, fmt.Errorf("sched_setattr SCHED_FIFO %d: %w", prio, err)
	}
	return func() error {
		old.Size = unix.SizeofSchedAttr
		if err := unix.SchedSetAttr(0, old, 0); err != nil {
			return fmt.Errorf("sched_setattr: restore policy %d: %w", old.Policy, err)
		}
		runtime.UnlockOSThread()
		return nil
	}, nil
}
