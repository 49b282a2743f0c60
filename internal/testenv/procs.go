package testenv

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Process is a running process: its pid and its command line.
type Process struct {
	Pid  int
	Args []string
}

func (p Process) String() string { return strconv.Itoa(p.Pid) + ": " + strings.Join(p.Args, " ") }

// Processes lists the running processes whose command line match
// accepts, read from /proc: the leak checks of live tests ("nothing
// started from this binary is still running") and finding a child by its
// flags.
func Processes(match func(args []string) bool) []Process {
	var out []Process
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, c := range cmdlines {
		b, err := os.ReadFile(c)
		if err != nil || len(b) == 0 {
			continue // gone, or a kernel thread
		}
		args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		if !match(args) {
			continue
		}
		pid, err := strconv.Atoi(filepath.Base(filepath.Dir(c)))
		if err != nil {
			continue
		}
		out = append(out, Process{Pid: pid, Args: args})
	}
	return out
}

// ProcessesOf lists the running processes started from the binary bin,
// each as "pid: command line".
func ProcessesOf(bin string) []string {
	var out []string
	for _, p := range Processes(func(args []string) bool { return args[0] == bin }) {
		out = append(out, p.String())
	}
	return out
}
