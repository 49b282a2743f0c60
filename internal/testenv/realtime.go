package testenv

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Realtime is how a timed part of a live test is scheduled. On the shared
// 2-core host every process is a CFS task, so a latency measured through
// one (a switch's polling thread, a controller) is mostly how long it
// waited for a core; under SCHED_FIFO it runs as soon as it is woken. And
// on this virtual machine a wake-up sent to an idle core waits for the
// hypervisor to run that vCPU again (hundreds of µs), so parts that hand
// work to one another (probe sender → switch → controller → switch) are
// kept on one core: each wake-up then lands on a core that is awake. Only
// processes and threads the test starts are changed, through their own
// policy and affinity: the host's RT throttling
// (kernel.sched_rt_runtime_us) is left alone and still reserves a share
// of the core for normal tasks should one spin.
//
// The zero value changes nothing.
type Realtime struct {
	// Priority is the SCHED_FIFO priority, 1-99; 0: normal scheduling.
	Priority int
	// CPUs is a CPU list as taskset -c takes it ("1", "0-1"); "": any.
	CPUs string
}

// On reports whether r changes anything.
func (r Realtime) On() bool { return r.Priority > 0 || r.CPUs != "" }

// String describes r for test logs.
func (r Realtime) String() string {
	if !r.On() {
		return "normal scheduling"
	}
	s := "SCHED_OTHER"
	if r.Priority > 0 {
		s = "SCHED_FIFO " + strconv.Itoa(r.Priority)
	}
	if r.CPUs != "" {
		s += " on CPU " + r.CPUs
	}
	return s
}

// Commands lists the commands Command needs, for RequireCommand.
func (r Realtime) Commands() []string {
	var c []string
	if r.CPUs != "" {
		c = append(c, "taskset")
	}
	if r.Priority > 0 {
		c = append(c, "chrt")
	}
	return c
}

// Command returns argv run under r: through taskset -c and chrt -f, which
// exec it (same pid: pidfiles, signals and Pdeathsig still reach the
// program). Threads and children it creates inherit both.
func (r Realtime) Command(argv ...string) []string {
	var pre []string
	if r.CPUs != "" {
		pre = append(pre, "taskset", "-c", r.CPUs)
	}
	if r.Priority > 0 {
		pre = append(pre, "chrt", "-f", strconv.Itoa(r.Priority))
	}
	return append(pre, argv...)
}

// LockThread wires the calling goroutine to its OS thread and runs that
// thread under r, for a loop whose timing matters (a probe sender:
// time.Now() just before a write must not be separated from the write by
// a preemption, and the write's wake-ups should land on the switch's
// core). The returned restore puts the thread's old policy and affinity
// back and unwires it; call it on the same goroutine. If that fails the
// thread stays wired, so Go ends it with the goroutine instead of reusing
// it. Only this thread changes: Go's other threads (its timers, the
// network poller) stay as they were.
func (r Realtime) LockThread() (restore func() error, err error) {
	runtime.LockOSThread()
	old, err := unix.SchedGetAttr(0, 0)
	if err != nil {
		runtime.UnlockOSThread()
		return nil, fmt.Errorf("sched_getattr: %w", err)
	}
	var oldSet unix.CPUSet
	if err := unix.SchedGetaffinity(0, &oldSet); err != nil {
		runtime.UnlockOSThread()
		return nil, fmt.Errorf("sched_getaffinity: %w", err)
	}
	back := func() error {
		old.Size = unix.SizeofSchedAttr
		if err := unix.SchedSetAttr(0, old, 0); err != nil {
			return fmt.Errorf("sched_setattr: restore policy %d: %w", old.Policy, err)
		}
		if err := unix.SchedSetaffinity(0, &oldSet); err != nil {
			return fmt.Errorf("sched_setaffinity: restore: %w", err)
		}
		runtime.UnlockOSThread()
		return nil
	}
	if r.CPUs != "" {
		set, err := parseCPUList(r.CPUs)
		if err != nil {
			runtime.UnlockOSThread()
			return nil, err
		}
		if err := unix.SchedSetaffinity(0, &set); err != nil {
			runtime.UnlockOSThread()
			return nil, fmt.Errorf("sched_setaffinity %s: %w", r.CPUs, err)
		}
	}
	if r.Priority > 0 {
		rt := &unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_FIFO, Priority: uint32(r.Priority)}
		if err := unix.SchedSetAttr(0, rt, 0); err != nil {
			if berr := back(); berr != nil {
				return nil, fmt.Errorf("sched_setattr SCHED_FIFO %d: %w (and %v)", r.Priority, err, berr)
			}
			return nil, fmt.Errorf("sched_setattr SCHED_FIFO %d: %w", r.Priority, err)
		}
	}
	return back, nil
}

// Check reports whether every thread of pid runs under r, naming the
// first that does not.
func (r Realtime) Check(pid int) error {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return fmt.Errorf("threads of %d: %w", pid, err)
	}
	var want unix.CPUSet
	if r.CPUs != "" {
		if want, err = parseCPUList(r.CPUs); err != nil {
			return err
		}
	}
	for _, e := range tasks {
		tid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		a, err := unix.SchedGetAttr(tid, 0)
		if err != nil {
			continue // the thread ended
		}
		if r.Priority > 0 && (a.Policy != unix.SCHED_FIFO || int(a.Priority) != r.Priority) {
			return fmt.Errorf("thread %d of %d: policy %d priority %d, want SCHED_FIFO (%d) at %d", tid, pid, a.Policy, a.Priority, unix.SCHED_FIFO, r.Priority)
		}
		if r.CPUs != "" {
			var got unix.CPUSet
			if err := unix.SchedGetaffinity(tid, &got); err == nil && got != want {
				return fmt.Errorf("thread %d of %d: affinity %v, want CPU %s", tid, pid, got, r.CPUs)
			}
		}
	}
	return nil
}

// parseCPUList parses a taskset -c style list: "1", "0,2", "0-3".
func parseCPUList(s string) (unix.CPUSet, error) {
	var set unix.CPUSet
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		b := a
		if err == nil && isRange {
			b, err = strconv.Atoi(hi)
		}
		if err != nil || a < 0 || b < a {
			return set, fmt.Errorf("CPU list %q: bad element %q", s, part)
		}
		for c := a; c <= b; c++ {
			set.Set(c)
		}
	}
	return set, nil
}
