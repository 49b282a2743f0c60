//go:build integration

package main

import (
	"context"
	"encoding/json"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/internal/testenv"
	"github.com/pseudocong/pseudocong/testbed"
)

// udpReceived runs an iperf3 UDP test from host 1 to a one-off server on
// host 2 at port, offering rate bit/s of len-byte datagrams for secs
// seconds, and returns the rate the server received (payload bits/s).
func udpReceived(t testing.TB, topo *testbed.Topology, port int, rate string, length, secs int) float64 {
	t.Helper()
	bps, _ := udpReceivedRates(t, topo, port, rate, length, secs)
	return bps
}

// udpReceivedRates is udpReceived returning datagrams/s received too.
func udpReceivedRates(t testing.TB, topo *testbed.Topology, port int, rate string, length, secs int) (float64, float64) {
	t.Helper()
	h1, h2 := topo.Hosts[0], topo.Hosts[1]
	ip2 := h2.Addr.Addr().String()
	ctx, cancel := context.WithTimeout(t.Context(), time.Duration(secs+30)*time.Second)
	defer cancel()
	p := strconv.Itoa(port)
	srv := exec.CommandContext(ctx, "ip", "netns", "exec", h2.Netns, "iperf3", "-s", "-1", "-B", ip2, "-p", p)
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv.Process.Kill(); _ = srv.Wait() }()
	waitListening(t, h2.Netns, "sport = :"+p, 1, 10*time.Second)
	out, err := exec.CommandContext(ctx, "ip", "netns", "exec", h1.Netns, "iperf3", "-c", ip2, "-p", p,
		"-u", "-b", rate, "-l", strconv.Itoa(length), "-t", strconv.Itoa(secs), "-J").Output()
	if err != nil {
		t.Fatalf("iperf3 -u to port %s: %v\n%s", p, err, out)
	}
	var res struct {
		End struct {
			Sum struct {
				Seconds     float64 `json:"seconds"`
				Bytes       float64 `json:"bytes"`
				Packets     float64 `json:"packets"`
				LostPackets float64 `json:"lost_packets"`
			} `json:"sum"`
		} `json:"end"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("iperf3 JSON: %v\n%s", err, out)
	}
	s := res.End.Sum
	if s.Packets == 0 || s.Seconds == 0 {
		t.Fatalf("iperf3 sent nothing:\n%s", out)
	}
	received := s.Bytes * (s.Packets - s.LostPackets) / s.Packets
	return received * 8 / s.Seconds, (s.Packets - s.LostPackets) / s.Seconds
}

// Live ENQUEUE: port 2 has two OpenFlow queues, a 10 Mbit/s TBF (queue 0)
// and a droptail (queue 1). ovs-ofctl sees them (queue-get-config), adds
// flows ENQUEUEing UDP to port 5001 into queue 0 and to 5002 into queue
// 1, and 30 Mbit/s of UDP payload to each arrives at 10 Mbit/s of frames
// (within 10 %, counting headers as the TBF does) through queue 0 and
// unshaped (above 18 Mbit/s) through queue 1; queue-stats shows the drops
// in queue 0 and none in queue 1.
func TestSerialSwitchPortQueuesShapeEnqueued(t *testing.T) {
	testenv.RequireCommand(t, "iperf3", "ss", "ovs-ofctl")
	topo := upLinkEmuTestbed(t)
	bin := testenv.BuildPseudocong(t)
	s2 := topo.SwitchPorts()[1]
	rep, _ := startEmuSwitchReport(t, bin, topo, "--port-qdisc",
		s2+"=prio(tbf,rate=10mbit,burst=16kb,latency=50ms;droptail,limit=1000)")
	target := "tcp:" + rep.Listen[0]
	ofctl := func(args ...string) string {
		t.Helper()
		out, err := testenv.Ofctl(append([]string{"-O", "OpenFlow10", "--timeout=10"}, args...)...)
		if err != nil {
			t.Fatalf("ovs-ofctl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	cfg := ofctl("queue-get-config", target, "2")
	if !strings.Contains(cfg, "queue 0:") || !strings.Contains(cfg, "queue 1:") {
		t.Fatalf("queue-get-config 2:\n%s", cfg)
	}
	ofctl("add-flow", target, "priority=100,in_port=1,udp,tp_dst=5001,actions=enqueue:2:0")
	ofctl("add-flow", target, "priority=100,in_port=1,udp,tp_dst=5002,actions=enqueue:2:1")
	ofctl("add-flow", target, "priority=1,actions=NORMAL")

	const length = 1200 // payload; 1242 bytes on the wire
	wire := func(payload float64) float64 { return payload * (length + 42) / length }
	shaped := wire(udpReceived(t, topo, 5001, "30M", length, 4))
	free := wire(udpReceived(t, topo, 5002, "30M", length, 4))
	stats := ofctl("queue-stats", target, "2")
	t.Logf("received through queue 0 (10 Mbit/s TBF): %.2f Mbit/s, queue 1 (droptail): %.2f Mbit/s of frames\n%s", shaped/1e6, free/1e6, stats)
	if shaped < 9e6 || shaped > 11e6 {
		t.Errorf("queue 0 delivered %.2f Mbit/s, want 10 Mbit/s within 10 %%", shaped/1e6)
	}
	// Unshaped: well above the shaper's rate and no more than offered.
	// Not "the offered rate within x %": on a loaded machine the receiving
	// iperf3 drops datagrams its socket cannot take in time, which is no
	// queue's doing (the queue's own drop count is checked below).
	if offered := wire(30e6); free < 1.8*10e6 || free > offered*1.1 {
		t.Errorf("queue 1 delivered %.2f Mbit/s, want well above the 10 Mbit/s shaper (at least 18) and at most the offered %.2f", free/1e6, offered/1e6)
	}
	m := regexp.MustCompile(`queue (\d): bytes=(\d+), pkts=(\d+), errors=(\d+)`).FindAllStringSubmatch(stats, -1)
	if len(m) != 2 {
		t.Fatalf("queue-stats 2: want two queues:\n%s", stats)
	}
	errs0, _ := strconv.Atoi(m[0][4])
	errs1, _ := strconv.Atoi(m[1][4])
	if errs0 == 0 || errs1 != 0 {
		t.Errorf("queue drops (errors) %d and %d, want some in the shaped queue 0 and none in queue 1", errs0, errs1)
	}
}
