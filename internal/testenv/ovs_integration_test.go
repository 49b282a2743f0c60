//go:build integration

package testenv

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// OpenFlow 1.0 message types the control channel must show.
const (
	ofptHello           = 0
	ofptFeaturesRequest = 5
	ofptFeaturesReply   = 6
	ofptPacketIn        = 10
	ofptPacketOut       = 13
	ofptFlowMod         = 14
)

// leftovers records what a scenario created, so the parent test can check
// that cleanup removed all of it.
type leftovers struct {
	namespaces []string
	links      []string
	pids       []int
	dirs       []string
}

func TestOVSTestControllerPingAndCapture(t *testing.T) {
	t.Parallel()
	RequireRoot(t)
	RequireCommand(t, "ping", "ethtool", "ip")
	var made leftovers
	t.Run("scenario", func(t *testing.T) { pingThroughTestController(t, &made) })
	assertCleanedUp(t, made)
}

func pingThroughTestController(t *testing.T, made *leftovers) {
	ovs := StartOVS(t, OVSOptions{})
	addr := StartOVSTestController(t)
	_, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	port, _ := strconv.Atoi(portStr)
	capture := StartTshark(t, "lo", port)

	br := ovs.AddBridge("br0", 1)
	// Connect the controller before any host traffic: in fail-mode secure
	// earlier packets would leave stale datapath drop flows.
	ovs.SetController(br, "tcp:"+addr)
	start := time.Now()
	if err := ovs.WaitConnected(br, 15*time.Second); err != nil {
		t.Fatal(err)
	}
	t.Logf("controller connected after %v", time.Since(start).Round(time.Millisecond))

	h1, h2 := NewNetns(t, "h1"), NewNetns(t, "h2")
	v1 := Veth(t, VethOptions{NS: h1, Addr: "10.0.0.1/24", MAC: "02:00:00:00:00:01", HostName: "h1"})
	v2 := Veth(t, VethOptions{NS: h2, Addr: "10.0.0.2/24", MAC: "02:00:00:00:00:02", HostName: "h2"})
	ovs.AddPort(br, v1.Host, 1)
	ovs.AddPort(br, v2.Host, 2)
	for _, v := range []*VethPair{v1, v2} {
		if got, err := ovs.OFPort(v.Host); err != nil || got < 1 {
			t.Fatalf("ofport of %s = %d, %v", v.Host, got, err)
		}
	}
	if got := v1.MAC.String(); got != "02:00:00:00:00:01" {
		t.Errorf("h1 MAC = %s, want 02:00:00:00:00:01", got)
	}
	offload, err := h1.Exec("ethtool", "-k", v1.NSIf)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(offload, "tx-checksumming: off") {
		t.Errorf("tx checksum offload still on in %s:\n%s", h1.Name, offload)
	}

	made.namespaces = []string{h1.Name, h2.Name}
	made.links = []string{br, v1.Host, v2.Host}
	made.dirs = []string{ovs.Dir, filepath.Dir(capture.File)}
	for _, pidfile := range []string{"ovs-vswitchd.pid", "ovsdb-server.pid"} {
		pid, err := readPidfile(filepath.Join(ovs.Dir, pidfile))
		if err != nil {
			t.Fatal(err)
		}
		made.pids = append(made.pids, pid)
	}

	start = time.Now()
	out, err := h1.Exec("ping", "-c", "3", "-i", "0.2", "-W", "2", v2.IP.String())
	if err != nil {
		t.Fatalf("ping h1 -> h2 through OVS + ovs-testcontroller failed: %v", err)
	}
	t.Logf("ping took %v:\n%s", time.Since(start).Round(time.Millisecond), out)

	// TCP needs TX checksum offload off on the namespace ends (Veth's
	// default); with it on, every connection through the userspace
	// datapath times out.
	bps := tcpThroughput(t, h1, h2, v2.IP.String())
	t.Logf("iperf3 h1 -> h2 TCP through the netdev bridge: %.2f Gb/s", bps/1e9)
	if bps < 10e6 {
		t.Errorf("TCP throughput %.0f b/s: the path is broken", bps)
	}

	// The controller, not a default rule, must have made forwarding work:
	// ovs-testcontroller installs exact-match flows (priority 65535).
	flows, err := ovs.DumpFlows(br)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(flows, "priority=65535") || !strings.Contains(flows, "actions=output:") {
		t.Errorf("no controller-installed flows on %s:\n%s", br, flows)
	}

	if err := capture.Stop(); err != nil {
		t.Fatal(err)
	}
	recs := DecodeOpenFlow(t, capture.File, port)
	seen := map[int]int{}
	for _, r := range recs {
		seen[r.Type]++
		if r.Version != 1 {
			t.Errorf("frame %d: version %d in an OpenFlow 1.0 channel", r.Frame, r.Version)
		}
		if r.Broken() {
			t.Errorf("frame %d: type %d length %d malformed=%v severity %#x %v",
				r.Frame, r.Type, r.Length, r.Malformed, r.MaxSeverity, r.Expert)
		}
	}
	t.Logf("%d OpenFlow 1.0 messages by type: %v", len(recs), seen)
	for _, want := range []int{ofptHello, ofptFeaturesRequest, ofptFeaturesReply, ofptPacketIn, ofptFlowMod} {
		if seen[want] == 0 {
			t.Errorf("no message of type %d in capture (types seen %v)", want, seen)
		}
	}
	if seen[ofptHello] < 2 {
		t.Errorf("want a HELLO from each side, got %d", seen[ofptHello])
	}
	if n := UndecodedOpenFlowBytes(t, capture.File, port); n != 0 {
		t.Errorf("%d bytes of the control channel were not decoded as OpenFlow 1.0", n)
	}
}

// tcpThroughput runs a 1 s iperf3 test from client to server and returns
// the receiver's bits per second.
func tcpThroughput(t *testing.T, client, server *Netns, serverIP string) float64 {
	t.Helper()
	RequireCommand(t, "iperf3")
	server.Start("iperf3", "-s", "-B", serverIP, "-p", "5201")
	if err := poll(10*time.Second, 50*time.Millisecond, func() error {
		out, err := server.Exec("ss", "-Hltn", "sport = :5201")
		if err == nil && out == "" {
			err = fmt.Errorf("iperf3 not listening yet")
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	out, err := client.Exec("iperf3", "-c", serverIP, "-p", "5201", "-t", "1", "-J")
	if err != nil {
		t.Fatalf("iperf3: %v", err)
	}
	var res struct {
		End struct {
			SumReceived struct {
				BitsPerSecond float64 `json:"bits_per_second"`
			} `json:"sum_received"`
		} `json:"end"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("iperf3 JSON: %v\n%s", err, out)
	}
	return res.End.SumReceived.BitsPerSecond
}

// assertCleanedUp checks that nothing the scenario created survived it.
func assertCleanedUp(t *testing.T, made leftovers) {
	t.Helper()
	if len(made.namespaces) == 0 {
		t.Fatal("scenario recorded nothing; it failed before creating its peers")
	}
	nsList, err := run(nil, "ip", "netns", "list")
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range made.namespaces {
		if strings.Contains(nsList, ns) {
			t.Errorf("namespace %s survived cleanup", ns)
		}
	}
	for _, l := range made.links {
		if interfaceExists(l) {
			t.Errorf("interface %s survived cleanup", l)
		}
	}
	for _, pid := range made.pids {
		if alive(pid) {
			t.Errorf("daemon pid %d survived cleanup", pid)
		}
	}
	for _, d := range made.dirs {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("directory %s survived cleanup (%v)", d, err)
		}
	}
}

func TestPrometheusScrapesLoopbackEndpoint(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	gauge := prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: "pseudocong", Subsystem: "testenv", Name: "answer",
		Help: "A constant the test reads back through Prometheus.",
	})
	reg.MustRegister(gauge)
	gauge.Set(42)
	live := ServeMetrics(t, reg)
	// A port nobody listens on: its up must be 0, proving up=1 is earned.
	dead := net.JoinHostPort("127.0.0.1", strconv.Itoa(ReservePort(t)))

	start := time.Now()
	p := StartPrometheus(t, ScrapeConfig("testenv", time.Second, live, dead))
	t.Logf("prometheus ready after %v at %s", time.Since(start).Round(time.Millisecond), p.URL)

	upOf := func(s []Sample, instance string) (float64, bool) {
		for _, x := range s {
			if x.Metric["instance"] == instance && x.Metric["job"] == "testenv" {
				return x.Value, true
			}
		}
		return 0, false
	}
	up, err := p.WaitQuery("up", 30*time.Second, func(s []Sample) bool {
		_, okLive := upOf(s, live)
		_, okDead := upOf(s, dead)
		return okLive && okDead
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("first up samples after %v", time.Since(start).Round(time.Millisecond))
	if v, _ := upOf(up, live); v != 1 {
		t.Errorf("up{instance=%q} = %v, want 1", live, v)
	}
	if v, _ := upOf(up, dead); v != 0 {
		t.Errorf("up{instance=%q} = %v, want 0", dead, v)
	}

	answer, err := p.WaitQuery("pseudocong_testenv_answer", 15*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(answer) != 1 || answer[0].Value != 42 {
		t.Errorf("pseudocong_testenv_answer = %+v, want one sample of 42", answer)
	}

	if _, err := p.Query("up{"); err == nil {
		t.Error("a malformed query returned no error")
	}
}

// TestOfctlQueriesSwitchOverTCP is the pattern for testing our own switch
// with ovs-ofctl as the client: here OVS plays the switch, listening on a
// loopback port, and the package-level Ofctl (no OVS environment) talks to it.
func TestOfctlQueriesSwitchOverTCP(t *testing.T) {
	t.Parallel()
	ovs := StartOVS(t, OVSOptions{VerboseLog: true})
	br := ovs.AddBridge("sw", 0x2a)
	port := ReservePort(t)
	if _, err := ovs.Vsctl("set-controller", br, "ptcp:"+strconv.Itoa(port)+":127.0.0.1"); err != nil {
		t.Fatal(err)
	}
	target := "tcp:127.0.0.1:" + strconv.Itoa(port)
	var show string
	err := poll(10*time.Second, 100*time.Millisecond, func() error {
		var err error
		show, err = Ofctl("-O", "OpenFlow10", "show", target)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(show, "dpid:000000000000002a") {
		t.Errorf("ovs-ofctl show: want dpid 2a, got:\n%s", show)
	}
	if _, err := Ofctl("-O", "OpenFlow10", "add-flow", target, "priority=7,in_port=1,actions=drop"); err != nil {
		t.Fatal(err)
	}
	flows, err := Ofctl("-O", "OpenFlow10", "dump-flows", target)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(flows, "priority=7,in_port=1 actions=drop") {
		t.Errorf("flow added over TCP not listed:\n%s", flows)
	}
	// VerboseLog: vswitchd logs every OpenFlow message it receives.
	if log := tailFile(filepath.Join(ovs.Dir, "ovs-vswitchd.log"), 1000); !strings.Contains(log, "OFPT_FLOW_MOD") {
		t.Errorf("VerboseLog: no OFPT_FLOW_MOD in the vswitchd log:\n%s", log)
	}
	if _, err := Ofctl("-O", "OpenFlow10", "show", "tcp:127.0.0.1:1"); err == nil {
		t.Error("ovs-ofctl against a closed port reported success")
	}
}

// TestNetnsDoEntersAndLeaves checks that Do runs Go code inside the
// namespace (a socket opened there stays there) and restores the thread.
func TestNetnsDoEntersAndLeaves(t *testing.T) {
	t.Parallel()
	ns := NewNetns(t, "do")
	v := Veth(t, VethOptions{NS: ns, NSIfName: "probe0", Addr: "10.9.0.1/24"})
	var l net.Listener
	err := ns.Do(func() error {
		if _, err := net.InterfaceByName("probe0"); err != nil {
			return fmt.Errorf("inside: %w", err)
		}
		if _, err := net.InterfaceByName(v.Host); err == nil {
			return fmt.Errorf("inside: host end %s visible", v.Host)
		}
		var err error
		l, err = net.Listen("tcp", "10.9.0.1:0")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, err := net.InterfaceByName("probe0"); err == nil {
		t.Error("after Do: probe0 visible in the root namespace")
	}
	if !interfaceExists(v.Host) {
		t.Errorf("after Do: host end %s not visible", v.Host)
	}
	port := l.Addr().(*net.TCPAddr).Port
	out, err := ns.Exec("ss", "-Hltn", fmt.Sprintf("sport = :%d", port))
	if err != nil || !strings.Contains(out, "10.9.0.1:"+strconv.Itoa(port)) {
		t.Errorf("listener opened in Do not in %s: %q %v", ns.Name, out, err)
	}
}

// TestDecodeOpenFlowFlagsBrokenStreams proves the capture oracle can fail:
// a FEATURES_REPLY cut to its header is reported Broken, and a message
// whose length field overstates its size hides the rest of the stream
// from the dissector, which UndecodedOpenFlowBytes exposes.
func TestDecodeOpenFlowFlagsBrokenStreams(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	capture := StartTshark(t, "lo", port)

	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if peer, ok := <-accepted; ok {
		defer peer.Close()
	}
	writes := [][]byte{
		{1, 0, 0, 8, 0, 0, 0, 1},                   // HELLO xid 1: fine
		{1, 6, 0, 8, 0, 0, 0, 2},                   // FEATURES_REPLY without its body
		{1, 2, 0, 64, 0, 0, 0, 3, 0xde, 0xad},      // ECHO_REQUEST claiming 64 bytes, sending 10
		{1, 0, 0, 8, 0, 0, 0, 4, 1, 0, 0, 8, 0, 0}, // more bytes swallowed by reassembly
	}
	for _, w := range writes {
		if _, err := c.Write(w); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond) // one segment per write
	}
	if err := capture.Stop(); err != nil {
		t.Fatal(err)
	}

	recs := DecodeOpenFlow(t, capture.File, port)
	var broken, hello int
	for _, r := range recs {
		if r.Broken() {
			broken++
			if r.Type != ofptFeaturesReply {
				t.Errorf("unexpected broken message %+v", r)
			}
		}
		if r.Type == ofptHello && r.XID == 1 && !r.Broken() {
			hello++
		}
	}
	if broken != 1 || hello != 1 {
		t.Errorf("want the clean HELLO and one broken FEATURES_REPLY, got %+v", recs)
	}
	sent := 0
	for _, w := range writes {
		sent += len(w)
	}
	// Decoded: HELLO 8 + FEATURES_REPLY 8; the rest is stuck in reassembly.
	if got, want := UndecodedOpenFlowBytes(t, capture.File, port), sent-16; got != want {
		t.Errorf("UndecodedOpenFlowBytes = %d, want %d", got, want)
	}
}
