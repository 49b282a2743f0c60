//go:build integration

package main

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/internal/testenv"
	"github.com/pseudocong/pseudocong/mptcp"
	"github.com/pseudocong/pseudocong/testbed"
)

// Live reference for the mptcp spec (issue 15): Linux MPTCP (kernel 6.18)
// between two namespaces A and B joined by two paths, each a pair of veths
// through one `pseudocong switch` (standalone, L2 learning) whose ports
// shape it: 5 Mbit/s, a one-way delay line and Bernoulli loss on the data
// direction, a 100-packet drop-tail queue (the kernel here has no netem).
// Go's SetMultipathTCP opens the sockets; B announces its path-2 address
// (`ip mptcp endpoint … signal`) so A opens the second subflow there.
// Must show: both subflows carry data (the switch's egress counters on
// both B-side ports, at least 5 % each), and the goodput is within ±30 %
// (±20 % measured; see the bound below) of mptcp.Run's on the same cell with Linux-like subflows (SACK, Linux timers, uncoupled
// Reno: upstream Linux MPTCP has no coupled CC, and the namespaces are
// set to reno) and a buffer as large as Linux's autotuning allows. Wall-clock rates: TestSerial*.
func TestSerialMPTCPLiveTwoPaths(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.RequireCommand(t, "ip", "ping", "ss", "nstat")
	bin := testenv.BuildPseudocong(t)
	for _, c := range liveMPTCPCells {
		t.Run(fmt.Sprintf("d%d-%d-l%g-%g-b%d", c.d1.Milliseconds(), c.d2.Milliseconds(), c.l1*100, c.l2*100, c.rmemKB), func(t *testing.T) {
			runLiveMPTCPCell(t, bin, c)
		})
	}
}

// liveMPTCPCells are the cells run live. rmemKB 0 leaves B's receive
// buffer to Linux's autotuning (up to tcp_rmem's 6 MiB: no blocking);
// otherwise tcp_rmem is pinned to it in B. simRcvBuf is the simulator's
// connection-level buffer for the cell: the window Linux advertises, which
// for a 64 KB tcp_rmem is 40 448 bytes (rcv_ssthresh in `ss -tni` on B:
// Linux keeps a share of the buffer for skb overhead, its scaling ratio),
// not the 64 KB itself (docs/mptcp.md).
type liveMPTCPCell struct {
	d1, d2    time.Duration
	l1, l2    float64
	rmemKB    int
	simRcvBuf int
}

var liveMPTCPCells = []liveMPTCPCell{
	{40 * time.Millisecond, 40 * time.Millisecond, 0.01, 0.01, 0, 6 << 20},
	{80 * time.Millisecond, 40 * time.Millisecond, 0.01, 0.04, 0, 6 << 20},
	{160 * time.Millisecond, 40 * time.Millisecond, 0.01, 0.01, 64, 40448},
}

func runLiveMPTCPCell(t *testing.T, bin string, c liveMPTCPCell) {
	d1, d2, l1, l2, rmemKB := c.d1, c.d2, c.l1, c.l2, c.rmemKB
	const (
		dur    = 20 * time.Second
		warmup = 4 * time.Second
	)
	nsA, nsB := testenv.NewNetns(t, "mpa"), testenv.NewNetns(t, "mpb")
	a1 := testenv.Veth(t, testenv.VethOptions{NS: nsA, NSIfName: "eth1", HostName: "a1", Addr: "10.1.0.1/24"})
	a2 := testenv.Veth(t, testenv.VethOptions{NS: nsA, NSIfName: "eth2", HostName: "a2", Addr: "10.2.0.1/24"})
	b1 := testenv.Veth(t, testenv.VethOptions{NS: nsB, NSIfName: "eth1", HostName: "b1", Addr: "10.1.0.2/24"})
	b2 := testenv.Veth(t, testenv.VethOptions{NS: nsB, NSIfName: "eth2", HostName: "b2", Addr: "10.2.0.2/24"})
	for _, ns := range []*testenv.Netns{nsA, nsB} {
		// One L2 domain for both paths: answer ARP only on the interface
		// that has the address, so each path stays on its veths.
		for _, cmd := range [][]string{
			{"sysctl", "-qw", "net.ipv4.conf.all.arp_ignore=1"},
			{"sysctl", "-qw", "net.ipv4.conf.all.arp_announce=2"},
			{"sysctl", "-qw", "net.mptcp.enabled=1"},
			// Reno on both (a namespace here defaults to BBR): the
			// simulator's newreno subflows are then the same algorithm.
			{"sysctl", "-qw", "net.ipv4.tcp_congestion_control=reno"},
			{"ip", "mptcp", "limits", "set", "subflow", "2", "add_addr_accepted", "2"},
		} {
			if out, err := ns.Exec(cmd...); err != nil {
				t.Fatalf("%s: %v: %s", cmd, err, out)
			}
		}
	}
	if rmemKB > 0 {
		v := fmt.Sprintf("net.ipv4.tcp_rmem=4096 %d %d", rmemKB<<10, rmemKB<<10)
		if out, err := nsB.Exec("sysctl", "-qw", v); err != nil {
			t.Fatalf("%s: %v: %s", v, err, out)
		}
	}
	if out, err := nsB.Exec("ip", "mptcp", "endpoint", "add", "10.2.0.2", "dev", "eth2", "signal"); err != nil {
		t.Fatalf("mptcp endpoint: %v: %s", err, out)
	}
	shape := func(port string, d time.Duration, loss float64) []string {
		args := []string{"--port-qdisc", port + "=droptail,limit=100", "--port-rate", port + "=5mbit",
			"--port-delay", port + "=" + d.String()}
		if loss > 0 {
			args = append(args, "--port-loss", fmt.Sprintf("%s=%g%%", port, loss*100))
		}
		return args
	}
	args := []string{"switch", "--listen", "ptcp:0:127.0.0.1", "--fail-mode", "standalone",
		"--metrics-addr", "127.0.0.1:0", "--log-level", "warn"}
	for _, v := range []*testenv.VethPair{a1, a2, b1, b2} {
		args = append(args, "--port", v.Host)
	}
	args = append(args, shape(b1.Host, d1, l1)...) // data on path 1
	args = append(args, shape(b2.Host, d2, l2)...) // data on path 2
	args = append(args, shape(a1.Host, d1, 0)...)  // ACKs on path 1
	args = append(args, shape(a2.Host, d2, 0)...)  // ACKs on path 2
	sw, err := testbed.StartDaemon(testbed.DaemonConfig{Binary: bin, Args: args, Ready: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := sw.Stop(5 * time.Second); err != nil {
			t.Errorf("switch stop: %v\n%s", err, sw.Output())
		}
	})
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	rep, err := sw.WaitReady(ctx)
	if err != nil {
		t.Fatalf("switch ready: %v\n%s", err, sw.Output())
	}
	for _, dst := range []string{"10.1.0.2", "10.2.0.2"} {
		deadline := time.Now().Add(15 * time.Second)
		for {
			out, err := exec.Command("ip", "netns", "exec", nsA.Name, "ping", "-c", "1", "-W", "1", dst).CombinedOutput()
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no ping to %s through the switch: %v\n%s\n%s", dst, err, out, sw.Output())
			}
			time.Sleep(100 * time.Millisecond) // polling, not asserting
		}
	}

	// The MPTCP receiver in B, the sender in A.
	var ln net.Listener
	if err := nsB.Do(func() error {
		lc := net.ListenConfig{}
		lc.SetMultipathTCP(true)
		var err error
		ln, err = lc.Listen(ctx, "tcp", ":5001") // MP_JOIN SYNs come to 10.2.0.2
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var received atomic.Int64
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
		buf := make([]byte, 64<<10)
		for {
			n, err := c.Read(buf)
			received.Add(int64(n))
			if err != nil {
				return
			}
		}
	}()
	var conn net.Conn
	if err := nsA.Do(func() error {
		d := net.Dialer{}
		d.SetMultipathTCP(true)
		var err error
		conn, err = d.DialContext(ctx, "tcp", "10.1.0.2:5001")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if mp, err := conn.(*net.TCPConn).MultipathTCP(); err != nil || !mp {
		t.Fatalf("the connection is not MPTCP (%v, %v)", mp, err)
	}
	srv, ok := <-accepted
	if !ok {
		t.Fatal("accept failed")
	}
	defer srv.Close()
	go func() {
		buf := make([]byte, 64<<10)
		for {
			if _, err := conn.Write(buf); err != nil {
				return
			}
		}
	}()
	// The measurement runs on the wall clock: that is what it measures.
	before := map[string]float64{}
	time.Sleep(warmup)
	r0 := received.Load()
	for _, p := range []string{b1.Host, b2.Host} {
		before[p] = egressCounter(t, rep.Metrics, "pseudocong_port_egress_sent_bytes_total", p)
	}
	time.Sleep(dur - warmup)
	r1 := received.Load()
	ssOut, _ := nsA.Exec("ss", "-Mni")
	rcvOut, _ := nsB.Exec("ss", "-tni", "state", "established")
	sfOut, _ := nsA.Exec("ss", "-tni", "state", "established")
	nstatOut, _ := nsB.Exec("nstat", "-az", "MPTcpExtMPJoinAckRx", "MPTcpExtMPCapableSYNRX")
	sent := map[string]float64{}
	for _, p := range []string{b1.Host, b2.Host} {
		sent[p] = egressCounter(t, rep.Metrics, "pseudocong_port_egress_sent_bytes_total", p) - before[p]
	}
	conn.Close()
	live := float64(r1-r0) * 8 / (dur - warmup).Seconds() / 1e6
	total := sent[b1.Host] + sent[b2.Host]
	t.Logf("live: goodput %.3f Mbit/s; data frames on path 1 %.0f B, path 2 %.0f B (%.0f %% on path 2)\nss -Mni:\n%s\nsubflows:\n%s\nreceiver:\n%s\n%s",
		live, sent[b1.Host], sent[b2.Host], 100*sent[b2.Host]/max(total, 1), ssOut, sfOut, rcvOut, nstatOut)
	for _, p := range []string{b1.Host, b2.Host} {
		if sent[p] < 0.05*total || sent[p] == 0 {
			t.Errorf("port %s carried %.0f of %.0f bytes: want both subflows carrying data", p, sent[p], total)
		}
	}
	if live <= 0 {
		t.Fatalf("no goodput")
	}

	// The simulator on the same cell, mean of three seeds.
	sim, blocked := 0.0, 0.0
	for seed := uint64(1); seed <= 3; seed++ {
		res, err := mptcp.Run(mptcp.RunConfig{
			Paths: []mptcp.PathConfig{
				{Rate: 5e6, Delay: d1, Loss: l1, Queue: 100},
				{Rate: 5e6, Delay: d2, Loss: l2, Queue: 100},
			},
			RcvBuf: c.simRcvBuf, Uncoupled: true, CC: "newreno", Profile: "linux", Duration: dur, Warmup: warmup, Seed: seed,
		})
		if err != nil {
			t.Fatal(err)
		}
		sim += res.GoodputMbps / 3
		blocked += res.BlockedShare / 3
	}
	t.Logf("sim (linux profile, SACK, uncoupled newreno, lowest-RTT, rtx-same; 3 seeds): goodput %.3f Mbit/s, blocked by the window %.0f %% of the time; live/sim %.2f", sim, 100*blocked, live/sim)
	// The bound is ±20 %, and measured runs were 0.85-1.10
	// (docs/mptcp.md). One live run under random loss varies by about
	// ±15 % on its own, on a busy CI machine more, so the test fails only
	// beyond ±30 %: a wrong model, not a noisy run.
	if r := live / sim; r < 0.7 || r > 1.3 {
		t.Errorf("live goodput %.3f Mbit/s is %.2f× the simulator's %.3f: want within ±30 %% (the issue's ±20 %% plus run-to-run noise)", live, r, sim)
	}
}
