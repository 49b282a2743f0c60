//go:build integration

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/internal/nstat"
	"github.com/pseudocong/pseudocong/internal/testenv"
	"github.com/pseudocong/pseudocong/testbed"
)

// The live vCC experiment (issue 12, cell (a) with 10 senders, half and
// half): 11 namespace hosts with real Linux TCP through a `pseudocong
// switch` process. Hosts 1–5 are ECN tenants (net.ipv4.tcp_ecn=1, Reno),
// hosts 6–10 non-ECN tenants (tcp_ecn=0, Reno), host 11 the receiver
// (tcp_ecn=1). The switch's port to host 11 is the bottleneck: an
// emulated line rate with RED marking ECN (the vCC experiments' first
// setting: limit 1 000 000 B, min 90 000 B, max 90 001 B, probability 1)
// and a one-way delay line so that windows are several segments. Every
// sender runs one iperf3 client to its own iperf3 server on host 11, all
// at once. The same run measures the switch without vCC and with vCC on
// the ten tenant ports (the ECN tenants' flows pass untouched), so the
// comparison shares the machine's load of the moment.
//
// The sysctls are per network namespace and go with the namespaces; the
// root namespace is not changed. Knobs (environment, for re-measuring):
// PSEUDOCONG_VCC_SECONDS (default 15), PSEUDOCONG_VCC_RATE (default
// 50mbit), PSEUDOCONG_VCC_DELAY (default 5ms), PSEUDOCONG_VCC_RED (the
// qdisc spec, default below), PSEUDOCONG_VCC_ROUNDS (default 2: the
// ratios are averaged over rounds, each round measuring without then
// with vCC), PSEUDOCONG_VCC_REACT (rtt or window, --vcc-react),
// PSEUDOCONG_VCC_SS (non-empty: log `ss -tin` of one flow per class three
// times during each cell, for diagnosis).

const (
	vccSenders     = 10
	vccDefaultRED  = "red,limit=1000000,min=90000,max=90001,probability=1.0,avpkt=1000,ecn"
	vccDefaultRate = "50mbit"
)

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// vccRun is one measurement: per-sender receiver goodput in bit/s, and
// the senders' retransmitted segments and RTO timeouts per class.
type vccRun struct {
	ecn, nonECN       []float64
	retrans, timeouts [2]float64 // [ECN, non-ECN]
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// ratio is the mean per-flow throughput of the non-ECN class over the
// ECN class (the throughput_ratio_nonecn_over_ecn).
func (r vccRun) ratio() float64 { return mean(r.nonECN) / mean(r.ecn) }

// jain is Jain's fairness index over all flows.
func (r vccRun) jain() float64 {
	all := append(append([]float64(nil), r.ecn...), r.nonECN...)
	s, s2 := 0.0, 0.0
	for _, x := range all {
		s += x
		s2 += x * x
	}
	return s * s / (float64(len(all)) * s2)
}

func (r vccRun) String() string {
	return fmt.Sprintf("ECN class %.2f Mbit/s per flow %v, non-ECN class %.2f Mbit/s per flow %v, ratio %.3f, Jain %.3f; retransmitted segments ECN %v non-ECN %v, RTOs ECN %v non-ECN %v",
		mean(r.ecn)/1e6, mbits(r.ecn), mean(r.nonECN)/1e6, mbits(r.nonECN), r.ratio(), r.jain(),
		r.retrans[0], r.retrans[1], r.timeouts[0], r.timeouts[1])
}

func mbits(xs []float64) string {
	var b strings.Builder
	for i, x := range xs {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%.1f", x/1e6)
	}
	return "[" + b.String() + "]"
}

// nsExec runs a command in a namespace and fails the test on error.
func nsExec(t *testing.T, ns string, args ...string) string {
	t.Helper()
	out, err := exec.Command("ip", append([]string{"netns", "exec", ns}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("ip netns exec %s %s: %v\n%s", ns, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// Must-show (live): with vCC on the tenant ports the non-ECN class's share
// of the bottleneck rises toward fair; without vCC it falls below fair.
func TestSerialVCCLiveFairness(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.RequireCommand(t, "ip", "ping", "iperf3", "ss", "sysctl")
	seconds, err := strconv.Atoi(envOr("PSEUDOCONG_VCC_SECONDS", "15"))
	if err != nil || seconds < 3 {
		t.Fatalf("PSEUDOCONG_VCC_SECONDS %q: want an integer >= 3", os.Getenv("PSEUDOCONG_VCC_SECONDS"))
	}
	rounds, err := strconv.Atoi(envOr("PSEUDOCONG_VCC_ROUNDS", "2"))
	if err != nil || rounds < 1 {
		t.Fatalf("PSEUDOCONG_VCC_ROUNDS %q: want an integer >= 1", os.Getenv("PSEUDOCONG_VCC_ROUNDS"))
	}
	rate, delay, red := envOr("PSEUDOCONG_VCC_RATE", vccDefaultRate), envOr("PSEUDOCONG_VCC_DELAY", "5ms"), envOr("PSEUDOCONG_VCC_RED", vccDefaultRED)

	topo := upTestbed(t, "v", vccSenders+1)
	for i, h := range topo.Hosts {
		ecn := "1"
		if i >= vccSenders/2 && i < vccSenders {
			ecn = "0"
		}
		nsExec(t, h.Netns, "sysctl", "-q", "-w", "net.ipv4.tcp_ecn="+ecn, "net.ipv4.tcp_congestion_control=reno")
	}
	bin := testenv.BuildPseudocong(t)
	ports := topo.SwitchPorts()
	bottleneck := ports[vccSenders]
	emu := []string{"--port-rate", bottleneck + "=" + rate, "--port-qdisc", bottleneck + "=" + red, "--port-delay", bottleneck + "=" + delay}
	vccFlags := []string{"--vcc-port", strings.Join(ports[:vccSenders], ","), "--vcc-react", envOr("PSEUDOCONG_VCC_REACT", "rtt")}

	var without, with []vccRun
	for round := range rounds {
		for _, on := range []bool{false, true} {
			args := emu
			if on {
				args = append(append([]string(nil), emu...), vccFlags...)
			}
			metrics, stop := startEmuSwitch(t, bin, topo, args...)
			r := runVCCCell(t, topo, seconds)
			if on {
				t.Logf("round %d with vCC: %v; vCC counters: %s", round+1, r, vccCounters(t, metrics))
				with = append(with, r)
			} else {
				t.Logf("round %d without vCC: %v", round+1, r)
				without = append(without, r)
			}
			stop()
		}
	}
	rw, rv := meanRatio(without), meanRatio(with)
	t.Logf("SUMMARY vcc.live.a.n10_e5.throughput_ratio_nonecn_over_ecn.without=%.3f .with=%.3f; jain.without=%.3f .with=%.3f (bottleneck %s, %s, delay %s, %d s, %d round(s))",
		rw, rv, meanJain(without), meanJain(with), rate, red, delay, seconds, rounds)
	// Without vCC the non-ECN class gets less than its share; with vCC
	// its share rises clearly. (Measured here it overshoots fair — the
	// vECN class ends above the ECN class, docs/vcc.md — so "toward
	// fair" is checked as a rise and a bound, not as nearness to 1.)
	// The bounds are the claims themselves, with room for a busy CI
	// machine: single rounds measured 0.79-0.97 without and 1.05-1.36
	// with vCC (2-round means 0.79/0.91 without, 1.25/1.16 with), so a
	// mean below 1 and a rise of 0.1 hold with margin; a tighter
	// "without" bound (0.95) was crossed by single rounds.
	if rw >= 1 {
		t.Errorf("without vCC the non-ECN/ECN ratio is %.3f: want below fair (< 1)", rw)
	}
	if rv < rw+0.1 || rv > 2 {
		t.Errorf("with vCC the ratio is %.3f (without %.3f): want a rise of at least 0.1, and below 2", rv, rw)
	}
}

func meanRatio(rs []vccRun) float64 {
	s := 0.0
	for _, r := range rs {
		s += r.ratio()
	}
	return s / float64(len(rs))
}

func meanJain(rs []vccRun) float64 {
	s := 0.0
	for _, r := range rs {
		s += r.jain()
	}
	return s / float64(len(rs))
}

// runVCCCell runs one iperf3 client per sender to its own server on the
// receiver, all at once, for seconds (the first 2 omitted), and returns
// the receivers' goodput.
func runVCCCell(t *testing.T, topo *testbed.Topology, seconds int) vccRun {
	t.Helper()
	recv := topo.Hosts[vccSenders]
	ip := recv.Addr.Addr().String()
	ctx, cancel := context.WithTimeout(t.Context(), time.Duration(seconds+60)*time.Second)
	defer cancel()
	var servers []*exec.Cmd
	defer func() {
		for _, s := range servers {
			_ = s.Process.Kill()
			_ = s.Wait()
		}
	}()
	for i := range vccSenders {
		port := strconv.Itoa(5201 + i)
		srv := exec.CommandContext(ctx, "ip", "netns", "exec", recv.Netns, "iperf3", "-s", "-1", "-B", ip, "-p", port)
		if err := srv.Start(); err != nil {
			t.Fatal(err)
		}
		servers = append(servers, srv)
	}
	waitListening(t, recv.Netns, "sport >= :5201 and sport <= :5210", vccSenders, 15*time.Second)
	// Every sender reaches the receiver before the clock starts (ARP
	// learned, switch ports up).
	for _, h := range topo.Hosts[:vccSenders] {
		nsExec(t, h.Netns, "ping", "-c", "1", "-W", "2", ip)
	}
	before := tcpCounters(t, topo)
	res := make([]float64, vccSenders)
	errs := make([]error, vccSenders)
	var wg sync.WaitGroup
	for i, h := range topo.Hosts[:vccSenders] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := exec.CommandContext(ctx, "ip", "netns", "exec", h.Netns, "iperf3", "-c", ip, "-p", strconv.Itoa(5201+i),
				"-t", strconv.Itoa(seconds), "-O", "2", "-C", "reno", "-J").Output()
			if err != nil {
				errs[i] = fmt.Errorf("iperf3 client on %s: %v\n%s", h.Netns, err, out)
				return
			}
			if res[i], _, err = iperfReceived(out); err != nil {
				errs[i] = fmt.Errorf("%s: %w", h.Netns, err)
			}
		}()
	}
	if os.Getenv("PSEUDOCONG_VCC_SS") != "" {
		// Diagnostics: the kernel's view of one flow per class, sampled.
		for range 3 {
			time.Sleep(time.Duration(seconds) * time.Second / 4) // sampling, not synchronisation
			for _, h := range []testbed.Host{topo.Hosts[0], topo.Hosts[vccSenders-1]} {
				out, _ := exec.Command("ip", "netns", "exec", h.Netns, "ss", "-tin", "dst", ip).Output()
				t.Logf("ss %s:\n%s", h.Netns, out)
			}
		}
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	r := vccRun{ecn: res[:vccSenders/2], nonECN: res[vccSenders/2:]}
	after := tcpCounters(t, topo)
	for i := range vccSenders {
		c := i * 2 / vccSenders
		r.retrans[c] += after[i][0] - before[i][0]
		r.timeouts[c] += after[i][1] - before[i][1]
	}
	return r
}

// tcpCounters reads each sender's TcpRetransSegs and TcpExtTCPTimeouts
// (absolute, since its namespace was made).
func tcpCounters(t *testing.T, topo *testbed.Topology) [][2]float64 {
	t.Helper()
	out := make([][2]float64, vccSenders)
	for i, h := range topo.Hosts[:vccSenders] {
		c, err := nstat.Read(t.Context(), h.Netns, "TcpRetransSegs", "TcpExtTCPTimeouts")
		if err != nil {
			t.Fatal(err)
		}
		out[i] = [2]float64{float64(c["TcpRetransSegs"]), float64(c["TcpExtTCPTimeouts"])}
	}
	return out
}

// vccCounters summarises the switch's pseudocong_vcc_* counters.
func vccCounters(t *testing.T, addr string) string {
	t.Helper()
	var parts []string
	for _, n := range []string{"translated_syns_total", "ect_marked_total", "ece_seen_total", "window_reductions_total", "window_rewrites_total"} {
		parts = append(parts, fmt.Sprintf("%s=%v", n, scalarMetric(t, addr, "pseudocong_vcc_"+n)))
	}
	return strings.Join(parts, " ")
}

// scalarMetric sums every series of one metric family on /metrics.
func scalarMetric(t *testing.T, addr, name string) float64 {
	t.Helper()
	s := 0.0
	for _, m := range metricFamilies(t, addr)[name].GetMetric() {
		s += m.GetCounter().GetValue() + m.GetGauge().GetValue()
	}
	return s
}
