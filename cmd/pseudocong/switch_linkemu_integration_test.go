//go:build integration

package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/pseudocong/pseudocong/internal/ready"
	"github.com/pseudocong/pseudocong/internal/testenv"
	"github.com/pseudocong/pseudocong/testbed"
)

// Must-shows for link emulation on the live switch's ports (issue 9):
// a `pseudocong switch` process on a private two-host testbed, hosts'
// TX offload off (testbed.Up does it), traffic from host 1 to host 2, so
// the data leaves the switch on port 2 and that is the port emulated.
// They measure wall-clock rates and delays, so they are TestSerial*: CI
// runs them alone (scripts/test.sh).

// upLinkEmuTestbed brings up a two-host testbed private to the test.
func upLinkEmuTestbed(t testing.TB) *testbed.Topology { return upTestbed(t, "e", 2) }

// upTestbed brings up a testbed of hosts namespace hosts private to the
// test (its name: prefix and random hex), and takes it down at cleanup.
func upTestbed(t testing.TB, prefix string, hosts int) *testbed.Topology {
	t.Helper()
	testenv.RequireRoot(t)
	testenv.RequireCommand(t, "ip", "ping")
	var b [3]byte
	_, _ = rand.Read(b[:])
	name := prefix + hex.EncodeToString(b[:])
	dir := t.TempDir()
	t.Cleanup(func() {
		if err := testbed.Down(name, testbed.DownOptions{StateDir: dir}); err != nil {
			t.Errorf("testbed down: %v", err)
		}
	})
	topo, err := testbed.Up(t.Context(), testbed.Config{Name: name, Hosts: hosts, StateDir: dir})
	if err != nil {
		t.Fatalf("testbed up: %v", err)
	}
	return topo
}

// startEmuSwitch starts `pseudocong switch` in standalone mode on the
// testbed's ports with extra flags, waits until host 1 pings host 2
// through it, and returns its /metrics address. It is stopped at cleanup
// (or by the returned func, for a test that starts another).
func startEmuSwitch(t testing.TB, bin string, topo *testbed.Topology, extra ...string) (string, func()) {
	t.Helper()
	rep, stop := startEmuSwitchReport(t, bin, topo, extra...)
	return rep.Metrics, stop
}

// startEmuSwitchReport is startEmuSwitch returning the whole ready report
// (its management listeners too).
func startEmuSwitchReport(t testing.TB, bin string, topo *testbed.Topology, extra ...string) (ready.Report, func()) {
	t.Helper()
	args := []string{"switch", "--listen", "ptcp:0:127.0.0.1", "--fail-mode", "standalone",
		"--metrics-addr", "127.0.0.1:0", "--log-level", "warn"}
	for _, p := range topo.SwitchPorts() {
		args = append(args, "--port", p)
	}
	d, err := testbed.StartDaemon(testbed.DaemonConfig{Binary: bin, Args: append(args, extra...), Ready: true})
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		if err := d.Stop(5 * time.Second); err != nil {
			t.Errorf("switch stop: %v\n%s", err, d.Output())
		}
	}
	t.Cleanup(stop)
	// Generous: the binary starts and opens its ports on a loaded machine.
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	rep, err := d.WaitReady(ctx)
	if err != nil {
		t.Fatalf("switch ready: %v\n%s", err, d.Output())
	}
	h1, h2 := topo.Hosts[0], topo.Hosts[1]
	// The ports come up (and hosts learn ARP) asynchronously: wait for a
	// ping through, with a deadline of seconds.
	deadline := time.Now().Add(15 * time.Second)
	for {
		out, err := exec.Command("ip", "netns", "exec", h1.Netns, "ping", "-c", "1", "-W", "1", h2.Addr.Addr().String()).CombinedOutput()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no ping through the switch: %v\n%s\nswitch:\n%s", err, out, d.Output())
		}
		time.Sleep(100 * time.Millisecond) // polling, not asserting
	}
	return rep, stop
}

// metricFamilies reads the /metrics of the process serving on addr.
func metricFamilies(t testing.TB, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

// egressCounter reads one pseudocong_port_egress_* counter of iface.
func egressCounter(t *testing.T, addr, name, iface string) float64 {
	t.Helper()
	f, ok := metricFamilies(t, addr)[name]
	if !ok {
		t.Fatalf("no %s in /metrics", name)
	}
	for _, m := range f.GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "iface" && l.GetValue() == iface {
				return m.GetCounter().GetValue()
			}
		}
	}
	t.Fatalf("no %s for iface %s", name, iface)
	return 0
}

// waitListening waits (polling, for at most within) until `ss -Hltn
// FILTER` in namespace ns lists n sockets: iperf3 servers ready.
func waitListening(t testing.TB, ns, filter string, n int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		out, _ := exec.Command("ip", "netns", "exec", ns, "ss", "-Hltn", filter).Output()
		if strings.Count(string(out), "\n") >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d listening sockets (%s) in %s not there within %v:\n%s", n, filter, ns, within, out)
		}
		time.Sleep(50 * time.Millisecond) // polling, not asserting
	}
}

// iperfReceived is a TCP iperf3 client's -J report: the receiver's
// goodput and how long it measured.
func iperfReceived(out []byte) (bitsPerSecond, seconds float64, err error) {
	var r struct {
		End struct {
			SumReceived struct {
				Seconds       float64 `json:"seconds"`
				BitsPerSecond float64 `json:"bits_per_second"`
			} `json:"sum_received"`
		} `json:"end"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		return 0, 0, fmt.Errorf("iperf3 JSON: %w\n%s", err, out)
	}
	return r.End.SumReceived.BitsPerSecond, r.End.SumReceived.Seconds, nil
}

// Frames of a bulk TCP flow on a 1500-byte MTU carry 1448 bytes of
// payload (timestamps on) in 1514 bytes on the wire: what iperf3 reports
// (goodput) is that fraction of what the TBF counts.
const tcpPayloadPerFrame = 1448.0 / 1514.0

// Must-show: iperf3 TCP from host 1 to host 2 through a switch whose
// port 2 has `tbf,rate=20mbit,burst=32kb,latency=50ms` gets 20 Mbit/s of
// frames within 5 % over 6 s (iperf3's receiver goodput, measured after
// a 1 s warm-up it omits, against 20 Mbit/s × 1448/1514), and the TBF's
// own sent-bytes counter agrees.
func TestSerialSwitchPortTBFShapesTCP(t *testing.T) {
	testenv.RequireCommand(t, "iperf3", "ss")
	topo := upLinkEmuTestbed(t)
	bin := testenv.BuildPseudocong(t)
	s2 := topo.SwitchPorts()[1]
	metrics, _ := startEmuSwitch(t, bin, topo, "--port-qdisc", s2+"=tbf,rate=20mbit,burst=32kb,latency=50ms")
	h1, h2 := topo.Hosts[0], topo.Hosts[1]
	ip2 := h2.Addr.Addr().String()

	// The server is in host 2's private namespace: port 5201 is free there.
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	srv := exec.CommandContext(ctx, "ip", "netns", "exec", h2.Netns, "iperf3", "-s", "-1", "-B", ip2, "-p", "5201")
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Process.Kill(); _ = srv.Wait() })
	waitListening(t, h2.Netns, "sport = :5201", 1, 10*time.Second)
	before := egressCounter(t, metrics, "pseudocong_port_egress_sent_bytes_total", s2)
	start := time.Now()
	out, err := exec.CommandContext(ctx, "ip", "netns", "exec", h1.Netns,
		"iperf3", "-c", ip2, "-p", "5201", "-t", "6", "-O", "1", "-J").Output()
	elapsed := time.Since(start)
	if err != nil {
		t.Fatalf("iperf3 client: %v\n%s", err, out)
	}
	after := egressCounter(t, metrics, "pseudocong_port_egress_sent_bytes_total", s2)
	got, secs, err := iperfReceived(out)
	if err != nil {
		t.Fatal(err)
	}
	const rate = 20e6
	want := rate * tcpPayloadPerFrame
	wire := (after - before) * 8 / elapsed.Seconds()
	dropped := egressCounter(t, metrics, "pseudocong_port_egress_dropped_total", s2)
	t.Logf("iperf3 goodput %.3f Mbit/s over %.1f s (%.3f Mbit/s of frames, %+.2f %% off 20 Mbit/s); TBF sent %.3f Mbit/s over the client's %.1f s incl. slow start; %v frames dropped",
		got/1e6, secs, got/tcpPayloadPerFrame/1e6, (got/want-1)*100, wire/1e6, elapsed.Seconds(), dropped)
	if got < want*0.95 || got > want*1.05 {
		t.Errorf("iperf3 goodput %.3f Mbit/s, want %.3f Mbit/s (20 Mbit/s of 1514-byte frames) within 5 %%", got/1e6, want/1e6)
	}
	// The counter's window includes the connection's start and the
	// burst: a looser check that the TBF is what shaped.
	if wire < rate*0.9 || wire > rate*1.05 {
		t.Errorf("TBF sent %.3f Mbit/s, want about 20", wire/1e6)
	}
}

// pingRTTs pings from h1 to h2 n times and returns the RTTs.
func pingRTTs(t *testing.T, ns, addr string, n int) []float64 {
	t.Helper()
	out, err := exec.Command("ip", "netns", "exec", ns, "ping", "-c", strconv.Itoa(n), "-i", "0.05", "-W", "2", addr).CombinedOutput()
	if err != nil {
		t.Fatalf("ping: %v\n%s", err, out)
	}
	var rtts []float64
	for _, m := range regexp.MustCompile(`time=([0-9.]+) ms`).FindAllStringSubmatch(string(out), -1) {
		v, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			t.Fatal(err)
		}
		rtts = append(rtts, v)
	}
	if len(rtts) < n*3/4 {
		t.Fatalf("%d replies of %d:\n%s", len(rtts), n, out)
	}
	return rtts
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// Must-show: `--port-delay <port 2>=15ms` raises the median ping RTT from
// host 1 to host 2 by 15 ms within 1 ms (20 pings each, through the same
// switch binary without and with the delay line; the delay is one way,
// on the echo requests leaving port 2).
func TestSerialSwitchPortDelayLineAddsRTT(t *testing.T) {
	topo := upLinkEmuTestbed(t)
	bin := testenv.BuildPseudocong(t)
	s2 := topo.SwitchPorts()[1]
	h1, h2 := topo.Hosts[0], topo.Hosts[1]
	ip2 := h2.Addr.Addr().String()

	_, stop := startEmuSwitch(t, bin, topo)
	base := pingRTTs(t, h1.Netns, ip2, 20)
	stop()
	metrics, _ := startEmuSwitch(t, bin, topo, "--port-delay", s2+"=15ms")
	delayed := pingRTTs(t, h1.Netns, ip2, 20)
	mb, md := median(base), median(delayed)
	rise := md - mb
	t.Logf("median RTT %.3f ms without, %.3f ms with a 15 ms delay line: +%.3f ms (without %v; with %v)",
		mb, md, rise, fmtRTTs(base), fmtRTTs(delayed))
	if rise < 14 || rise > 16 {
		t.Errorf("RTT rose by %.3f ms, want 15 ± 1 ms", rise)
	}
	if sent := egressCounter(t, metrics, "pseudocong_port_egress_sent_total", s2); sent < 20 {
		t.Errorf("delay line sent %v frames, want at least the 20 echo requests", sent)
	}
}

func fmtRTTs(xs []float64) string {
	var b strings.Builder
	for i, x := range xs {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%.2f", x)
	}
	return b.String()
}
