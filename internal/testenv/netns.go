package testenv

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vishvananda/netns"

	"github.com/pseudocong/pseudocong/internal/nsexec"
)

// Netns is a named network namespace ("ip netns") private to one test.
type Netns struct {
	// Name is the full namespace name, for `ip netns exec Name ...`.
	Name string

	t testing.TB
}

// NewNetns creates namespace NewTag()+"-"+name with its loopback up.
// Cleanup kills every process left in it and deletes it, which also
// destroys the veth ends inside.
func NewNetns(t testing.TB, name string) *Netns {
	t.Helper()
	RequireRoot(t)
	RequireCommand(t, "ip")
	n := &Netns{Name: NewTag() + "-" + name, t: t}
	if _, err := run(nil, "ip", "netns", "add", n.Name); err != nil {
		t.Fatalf("new netns: %v", err)
	}
	t.Cleanup(n.delete)
	if _, err := n.Exec("ip", "link", "set", "lo", "up"); err != nil {
		t.Fatalf("new netns %s: %v", n.Name, err)
	}
	return n
}

// Exec runs a short command inside the namespace and returns its trimmed
// combined output (30 s timeout).
func (n *Netns) Exec(args ...string) (string, error) {
	return run(nil, "ip", append([]string{"netns", "exec", n.Name}, args...)...)
}

// Command returns an unstarted command that runs inside the namespace, for
// callers that manage its I/O and lifetime themselves.
func (n *Netns) Command(ctx context.Context, args ...string) *exec.Cmd {
	ip, err := lookPath("ip")
	if err != nil {
		ip = "ip"
	}
	return exec.CommandContext(ctx, ip, append([]string{"netns", "exec", n.Name}, args...)...)
}

// Start runs a long-lived command (an iperf3 server, a probe responder)
// inside the namespace in the background and stops it at cleanup. Its
// combined output is kept (last 64 KiB) and logged if the test failed.
func (n *Netns) Start(args ...string) *exec.Cmd {
	n.t.Helper()
	cmd := n.Command(context.Background(), args...)
	out := &tailBuffer{max: 64 << 10}
	cmd.Stdout, cmd.Stderr = out, out
	// Own process group, so cleanup reaches children too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		n.t.Fatalf("netns %s: start %v: %v", n.Name, args, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	n.t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(3 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
		if n.t.Failed() {
			n.t.Logf("--- output of %v in %s ---\n%s", args, n.Name, out.String())
		}
	})
	return cmd
}

// Do runs fn on an OS thread switched into the namespace, then switches the
// thread back (internal/nsexec). Sockets fn opens stay in the namespace
// afterwards. Goroutines fn starts do NOT inherit the namespace.
func (n *Netns) Do(fn func() error) error { return nsexec.DoNamed(n.Name, fn) }

// Handle opens the namespace for netlink.NewHandleAt and the like; the
// caller closes it.
func (n *Netns) Handle() (netns.NsHandle, error) {
	h, err := netns.GetFromName(n.Name)
	if err != nil {
		return h, fmt.Errorf("netns %s: %w", n.Name, err)
	}
	return h, nil
}

// delete kills leftover processes in the namespace, then removes it.
func (n *Netns) delete() {
	if out, err := run(nil, "ip", "netns", "pids", n.Name); err == nil {
		for _, f := range strings.Fields(out) {
			if pid, err := strconv.Atoi(f); err == nil && pid != os.Getpid() {
				if err := killPid(pid, 2*time.Second); err != nil {
					n.t.Logf("netns %s cleanup: %v", n.Name, err)
				}
			}
		}
	}
	if _, err := run(nil, "ip", "netns", "del", n.Name); err != nil {
		n.t.Logf("netns cleanup: %v", err)
	}
}
