package highbdp

import (
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// cpuTime is the process's user+system CPU time so far: on a shared
// machine a cell's wall time says more about the neighbours than about
// the simulator, its CPU time does not. It is a cell's own only while
// cells run one at a time (the difference over a cell is then the cell's,
// the collector's background work included).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// threadCPUTime is the calling OS thread's CPU time: a cell's own when
// cells run in parallel, each locked to its thread (Scenario.ThreadCPU).
// It is clock_gettime's thread clock, to the nanosecond (getrusage's
// thread times move in scheduler ticks), and leaves out what the
// collector's background workers do for the cell on other threads (with
// GCPercent, a few per cent of the run).
func threadCPUTime() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}
