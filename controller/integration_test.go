//go:build integration

package controller_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/pseudocong/pseudocong/controller"
	"github.com/pseudocong/pseudocong/controller/flowsyntax"
	"github.com/pseudocong/pseudocong/internal/testenv"
)

// OpenFlow 1.0 message types the control channel must show.
const (
	ofptHello           = 0
	ofptFeaturesRequest = 5
	ofptFeaturesReply   = 6
	ofptSetConfig       = 9
	ofptPacketIn        = 10
	ofptPacketOut       = 13
	ofptFlowMod         = 14
	ofptBarrierRequest  = 18
	ofptBarrierReply    = 19
)

// serveOn runs our controller with app on 127.0.0.1:port until the test
// ends.
// reserveControllerPort binds the controller's listener before Open vSwitch
// is told to dial it, so no other connection's ephemeral port can take the
// port while the test first shows that nothing forwards without a
// controller. Until serveOn accepts, OVS's connection waits in the backlog
// without an OpenFlow handshake, so no flow is installed.
func reserveControllerPort(t *testing.T) (net.Listener, int) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	return ln, ln.Addr().(*net.TCPAddr).Port
}

func serveOn(t *testing.T, ln net.Listener, app controller.App) (*controller.Core, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	metrics, err := controller.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	core := controller.NewCore(controller.Config{App: app, Metrics: metrics})
	srv := controller.NewServer(controller.ServerConfig{Core: core})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("controller Serve: %v", err)
		}
	})
	return core, reg
}

// twoHosts builds OVS bridge br (fail-mode secure, OpenFlow 1.0, userspace
// datapath) pointed at our controller port, with h1 (10.0.0.1) on port 1
// and h2 (10.0.0.2) on port 2.
func twoHosts(t *testing.T, ctlPort int) (ovs *testenv.OVS, br string, h1, h2 *testenv.Netns) {
	t.Helper()
	testenv.RequireCommand(t, "ping", "ethtool", "ip")
	ovs = testenv.StartOVS(t, testenv.OVSOptions{})
	br = ovs.AddBridge("br0", 0x42)
	ovs.SetController(br, "tcp:127.0.0.1:"+strconv.Itoa(ctlPort))
	h1, h2 = testenv.NewNetns(t, "h1"), testenv.NewNetns(t, "h2")
	v1 := testenv.Veth(t, testenv.VethOptions{NS: h1, Addr: "10.0.0.1/24", MAC: "02:00:00:00:00:01", HostName: "h1"})
	v2 := testenv.Veth(t, testenv.VethOptions{NS: h2, Addr: "10.0.0.2/24", MAC: "02:00:00:00:00:02", HostName: "h2"})
	ovs.AddPort(br, v1.Host, 1)
	ovs.AddPort(br, v2.Host, 2)
	return ovs, br, h1, h2
}

func ping(h *testenv.Netns, dst string) (string, error) {
	return h.Exec("ping", "-c", "3", "-i", "0.2", "-W", "1", dst)
}

// pingEventually pings until a reply comes back or the deadline passes. The
// failed pre-controller ping leaves h1's ARP entry FAILED, and on a loaded
// 2-core machine the first reactive round (ARP flood, Packet-In, FLOW_MOD)
// can take longer than one short ping run; each attempt is still bounded.
func pingEventually(h *testenv.Netns, dst string, deadline time.Duration) (string, error) {
	var out string
	var err error
	for end := time.Now().Add(deadline); ; {
		out, err = ping(h, dst)
		if err == nil || time.Now().After(end) {
			return out, err
		}
	}
}

// connectAndPurge waits for OVS to connect to our controller, then drops
// the datapath drop flows that the pre-controller ping left behind (they
// are not revalidated, see ENVIRONMENT-NOTES).
func connectAndPurge(t *testing.T, ovs *testenv.OVS, br string) {
	t.Helper()
	if err := ovs.WaitConnected(br, 15*time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := ovs.Appctl("revalidator/purge"); err != nil {
		t.Fatalf("revalidator/purge: %v", err)
	}
}

// checkCapture asserts that Wireshark decodes the whole control channel as
// OpenFlow 1.0 without malformed messages, and that it shows the wanted
// message types.
func checkCapture(t *testing.T, capture *testenv.Capture, port int, want ...int) {
	t.Helper()
	if err := capture.Stop(); err != nil {
		t.Fatal(err)
	}
	recs := testenv.DecodeOpenFlow(t, capture.File, port)
	excused := excusedFrames(recs)
	seen := map[int]int{}
	for _, r := range recs {
		seen[r.Type]++
		if r.Version != 1 {
			t.Errorf("frame %d: version %d in an OpenFlow 1.0 channel", r.Frame, r.Version)
		}
		if r.Broken() && !excused[r.Frame] {
			t.Errorf("frame %d: type %d length %d malformed=%v severity %#x %v",
				r.Frame, r.Type, r.Length, r.Malformed, r.MaxSeverity, r.Expert)
		}
	}
	t.Logf("capture: %d OpenFlow 1.0 messages by type: %v", len(recs), seen)
	for _, w := range want {
		if seen[w] == 0 {
			t.Errorf("no message of type %d in the capture (types seen %v)", w, seen)
		}
	}
	if seen[ofptHello] < 2 {
		t.Errorf("want a HELLO from each side, got %d", seen[ofptHello])
	}
	if n := testenv.UndecodedOpenFlowBytes(t, capture.File, port); n != 0 {
		t.Errorf("%d bytes of the control channel were not decoded as OpenFlow 1.0", n)
	}
}

// TestOVSPingThroughReactiveController: Open vSwitch (userspace datapath,
// OpenFlow 1.0, fail-mode secure) connects to our reactive controller; the
// hosts cannot ping before, and can after, because our FLOW_MODs (cookie
// 0x70630001, priority 100) forward them. The control channel, captured
// with tshark, decodes as OpenFlow 1.0 without malformed messages.
func TestOVSPingThroughReactiveController(t *testing.T) {
	testenv.RequireRoot(t)
	ln, port := reserveControllerPort(t)
	capture := testenv.StartTshark(t, "lo", port)
	ovs, br, h1, _ := twoHosts(t, port)

	if out, err := ping(h1, "10.0.0.2"); err == nil {
		t.Fatalf("ping succeeded with no controller in fail-mode secure:\n%s", out)
	}
	core, reg := serveOn(t, ln, controller.NewReactive(controller.ReactiveConfig{}))
	connectAndPurge(t, ovs, br)
	out, err := pingEventually(h1, "10.0.0.2", 10*time.Second)
	if err != nil {
		t.Fatalf("ping h1 -> h2 through our reactive controller failed: %v\n%s\nflows:\n%s", err, out, dumpFlows(ovs, br))
	}
	t.Logf("ping:\n%s", out)

	flows := dumpFlows(ovs, br)
	if !strings.Contains(flows, "cookie=0x70630001") || !strings.Contains(flows, "priority=100") ||
		!strings.Contains(flows, "icmp") || !strings.Contains(flows, "idle_timeout=5") {
		t.Errorf("our reactive flows are missing from %s:\n%s", br, flows)
	}
	if core.Connected() != 1 {
		t.Errorf("Connected = %d, want 1", core.Connected())
	}
	if n := testutil.CollectAndCount(reg, "pseudocong_controller_packet_in_handling_seconds"); n != 1 {
		t.Errorf("handling histogram series = %d", n)
	}
	if got := metricValue(t, reg, "pseudocong_controller_flow_mods_total"); got < 2 {
		t.Errorf("flow_mods_total = %v, want at least one per direction", got)
	}
	checkCapture(t, capture, port, ofptHello, ofptFeaturesRequest, ofptFeaturesReply, ofptSetConfig,
		ofptPacketIn, ofptFlowMod, ofptPacketOut)
}

// TestOVSPingThroughProactiveController: the proactive app pushes a rule
// file on connect; with it the hosts ping, and the rules show in OVS.
func TestOVSPingThroughProactiveController(t *testing.T) {
	testenv.RequireRoot(t)
	rules := filepath.Join(t.TempDir(), "rules.txt")
	const ruleText = `# h1 on port 1, h2 on port 2
priority=200,arp,actions=flood
priority=100,ip,in_port=1,nw_dst=10.0.0.2,actions=output:2
priority=100,ip,in_port=2,nw_dst=10.0.0.1,actions=output:1
priority=0,actions=drop
`
	if err := os.WriteFile(rules, []byte(ruleText), 0o644); err != nil {
		t.Fatal(err)
	}
	flows, err := flowsyntax.ParseFile(rules)
	if err != nil {
		t.Fatal(err)
	}
	ln, port := reserveControllerPort(t)
	capture := testenv.StartTshark(t, "lo", port)
	ovs, br, h1, _ := twoHosts(t, port)
	if out, err := ping(h1, "10.0.0.2"); err == nil {
		t.Fatalf("ping succeeded with no controller in fail-mode secure:\n%s", out)
	}

	app := controller.NewProactive(controller.ProactiveConfig{Flows: flows})
	serveOn(t, ln, app)
	connectAndPurge(t, ovs, br)
	deadline := time.Now().Add(10 * time.Second)
	for app.Installed() < 1 {
		if time.Now().After(deadline) {
			t.Fatal("no barrier reply: rules not confirmed")
		}
		time.Sleep(20 * time.Millisecond)
	}
	out, err := pingEventually(h1, "10.0.0.2", 10*time.Second)
	if err != nil {
		t.Fatalf("ping through proactive rules failed: %v\n%s\nflows:\n%s", err, out, dumpFlows(ovs, br))
	}
	dump := dumpFlows(ovs, br)
	for _, want := range []string{"priority=100,ip,in_port=1,nw_dst=10.0.0.2 actions=output:2", "priority=200,arp actions=FLOOD", "priority=0 actions=drop"} {
		if !strings.Contains(dump, want) {
			t.Errorf("rule %q missing from %s:\n%s", want, br, dump)
		}
	}
	// The catch-all drop keeps h1 from reaching an address no rule forwards.
	if out, err := h1.Exec("ping", "-c", "1", "-W", "1", "10.0.0.3"); err == nil {
		t.Errorf("ping to 10.0.0.3 succeeded:\n%s", out)
	}
	checkCapture(t, capture, port, ofptHello, ofptFeaturesReply, ofptFlowMod, ofptBarrierRequest, ofptBarrierReply)
}

// excusedFrames returns the frames whose only errors are Wireshark 4.0's
// false positive on valid 72-byte FLOW_MODs (no actions: our delete-all,
// a "drop" rule). Malformed is a property of the whole TCP segment, so a
// segment that also carries good messages is flagged as a whole;
// record.Broken excuses only the 72-byte message itself. A frame is
// excused when it has no more "Malformed" expert items than 72-byte
// FLOW_MODs: one exception each, nothing else.
func excusedFrames(recs []testenv.OpenFlowRecord) map[int]bool {
	flowMods72 := map[int]int{}
	malformed := map[int]int{}
	for _, r := range recs {
		if r.Type == ofptFlowMod && r.Length == 72 {
			flowMods72[r.Frame]++
		}
		n := 0
		for _, e := range r.Expert {
			if strings.Contains(e, "Malformed") {
				n++
			}
		}
		malformed[r.Frame] = n // the same list on every record of the frame
	}
	excused := map[int]bool{}
	for frame, n := range malformed {
		if n > 0 && n <= flowMods72[frame] {
			excused[frame] = true
		}
	}
	return excused
}

func dumpFlows(ovs *testenv.OVS, br string) string {
	out, err := ovs.DumpFlows(br)
	if err != nil {
		return "dump-flows: " + err.Error()
	}
	return out
}

func metricValue(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) > 0 {
			m := mf.GetMetric()[0]
			if c := m.GetCounter(); c != nil {
				return c.GetValue()
			}
			if g := m.GetGauge(); g != nil {
				return g.GetValue()
			}
		}
	}
	return 0
}
