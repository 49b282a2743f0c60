//go:build integration

package afport

import (
	"context"
	"log/slog"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/pseudocong/pseudocong/internal/clock"
	"github.com/pseudocong/pseudocong/internal/testenv"
	"github.com/pseudocong/pseudocong/openflow"
	"github.com/pseudocong/pseudocong/softswitch"
	"github.com/pseudocong/pseudocong/testbed"
)

// recoverDeadline bounds each wait for a PORT_STATUS or for pings to get
// through again. The fix needs milliseconds (plus up to a second for the
// kernel to activate a re-enabled device's qdisc, see
// testbed.WaitOperUp); the bound is generous so a loaded 2-core CI machine
// does not fail the test. The time taken is logged.
const recoverDeadline = 15 * time.Second

// liveRig is the real switch core in fail-standalone mode (a learning
// switch) on the AF_PACKET ports of a two-host testbed, with a recording
// controller channel attached.
type liveRig struct {
	topo *testbed.Topology
	cfg  testbed.Config
	sw   *softswitch.Switch
	ctl  *recordingChannel
}

func newLiveRig(t *testing.T) *liveRig {
	t.Helper()
	testenv.RequireCommand(t, "ping", "ip")
	topo, cfg := upTestbedConfig(t)
	r := &liveRig{topo: topo, cfg: cfg, ctl: &recordingChannel{}}
	r.sw = softswitch.New(clock.Wall{}, softswitch.Config{FailMode: softswitch.FailStandalone})
	t.Cleanup(r.sw.Close)
	for i, ifname := range topo.SwitchPorts() {
		p, err := Open(Options{No: uint16(i + 1), IfName: ifname, Logger: testLogger(t)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = p.Close() })
		if err := r.sw.AddPort(p); err != nil {
			t.Fatal(err)
		}
		if err := p.Start(r.sw); err != nil {
			t.Fatal(err)
		}
	}
	r.sw.Attach(r.ctl)
	t.Cleanup(func() { r.sw.Detach(r.ctl) })
	// With a controller attached the switch stops acting as a learning
	// switch and sends misses to the controller, which records only
	// PORT_STATUS: install one proactive rule that floods everything.
	r.sw.HandleMessage(r.ctl, &openflow.FlowMod{Header: openflow.Header{Xid: 1},
		Match: openflow.Match{Wildcards: openflow.WildcardAll}, Command: openflow.FlowModAdd,
		BufferID: openflow.NoBuffer, OutPort: openflow.PortNone,
		Actions: []openflow.Action{openflow.ActionOutput{Port: openflow.PortFlood}}})
	r.waitPing(t) // forwards before anything is broken
	return r
}

// waitPing pings host 2 from host 1 until one echo gets through and
// returns how long that took: ping sends every 50 ms (-i 0.05, as root)
// and stops at the first reply (-c 1) or at the deadline (-w).
func (r *liveRig) waitPing(t *testing.T) time.Duration {
	t.Helper()
	h1, h2 := r.topo.Hosts[0], r.topo.Hosts[1]
	start := time.Now()
	out, err := exec.Command("ip", "netns", "exec", h1.Netns, "ping", "-n", "-c", "1", "-i", "0.05",
		"-w", strconv.Itoa(int(recoverDeadline/time.Second)), h2.Addr.Addr().String()).CombinedOutput()
	if err != nil {
		t.Fatalf("no ping through the switch within %v: %v\n%s", recoverDeadline, err, out)
	}
	return time.Since(start)
}

// waitStatus waits for a PORT_STATUS MODIFY of port no, after the first
// `from` recorded messages, whose LINK_DOWN bit is down; it returns the
// number of messages up to and including it.
func (r *liveRig) waitStatus(t *testing.T, no uint16, from int, down bool) int {
	t.Helper()
	deadline := time.Now().Add(recoverDeadline)
	for {
		all := r.ctl.statuses()
		for i := from; i < len(all); i++ {
			ps := all[i]
			if ps.Desc.PortNo == no && ps.Reason == openflow.PortReasonModify &&
				(ps.Desc.State&openflow.PortStateLinkDown != 0) == down {
				if want := r.topo.Hosts[no-1].SwitchPort; ps.Desc.Name != want {
					t.Errorf("PORT_STATUS for port %d names %q, want %q", no, ps.Desc.Name, want)
				}
				return i + 1
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no PORT_STATUS MODIFY for port %d with link down=%v after message %d; got %+v", no, down, from, all)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// testLogger sends the port's log lines to the test log, so a failure
// shows what the port saw.
func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

func ipLink(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command("ip", append([]string{"link"}, args...)...).CombinedOutput(); err != nil {
		t.Fatalf("ip link %v: %v\n%s", args, err, out)
	}
}

// Regression (defect 2): `ip link set dev X down` and up on the switch's
// own port interface stopped the port's receive loop for good (poll
// POLLERR, "packet poll failed"): PORT_STATUS said up, pings 0 of 3. Now
// the controller sees LINK_DOWN then LINK_DOWN cleared, and pings get
// through again.
func TestSwitchPortSurvivesLinkDownUp(t *testing.T) {
	r := newLiveRig(t)
	port := r.topo.Hosts[1].SwitchPort
	seen := len(r.ctl.statuses())
	for round := 1; round <= 2; round++ {
		ipLink(t, "set", "dev", port, "down")
		seen = r.waitStatus(t, 2, seen, true)
		up := time.Now()
		ipLink(t, "set", "dev", port, "up")
		seen = r.waitStatus(t, 2, seen, false)
		status := time.Since(up)
		ping := r.waitPing(t)
		t.Logf("round %d: after link up, PORT_STATUS up in %v, then first ping reply in %v",
			round, status.Round(time.Microsecond), ping.Round(time.Microsecond))
	}
}

// Regression (defect 2): deleting the port's veth and creating it again
// with the same name (a new ifindex) left the port bound to the dead one,
// and the link watcher ignored the new interface's events. Now the port
// (same number, same name) reports link down, then up, and forwards.
func TestSwitchPortSurvivesInterfaceRecreate(t *testing.T) {
	r := newLiveRig(t)
	port := r.topo.Hosts[1].SwitchPort
	old, err := netlink.LinkByName(port)
	if err != nil {
		t.Fatal(err)
	}
	seen := len(r.ctl.statuses())
	ipLink(t, "del", "dev", port) // takes host 2's end with it
	seen = r.waitStatus(t, 2, seen, true)
	// Up re-creates the missing pair with the same names and addresses.
	up := time.Now()
	if _, err := testbed.Up(context.Background(), r.cfg); err != nil {
		t.Fatalf("testbed up again: %v", err)
	}
	nl, err := netlink.LinkByName(port)
	if err != nil {
		t.Fatalf("re-created %s: %v", port, err)
	}
	if nl.Attrs().Index == old.Attrs().Index {
		t.Fatalf("re-created %s kept ifindex %d", port, old.Attrs().Index)
	}
	r.waitStatus(t, 2, seen, false)
	status := time.Since(up)
	ping := r.waitPing(t)
	t.Logf("from re-creation start, PORT_STATUS up in %v, then first ping reply in %v",
		status.Round(time.Microsecond), ping.Round(time.Microsecond))
}
