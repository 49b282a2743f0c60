//go:build integration

package live_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/internal/testenv"
	"github.com/pseudocong/pseudocong/openflow"
	"github.com/pseudocong/pseudocong/testbed"
)

// forwardingRates is one switch's forwarding between two namespace hosts.
type forwardingRates struct {
	tcpMbps float64 // iperf3 TCP, received
	udpKpps float64 // iperf3 UDP, 64-byte payloads, unlimited rate, received
	udpLoss float64 // share of those datagrams lost
}

// measureForwarding runs iperf3 from host 1 to host 2: TCP throughput,
// then a 64-byte UDP flood, each for d.
func measureForwarding(tb testing.TB, topo *testbed.Topology, d time.Duration) forwardingRates {
	tb.Helper()
	h1, h2 := topo.Hosts[0], topo.Hosts[1]
	dst := h2.Addr.Addr().String()
	// iperf3's own port: the server listens inside h2's namespace, which
	// this test created, so nothing else can hold it.
	const port = "5201"
	server := exec.Command("ip", "netns", "exec", h2.Netns, "iperf3", "-s", "-B", dst, "-p", port)
	if err := server.Start(); err != nil {
		tb.Fatalf("iperf3 server: %v", err)
	}
	defer func() { _ = server.Process.Kill(); _ = server.Wait() }()

	client := func(args ...string) map[string]any {
		tb.Helper()
		base := []string{"netns", "exec", h1.Netns, "iperf3", "-c", dst, "-p", port, "-J", "-t", fmt.Sprint(int(d.Seconds()))}
		var r map[string]any
		var last string
		for attempt := 0; attempt < 30; attempt++ { // the server needs a moment to listen
			out, err := exec.Command("ip", append(base, args...)...).Output()
			r = nil
			if jerr := json.Unmarshal(out, &r); jerr != nil {
				last = fmt.Sprintf("%v, json %v: %s", err, jerr, out)
			} else if msg, bad := r["error"]; bad {
				last = fmt.Sprint(msg)
			} else if err != nil {
				last = err.Error()
			} else {
				return r
			}
			time.Sleep(100 * time.Millisecond)
		}
		tb.Fatalf("iperf3 %v: %s", args, last)
		return r
	}
	num := func(r map[string]any, path ...string) float64 {
		var v any = r
		for _, p := range path {
			m, ok := v.(map[string]any)
			if !ok {
				break
			}
			v = m[p]
		}
		f, ok := v.(float64)
		if !ok {
			end, _ := json.Marshal(r["end"])
			tb.Fatalf("iperf3 json: %v = %v (error %v; end %s)", path, v, r["error"], end)
		}
		return f
	}
	var fr forwardingRates
	tcp := client()
	fr.tcpMbps = num(tcp, "end", "sum_received", "bits_per_second") / 1e6
	udp := client("-u", "-l", "64", "-b", "0")
	pkts, lost, secs := num(udp, "end", "sum", "packets"), num(udp, "end", "sum", "lost_packets"), num(udp, "end", "sum", "seconds")
	if secs > 0 {
		fr.udpKpps = (pkts - lost) / secs / 1e3
	}
	if pkts > 0 {
		fr.udpLoss = lost / pkts
	}
	return fr
}

// installForwarding pushes in_port=1 → 2 and 2 → 1 into our switch
// through its passive listener (the proactive case: no Packet-In ever).
func installForwarding(tb testing.TB, mgmt string) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var nc interface{ Close() error }
	var c *openflow.Conn
	for attempt := 0; ; attempt++ {
		conn, err := openflow.Dial(ctx, "tcp:"+mgmt, nil)
		if err == nil {
			nc = conn
			c = openflow.NewConn(conn, openflow.ConnConfig{})
			break
		}
		if attempt > 50 {
			tb.Fatalf("dial switch %s: %v", mgmt, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	defer nc.Close()
	defer c.Close()
	if err := c.Handshake(ctx); err != nil {
		tb.Fatal(err)
	}
	for _, p := range [][2]uint16{{1, 2}, {2, 1}} {
		fm := &openflow.FlowMod{
			Match:   openflow.Match{Wildcards: openflow.WildcardAll &^ openflow.WildcardInPort, InPort: p[0]},
			Command: openflow.FlowModAdd, Priority: 100, BufferID: openflow.NoBuffer, OutPort: openflow.PortNone,
			Actions: []openflow.Action{openflow.ActionOutput{Port: p[1]}},
		}
		if err := c.SendContext(ctx, fm); err != nil {
			tb.Fatal(err)
		}
	}
	if err := c.Barrier(ctx); err != nil {
		tb.Fatal(err)
	}
}

// ourSwitchRates measures our switch (AF_PACKET ports on the testbed's
// veths) with the given profile argument.
func ourSwitchRates(tb testing.TB, bin string, topo *testbed.Topology, profileArg string, d time.Duration) forwardingRates {
	tb.Helper()
	args := []string{"switch", "--profile", profileArg, "--listen", "ptcp:0:127.0.0.1"}
	for _, p := range topo.SwitchPorts() {
		args = append(args, "--port", p)
	}
	sw, err := testbed.StartDaemon(testbed.DaemonConfig{Binary: bin, Args: args, Ready: true})
	if err != nil {
		tb.Fatal(err)
	}
	defer func() {
		if err := sw.Stop(5 * time.Second); err != nil {
			tb.Errorf("stop switch: %v\n%s", err, sw.Output())
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // seconds: a busy machine starts processes slowly
	rep, err := sw.WaitReady(ctx)
	cancel()
	if err != nil {
		tb.Fatalf("switch did not come up: %v\n%s", err, sw.Output())
	}
	installForwarding(tb, rep.Listen[0])
	return measureForwarding(tb, topo, d)
}

// ovsRates measures Open vSwitch's userspace (netdev) datapath on the same
// veths, with the same two rules.
func ovsRates(tb testing.TB, topo *testbed.Topology, d time.Duration) forwardingRates {
	tb.Helper()
	o := testenv.StartOVS(tb, testenv.OVSOptions{})
	br := o.AddBridge("fwd", 1)
	for i, p := range topo.SwitchPorts() {
		o.AddPort(br, p, i+1)
	}
	for _, f := range []string{"in_port=1,actions=output:2", "in_port=2,actions=output:1"} {
		if _, err := o.Ofctl("add-flow", br, f); err != nil {
			tb.Fatalf("add-flow %s: %v", f, err)
		}
	}
	r := measureForwarding(tb, topo, d)
	if _, err := o.Vsctl("del-br", br); err != nil { // frees the veths at once
		tb.Errorf("del-br: %v", err)
	}
	return r
}

var (
	forwardingOnce   sync.Once
	forwardingResult map[string]forwardingRates
)

// BenchmarkForwardingVsOVS: our software switch against Open vSwitch's
// userspace datapath, on the same veth pairs between two namespace hosts,
// in the same run: iperf3 TCP throughput and 64-byte UDP packets per
// second received. "ours-ideal" is the ideal profile (its modelled 50 µs
// hit delay included); "ours-nodelay" the same with hit_delay 0, the raw
// AF_PACKET forwarding path. The measurement runs once per process
// (b.N does not apply: each figure is a few seconds of iperf3).
func BenchmarkForwardingVsOVS(b *testing.B) {
	testenv.RequireRoot(b)
	testenv.RequireCommand(b, "iperf3", "ip")
	forwardingOnce.Do(func() { forwardingResult = measureAllForwarding(b) })
	if forwardingResult == nil {
		b.Fatal("measurement failed")
	}
	for _, name := range []string{"ours-ideal", "ours-nodelay", "ovs-netdev"} {
		r := forwardingResult[name]
		b.ReportMetric(r.tcpMbps, name+"-tcp-Mbit/s")
		b.ReportMetric(r.udpKpps, name+"-udp64-kpps")
	}
	b.ReportMetric(0, "ns/op")
}

func measureAllForwarding(tb testing.TB) map[string]forwardingRates {
	bin := testenv.BuildPseudocong(tb)
	var nb [3]byte
	_, _ = rand.Read(nb[:])
	name := "fw" + hex.EncodeToString(nb[:])
	stateDir := tb.TempDir()
	topo, err := testbed.Up(context.Background(), testbed.Config{Name: name, Hosts: 2, StateDir: stateDir})
	if err != nil {
		tb.Fatal(err)
	}
	defer func() {
		if err := testbed.Down(name, testbed.DownOptions{StateDir: stateDir}); err != nil {
			tb.Errorf("testbed down: %v", err)
		}
	}()
	ideal, err := os.ReadFile(filepath.Join(repoRoot(), "profiles", "ideal.yaml"))
	if err != nil {
		tb.Fatal(err)
	}
	nodelay := strings.Replace(strings.Replace(string(ideal), "hit_delay: 50us", "hit_delay: 0s", 1), "name: ideal", "name: ideal-nodelay", 1)
	if nodelay == string(ideal) {
		tb.Fatal("profiles/ideal.yaml: no hit_delay: 50us to zero")
	}
	nodelayPath := filepath.Join(tb.TempDir(), "ideal-nodelay.yaml")
	if err := os.WriteFile(nodelayPath, []byte(nodelay), 0o644); err != nil {
		tb.Fatal(err)
	}
	const d = 3 * time.Second
	out := map[string]forwardingRates{
		"ours-ideal":   ourSwitchRates(tb, bin, topo, "ideal", d),
		"ours-nodelay": ourSwitchRates(tb, bin, topo, nodelayPath, d),
		"ovs-netdev":   ovsRates(tb, topo, d),
	}
	for _, n := range []string{"ours-ideal", "ours-nodelay", "ovs-netdev"} {
		r := out[n]
		if tl, ok := tb.(interface{ Logf(string, ...any) }); ok {
			tl.Logf("%-13s TCP %8.1f Mbit/s   UDP 64 B %7.1f kpps received (%.1f %% lost)", n, r.tcpMbps, r.udpKpps, 100*r.udpLoss)
		}
	}
	return out
}

// TestSerialForwardingVsOVS runs the same comparison as a test (so `go test
// -tags integration` checks it, not only make bench): both switches must
// forward TCP and small packets at a real rate, and the table is logged.
func TestSerialForwardingVsOVS(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.RequireCommand(t, "iperf3", "ip")
	forwardingOnce.Do(func() { forwardingResult = measureAllForwarding(t) })
	for name, r := range forwardingResult {
		if r.tcpMbps < 10 || r.udpKpps < 1 {
			t.Errorf("%s forwards only %.1f Mbit/s TCP, %.2f kpps UDP", name, r.tcpMbps, r.udpKpps)
		}
	}
	if len(forwardingResult) != 3 {
		t.Errorf("measured %d switches, want 3", len(forwardingResult))
	}
}
