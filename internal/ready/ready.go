// Package ready is how a pseudocong process tells whoever started it that
// it is serving, and on which addresses. A child that binds port 0 and
// reports what it got cannot race anyone for a port: a parent that picks a
// "free" port and hands it over can, because the port is free for anybody
// (another test's outgoing connection takes its source port from the same
// ephemeral range) until the child binds it.
//
// The report is one JSON line written to an inherited file descriptor
// (--ready-fd N), which is then closed. A parent that reads EOF before a
// line knows the child died before serving; no polling, no timeout guess.
// From a shell: `pseudocong switch ... --ready-fd 3 3>addrs.json`.
package ready

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// Report is what a process says once all its listeners are bound.
type Report struct {
	Pid int `json:"pid"`
	// OpenFlow is the controller's switch listener.
	OpenFlow string `json:"openflow,omitempty"`
	// Listen are the switch's passive management listeners, in --listen order.
	Listen []string `json:"listen,omitempty"`
	// Metrics is the bound /metrics address.
	Metrics string `json:"metrics,omitempty"`
}

// Write sends r on file descriptor fd and closes it. fd 0 means "not asked
// for" and does nothing; the descriptor must have been inherited open.
func Write(fd int, r Report) error {
	if fd == 0 {
		return nil
	}
	if fd < 0 {
		return fmt.Errorf("ready: --ready-fd %d: want a positive descriptor (0: off)", fd)
	}
	f := os.NewFile(uintptr(fd), "ready-fd")
	if f == nil {
		return fmt.Errorf("ready: --ready-fd %d is not open", fd)
	}
	defer f.Close()
	r.Pid = os.Getpid()
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("ready: %w", err)
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("ready: write to --ready-fd %d: %w", fd, err)
	}
	return nil
}

// ErrNoReport means the writer closed without a report: the process ended
// (or closed the descriptor) before it was serving.
var ErrNoReport = errors.New("ready: process closed its ready descriptor without a report")

// Read waits for one report on r until ctx ends. It closes r when ctx ends
// so that a blocked read returns.
func Read(ctx context.Context, r io.ReadCloser) (Report, error) {
	type result struct {
		rep Report
		err error
	}
	done := make(chan result, 1)
	go func() {
		line, err := bufio.NewReader(r).ReadBytes('\n')
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = ErrNoReport
			}
			done <- result{err: err}
			return
		}
		var rep Report
		if err := json.Unmarshal(line, &rep); err != nil {
			done <- result{err: fmt.Errorf("ready: bad report %q: %w", line, err)}
			return
		}
		done <- result{rep: rep}
	}()
	select {
	case res := <-done:
		_ = r.Close()
		return res.rep, res.err
	case <-ctx.Done():
		_ = r.Close()
		<-done
		return Report{}, fmt.Errorf("ready: no report: %w", ctx.Err())
	}
}
