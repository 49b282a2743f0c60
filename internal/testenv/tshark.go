package testenv

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Capture is a running tshark writing a pcapng file.
type Capture struct {
	// File is the capture file; complete once Stop returns.
	File string

	t      testing.TB
	cmd    *exec.Cmd
	stderr *tailBuffer
	done   chan struct{}
	once   sync.Once
	err    error
}

// captureSettle is how long Stop waits before signalling tshark, so frames
// the kernel has queued for the capture socket are still written.
const captureSettle = 300 * time.Millisecond

// StartTshark captures TCP traffic on iface to or from any of ports (all
// TCP if none) into a file in a temporary directory. It returns once tshark
// reports that dumpcap capture started, so traffic sent afterwards is
// recorded. Cleanup
// stops it if the test did not.
func StartTshark(t testing.TB, iface string, ports ...int) *Capture {
	t.Helper()
	RequireRoot(t)
	RequireCommand(t, "tshark", "dumpcap")
	file := filepath.Join(shortTempDir(t, "cap"), "capture.pcapng")
	// -B 32: a 32 MiB kernel capture buffer instead of dumpcap's 2 MiB. With
	// iperf3 saturating both cores (the OVS tests), dumpcap can fall behind;
	// a dropped control segment breaks tshark's reassembly of the rest of
	// the stream, and the capture checks would fail for the capture's sake.
	args := []string{"-i", iface, "-B", "32", "-w", file, "-q"}
	if f := portFilter(ports); f != "" {
		args = append(args, "-f", f)
	}
	path, err := lookPath("tshark")
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	c := &Capture{
		File:   file,
		t:      t,
		cmd:    exec.Command(path, args...),
		stderr: &tailBuffer{max: 16 << 10},
		done:   make(chan struct{}),
	}
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	pipe, err := c.cmd.StderrPipe()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatalf("start tshark: %v", err)
	}
	ready := make(chan struct{})
	go c.readStderr(pipe, ready)
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Logf("tshark cleanup: %v", err)
		}
		if t.Failed() {
			c.keep()
		}
	})

	// dumpcap opens the device before it creates the file and writes the
	// pcapng header, so a non-empty file is a second readiness signal,
	// independent of how this tshark version logs.
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case <-ready:
			return c
		case <-tick.C:
			if st, err := os.Stat(file); err == nil && st.Size() > 0 {
				return c
			}
		case <-c.done:
			t.Fatalf("tshark %v exited before capturing: %v\n%s", args, c.err, c.stderr)
		case <-timeout:
			t.Fatalf("tshark %v not capturing after 20 s:\n%s", args, c.stderr)
		}
	}
}

func portFilter(ports []int) string {
	parts := make([]string, len(ports))
	for i, p := range ports {
		parts[i] = fmt.Sprintf("tcp port %d", p)
	}
	return strings.Join(parts, " or ")
}

// captureStarted is what tshark logs once dumpcap has opened the device and
// the file. Its earlier "Capturing on ..." line is printed before dumpcap
// even starts, so traffic sent right after it can be missed.
const captureStarted = "Capture started."

// readStderr copies tshark's stderr, signals ready on captureStarted, and
// reaps the process once stderr closes.
func (c *Capture) readStderr(r io.Reader, ready chan struct{}) {
	sc := bufio.NewScanner(r)
	signalled := false
	for sc.Scan() {
		line := sc.Text()
		fmt.Fprintln(c.stderr, line)
		if !signalled && strings.Contains(line, captureStarted) {
			close(ready)
			signalled = true
		}
	}
	_, _ = io.Copy(c.stderr, r)
	c.err = c.cmd.Wait()
	close(c.done)
}

// Stop ends the capture and waits until the file is complete. It is safe
// to call more than once.
func (c *Capture) Stop() error {
	c.once.Do(func() {
		select {
		case <-c.done:
			return
		default:
		}
		time.Sleep(captureSettle)
		_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGINT)
		select {
		case <-c.done:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
			<-c.done
		}
	})
	<-c.done
	// tshark exits 0 on SIGINT; a kill shows up as an error.
	if c.err != nil {
		return fmt.Errorf("tshark: %w\n%s", c.err, c.stderr)
	}
	return nil
}

// keep copies the capture of a failed test into the test's artifact
// directory, so a failure seen once (a soak, CI) can be dissected again:
// with go test -artifacts it outlives the run (scripts/test.sh sets it when
// PSEUDOCONG_TEST_ARTIFACTS names a directory).
func (c *Capture) keep() {
	if f := flag.Lookup("test.artifacts"); f == nil || f.Value.String() != "true" {
		c.t.Logf("capture of the failed test not kept: run go test -artifacts, or scripts/test.sh with PSEUDOCONG_TEST_ARTIFACTS=DIR")
		return
	}
	b, err := os.ReadFile(c.File)
	if err != nil {
		c.t.Logf("keep capture: %v", err)
		return
	}
	dst := filepath.Join(c.t.ArtifactDir(), filepath.Base(c.File))
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		c.t.Logf("keep capture: %v", err)
		return
	}
	c.t.Logf("capture of the failed test: %s (%d bytes)", dst, len(b))
}

// Log returns the tail of tshark's stderr (packet counts, warnings).
func (c *Capture) Log() string { return c.stderr.String() }
