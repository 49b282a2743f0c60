//go:build integration

package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/pseudocong/pseudocong/internal/testenv"
	"github.com/pseudocong/pseudocong/testbed"
)

// startChainTestbed runs `pseudocong testbed up --topo chain:3` under a
// name private to the test and waits for its ready report. Cleanup stops
// it and removes whatever might be left, then fails the test on leftovers.
func startChainTestbed(t *testing.T) (string, *testbed.Daemon, []string) {
	t.Helper()
	testenv.RequireRoot(t)
	testenv.RequireCommand(t, "ip", "ping", "ovs-ofctl")
	var b [3]byte
	_, _ = rand.Read(b[:])
	name := "k" + hex.EncodeToString(b[:])
	dir := t.TempDir()
	bin := testenv.BuildPseudocong(t)
	d, err := testbed.StartDaemon(testbed.DaemonConfig{Binary: bin, Ready: true,
		Args: []string{"testbed", "up", "--topo", "chain:3", "--name", name, "--state-dir", dir}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = d.Stop(10 * time.Second)
		_ = testbed.Down(name, testbed.DownOptions{StateDir: dir})
	})
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	rep, err := d.WaitReady(ctx)
	if err != nil {
		t.Fatalf("testbed up --topo chain:3: %v\n%s", err, d.Output())
	}
	if len(rep.Listen) != 3 || rep.OpenFlow == "" {
		t.Fatalf("ready report %+v: want a controller and 3 switch listeners", rep)
	}
	return name, d, rep.Listen
}

// leftovers lists what of testbed name still exists: namespaces,
// interfaces, and processes whose command line names one of its
// interfaces (its switches) or the name itself.
func leftovers(t *testing.T, name string) []string {
	t.Helper()
	var left []string
	out, _ := exec.Command("ip", "netns", "list").Output()
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, name+"-") {
			left = append(left, "netns "+l)
		}
	}
	links, err := netlink.LinkList()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range links {
		if strings.HasPrefix(l.Attrs().Name, name+"-") {
			left = append(left, "link "+l.Attrs().Name)
		}
	}
	for _, p := range testenv.Processes(func(args []string) bool { return strings.Contains(strings.Join(args, "\x00"), name) }) {
		left = append(left, "process "+p.String())
	}
	return left
}

// switchPids are the pids of the chain's switch processes, by the port
// each one has.
func switchPid(t *testing.T, port string) int {
	t.Helper()
	for _, p := range testenv.Processes(func(args []string) bool {
		return len(args) > 1 && args[1] == "switch" && slices.Contains(args[2:], port)
	}) {
		return p.Pid
	}
	t.Fatalf("no switch process with port %s", port)
	return 0
}

// Issue 9, item 6 live: `testbed up --topo chain:3` runs three switch
// processes and a reactive controller; host 1 pings host 2 through all
// three (each switch's two ports received frames: ovs-ofctl dump-ports);
// SIGTERM stops everything and leaves no namespace, veth or process.
func TestTestbedChainPingsThroughThreeSwitches(t *testing.T) {
	name, d, listen := startChainTestbed(t)
	h1 := testbed.NamespaceName(name, 1)
	deadline := time.Now().Add(20 * time.Second)
	for {
		out, err := exec.Command("ip", "netns", "exec", h1, "ping", "-c", "3", "-W", "2", "10.0.0.2").CombinedOutput()
		if err == nil && strings.Contains(string(out), " 0% packet loss") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no ping end to end: %v\n%s\ntestbed:\n%s", err, out, d.Output())
		}
		time.Sleep(200 * time.Millisecond) // polling, not asserting
	}
	rx := regexp.MustCompile(`port\s+"?(\d)"?: rx pkts=(\d+)`)
	for i, addr := range listen {
		out, err := testenv.Ofctl("-O", "OpenFlow10", "--timeout=10", "dump-ports", "tcp:"+addr)
		if err != nil {
			t.Fatalf("switch %d dump-ports: %v\n%s", i+1, err, out)
		}
		ms := rx.FindAllStringSubmatch(out, -1)
		if len(ms) != 2 {
			t.Fatalf("switch %d: want 2 ports:\n%s", i+1, out)
		}
		for _, m := range ms {
			if n, _ := strconv.Atoi(m[2]); n < 3 {
				t.Errorf("switch %d port %s received %d frames, want at least the 3 echoes each way", i+1, m[1], n)
			}
		}
	}
	if err := d.Stop(15 * time.Second); err != nil {
		t.Fatalf("testbed stop: %v\n%s", err, d.Output())
	}
	if left := leftovers(t, name); len(left) > 0 {
		t.Fatalf("after SIGTERM, left behind:\n%s", strings.Join(left, "\n"))
	}
}

// A switch of the chain dies (SIGKILL): `testbed up` notices, stops the
// rest, removes the testbed and exits non-zero; nothing is left.
func TestTestbedChainCleansUpWhenASwitchDies(t *testing.T) {
	name, d, _ := startChainTestbed(t)
	a, _ := testbed.ChainLinkNames(name, 1)
	if err := syscall.Kill(switchPid(t, a), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-d.Done():
	case <-time.After(30 * time.Second):
		t.Fatalf("testbed up still runs 30 s after a switch died:\n%s", d.Output())
	}
	if d.Err() == nil || !strings.Contains(d.Output(), "switch 1 exited") {
		t.Errorf("testbed up exited with %v, want an error naming switch 1:\n%s", d.Err(), d.Output())
	}
	if left := leftovers(t, name); len(left) > 0 {
		t.Fatalf("after a switch died, left behind:\n%s", strings.Join(left, "\n"))
	}
}
