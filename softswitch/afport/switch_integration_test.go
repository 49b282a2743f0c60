//go:build integration

package afport

import (
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pseudocong/pseudocong/internal/clock"
	"github.com/pseudocong/pseudocong/internal/testenv"
	"github.com/pseudocong/pseudocong/openflow"
	"github.com/pseudocong/pseudocong/softswitch"
)

// recordingChannel is a controller connection that keeps PORT_STATUS
// messages.
type recordingChannel struct {
	mu     sync.Mutex
	status []openflow.PortStatus
}

func (c *recordingChannel) Send(m openflow.Message) error {
	if ps, ok := m.(*openflow.PortStatus); ok {
		c.mu.Lock()
		c.status = append(c.status, *ps)
		c.mu.Unlock()
	}
	return nil
}

func (c *recordingChannel) Role() softswitch.Role { return softswitch.RoleController }

func (c *recordingChannel) statuses() []openflow.PortStatus {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]openflow.PortStatus(nil), c.status...)
}

// The real switch core on two AF_PACKET ports: in fail-standalone mode
// (no controller) it forwards ping and TCP between the namespace hosts as
// a learning switch; with a controller attached, a link going down and up
// at a host becomes PORT_STATUS MODIFY messages with OFPPS_LINK_DOWN set
// and cleared.
func TestSwitchOnLinuxPorts(t *testing.T) {
	testenv.RequireCommand(t, "ping", "ip")
	topo := upTestbed(t)
	sw := softswitch.New(clock.Wall{}, softswitch.Config{FailMode: softswitch.FailStandalone})
	t.Cleanup(sw.Close)
	reg := prometheus.NewRegistry()
	met, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	for i, ifname := range topo.SwitchPorts() {
		p, err := Open(Options{No: uint16(i + 1), IfName: ifname})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = p.Close() })
		if err := sw.AddPort(p); err != nil {
			t.Fatal(err)
		}
		met.Add(p)
		if err := p.Start(sw); err != nil {
			t.Fatal(err)
		}
	}
	h1, h2 := topo.Hosts[0], topo.Hosts[1]
	out, err := exec.Command("ip", "netns", "exec", h1.Netns, "ping", "-c", "3", "-i", "0.2", "-W", "2",
		h2.Addr.Addr().String()).CombinedOutput()
	if err != nil {
		t.Fatalf("ping through the switch: %v\n%s", err, out)
	}
	t.Logf("ping through the switch: %s", lastLine(string(out)))
	if got := tcpEcho(t, h1.Netns, h2.Netns, h2.Addr.Addr().String()); got != "hello through afport" {
		t.Fatalf("tcp through the switch: %q", got)
	}
	// Both ports received frames (ping and TCP each way) and the kernel
	// dropped none.
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			v := m.GetCounter().GetValue()
			switch f.GetName() {
			case "pseudocong_afport_rx_frames_total":
				seen++
				if v < 3 {
					t.Errorf("port %v received %v frames", m.GetLabel(), v)
				}
			case "pseudocong_afport_kernel_drops_total", "pseudocong_afport_tx_errors_total":
				if v != 0 {
					t.Errorf("%s %v = %v", f.GetName(), m.GetLabel(), v)
				}
			}
		}
	}
	if seen != 2 {
		t.Errorf("rx counters for %d ports, want 2", seen)
	}

	ch := &recordingChannel{}
	sw.Attach(ch)
	t.Cleanup(func() { sw.Detach(ch) })
	setLink := func(state string) {
		if out, err := exec.Command("ip", "-n", h2.Netns, "link", "set", h2.Iface, state).CombinedOutput(); err != nil {
			t.Fatalf("link %s: %v %s", state, err, out)
		}
	}
	waitStatus := func(down bool) {
		t.Helper()
		deadline := time.Now().Add(3 * time.Second)
		for {
			for _, ps := range ch.statuses() {
				if ps.Desc.PortNo == 2 && ps.Reason == openflow.PortReasonModify &&
					(ps.Desc.State&openflow.PortStateLinkDown != 0) == down {
					return
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("no PORT_STATUS MODIFY for port 2 with link down=%v; got %+v", down, ch.statuses())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	setLink("down")
	waitStatus(true)
	setLink("up")
	waitStatus(false)
}
