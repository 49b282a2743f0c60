//go:build integration

package main

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/pseudocong/pseudocong/internal/testenv"
	"github.com/pseudocong/pseudocong/testbed"
)

// queuedPortsArgs gives both ports of a two-host testbed two OpenFlow
// queues (ENQUEUE targets; OUTPUT uses queue 0): the egress path the
// issue wants measured, "with the port queues in place".
func queuedPortsArgs(topo *testbed.Topology) []string {
	var args []string
	for _, p := range topo.SwitchPorts() {
		args = append(args, "--port-qdisc", p+"=prio(droptail,limit=1000;droptail,limit=1000)")
	}
	return args
}

// oursUDP64 runs our switch (the default ideal profile, standalone, the
// given extra flags) with in_port=1→2 and 2→1 rules and returns the 64-byte
// UDP datagrams/s host 2 received from an unlimited iperf3 flood.
func oursUDP64(b testing.TB, bin string, topo *testbed.Topology, secs int, extra ...string) float64 {
	rep, stop := startEmuSwitchReport(b, bin, topo, extra...)
	defer stop()
	target := "tcp:" + rep.Listen[0]
	for _, f := range []string{"priority=100,in_port=1,actions=output:2", "priority=100,in_port=2,actions=output:1"} {
		if out, err := testenv.Ofctl("-O", "OpenFlow10", "--timeout=10", "add-flow", target, f); err != nil {
			b.Fatalf("add-flow %s: %v\n%s", f, err, out)
		}
	}
	_, pps := udpReceivedRates(b, topo, 5201, "0", 64, secs)
	return pps
}

// ovsUDP64 is the same through Open vSwitch's userspace (netdev)
// datapath on the same veths: a bridge for the round, deleted after.
func ovsUDP64(b testing.TB, o *testenv.OVS, topo *testbed.Topology, secs int) float64 {
	br := o.AddBridge("fwdq", 1)
	for i, p := range topo.SwitchPorts() {
		o.AddPort(br, p, i+1)
	}
	for _, f := range []string{"in_port=1,actions=output:2", "in_port=2,actions=output:1"} {
		if _, err := o.Ofctl("add-flow", br, f); err != nil {
			b.Fatalf("add-flow %s: %v", f, err)
		}
	}
	_, pps := udpReceivedRates(b, topo, 5201, "0", 64, secs)
	if _, err := o.Vsctl("del-br", br); err != nil { // frees the veths at once
		b.Errorf("del-br: %v", err)
	}
	return pps
}

// BenchmarkSwitchQueuesVsOVS: 64-byte UDP forwarding of our switch, its
// ports with OpenFlow queues (a two-queue prio qdisc each, so every frame
// goes through the egress emulation), against Open vSwitch's userspace
// datapath on the same veths, in the same run, alternating three rounds
// (the machine is shared: compare within a run, not across runs). Each
// figure is the best round's datagrams/s received by host 2 (iperf3 -u
// -l 64 -b 0, 3 s). Runs once per process; b.N does not apply.
func BenchmarkSwitchQueuesVsOVS(b *testing.B) {
	testenv.RequireCommand(b, "iperf3", "ss", "ovs-ofctl", "ovs-vswitchd")
	queuesVsOVSOnce.Do(func() { queuesVsOVS = measureQueuesVsOVS(b) })
	r := queuesVsOVS
	if r == nil {
		b.Fatal("measurement failed")
	}
	b.ReportMetric(r[0]/1e3, "ours-queues-udp64-kpps")
	b.ReportMetric(r[1]/1e3, "ovs-netdev-udp64-kpps")
	b.ReportMetric(r[0]/r[1], "ratio")
	b.ReportMetric(0, "ns/op")
}

var (
	queuesVsOVSOnce sync.Once
	queuesVsOVS     []float64 // best ours, best OVS (datagrams/s)
)

func measureQueuesVsOVS(b *testing.B) []float64 {
	topo := upLinkEmuTestbed(b)
	bin := testenv.BuildPseudocong(b)
	// One Open vSwitch for the run (testenv allows one at a time on the
	// machine); its bridge exists only during its rounds.
	o := testenv.StartOVS(b, testenv.OVSOptions{})
	const secs, rounds = 3, 3
	var ours, ovs []float64
	for range rounds {
		ours = append(ours, oursUDP64(b, bin, topo, secs, queuedPortsArgs(topo)...))
		ovs = append(ovs, ovsUDP64(b, o, topo, secs))
	}
	best := func(xs []float64) float64 {
		m := 0.0
		for _, x := range xs {
			m = max(m, x)
		}
		return m
	}
	b.Logf("64-byte UDP received, kpps per round: ours (ideal profile, prio queues on both ports) %s; OVS netdev %s",
		kpps(ours), kpps(ovs))
	return []float64{best(ours), best(ovs)}
}

func kpps(xs []float64) string {
	var s []string
	for _, x := range xs {
		s = append(s, fmt.Sprintf("%.1f", x/1e3))
	}
	return strings.Join(s, " ")
}
