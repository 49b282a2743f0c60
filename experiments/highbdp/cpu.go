package highbdp

import (
	"syscall"
	"time"
)

// cpuTime is the process's user+system CPU time so far: on a shared
// machine a cell's wall time says more about the neighbours than about
// the simulator, its CPU time does not (cells of one process run one at
// a time, so the difference over a cell is the cell's, GC included).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
