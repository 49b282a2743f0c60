//go:build integration

package calibrate_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/internal/testenv"
	"github.com/pseudocong/pseudocong/profile"
)

// calibrateVeths attaches two fresh veth pairs to bridge br (OpenFlow
// ports 1 and 2) and returns the host ends calibrate reads and writes
// (IPv6 off: router solicitations would be misses). Removed at cleanup.
func calibrateVeths(t *testing.T, o *testenv.OVS, br string) [2]string {
	t.Helper()
	tag := testenv.NewTag()
	var sw, cal [2]string
	for i := range 2 {
		sw[i], cal[i] = tag+"s"+strconv.Itoa(i+1), tag+"c"+strconv.Itoa(i+1)
		if out, err := exec.Command("ip", "link", "add", sw[i], "type", "veth", "peer", "name", cal[i]).CombinedOutput(); err != nil {
			t.Fatalf("veth: %v\n%s", err, out)
		}
		name := sw[i]
		t.Cleanup(func() { _ = exec.Command("ip", "link", "del", name).Run() })
		for _, ifc := range []string{sw[i], cal[i]} {
			_ = exec.Command("sysctl", "-qw", "net.ipv6.conf."+ifc+".disable_ipv6=1").Run()
			if out, err := exec.Command("ip", "link", "set", ifc, "up").CombinedOutput(); err != nil {
				t.Fatalf("link up: %v\n%s", err, out)
			}
		}
		o.AddPort(br, sw[i], i+1)
	}
	return cal
}

// sessionFitter runs a short `pseudocong calibrate` against a second
// bridge of the same ovs-vswitchd as the prediction (with the netdev
// datapath every bridge is served by the same datapath and the same
// polling thread), so the fit sees OVS as it is in that minute. Only the
// phases the first-packet cells depend on are given time: isolated and
// paced misses (upcall.*), the Packet-In burst (agent.packet_in_cost),
// ECHOs (controller_channel.latency), hit and PACKET_OUT probes
// (forwarding.*) and one short ascending fill (install.activation_delay).
type sessionFitter struct {
	t     *testing.T
	bin   string
	rt    testenv.Realtime
	port  int
	data  [2]string
	dir   string
	n     int
	Flags []string
}

// sessionFitFlags size calibrate's phases for about 10 s: 8 isolated
// misses (the 250 ms spacing is the upcall fit's idle end), the default
// 15 paced misses per spacing, a 600-miss overflow burst (OVS's queue is
// ~500; the cells never reach it), 100 hit probes and PACKET_OUTs, and
// 100 ascending rules (~10 batches) for the activation delay.
var sessionFitFlags = []string{"--patterns", "ascending", "--max-rules", "100",
	"--isolated-misses", "8", "--queue-burst", "600", "--hit-probes", "100",
	"--packet-outs", "100", "--budget", "1m"}

func newSessionFitter(t *testing.T, o *testenv.OVS, bin string, rt testenv.Realtime) *sessionFitter {
	t.Helper()
	testenv.RequireCommand(t, "sysctl")
	br := o.AddBridge("fit", 2)
	f := &sessionFitter{t: t, bin: bin, rt: rt, data: calibrateVeths(t, o, br), dir: t.TempDir(), Flags: sessionFitFlags}
	// PSEUDOCONG_OVS_SESSION_FIT_FLAGS: more calibrate flags, after the
	// defaults (the last value of a flag wins), to size the fit's phases.
	f.Flags = append(f.Flags, strings.Fields(os.Getenv("PSEUDOCONG_OVS_SESSION_FIT_FLAGS"))...)
	t.Logf("session fit flags: %s", strings.Join(f.Flags, " "))
	f.port = testenv.ReservePort(t)
	o.SetController(br, "tcp:127.0.0.1:"+strconv.Itoa(f.port))
	return f
}

// Fit runs calibrate once and returns its (complete) profile and how long
// the run took.
func (f *sessionFitter) Fit() (*profile.Profile, time.Duration) {
	f.t.Helper()
	f.n++
	path := fmt.Sprintf("%s/fit%d.yaml", f.dir, f.n)
	argv := append([]string{f.bin, "calibrate", "--listen", "ptcp:" + strconv.Itoa(f.port) + ":127.0.0.1",
		"--data", f.data[0] + "," + f.data[1], "--name", "ovs-netdev-session",
		"--out", path, "--report", "", "--log-level", "warn"}, f.Flags...)
	argv = f.rt.Command(argv...)
	out := &lockedBuffer{}
	cmd := exec.CommandContext(f.t.Context(), argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = out, out
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	if err != nil {
		f.t.Fatalf("session calibrate: %v\n%s", err, out)
	}
	p, err := profile.Load(path)
	if err != nil {
		f.t.Fatal(err)
	}
	if p.Provenance == nil || p.Provenance.Partial {
		f.t.Fatalf("session calibrate: partial profile %+v\n%s", p.Provenance, out)
	}
	return p, took
}

// withSessionFit is base (the committed profile) with the keys a short
// fit measures taken from fit. The rest stays base's: a 100-rule fill
// sees neither the table's end nor the insert costs at occupancy, and its
// capacity (a lower bound of ~100) would cap the ascending cell.
func withSessionFit(base, fit *profile.Profile) *profile.Profile {
	p := *base
	p.Name = base.Name + "+session"
	p.Upcall = fit.Upcall
	p.Agent.PacketInCost = fit.Agent.PacketInCost
	p.ControllerChannel = fit.ControllerChannel
	p.Forwarding.HitDelay = fit.Forwarding.HitDelay
	p.Forwarding.PacketOutDelay = fit.Forwarding.PacketOutDelay
	p.Install.ActivationDelay = fit.Install.ActivationDelay
	return &p
}

// meanFit is a with the session keys (withSessionFit) the mean of a's
// and b's.
func meanFit(a, b *profile.Profile) *profile.Profile {
	avg := func(x, y time.Duration) time.Duration { return (x + y) / 2 }
	p := *a
	p.Upcall.Latency = avg(a.Upcall.Latency, b.Upcall.Latency)
	p.Upcall.IdleLatency = avg(a.Upcall.IdleLatency, b.Upcall.IdleLatency)
	p.Upcall.IdleTimeConstant = avg(a.Upcall.IdleTimeConstant, b.Upcall.IdleTimeConstant)
	p.Agent.PacketInCost = avg(a.Agent.PacketInCost, b.Agent.PacketInCost)
	p.ControllerChannel.Latency = avg(a.ControllerChannel.Latency, b.ControllerChannel.Latency)
	p.Forwarding.HitDelay = avg(a.Forwarding.HitDelay, b.Forwarding.HitDelay)
	p.Forwarding.PacketOutDelay = avg(a.Forwarding.PacketOutDelay, b.Forwarding.PacketOutDelay)
	p.Install.ActivationDelay = avg(a.Install.ActivationDelay, b.Install.ActivationDelay)
	return &p
}

// fitKeys is the session fit's keys, for the log.
func fitKeys(p *profile.Profile) string {
	u := p.Upcall
	return fmt.Sprintf("upcall %v/%v/%v p %v channel %v hit %v packet_out %v activation %v",
		u.Latency, u.IdleLatency, u.IdleTimeConstant, p.Agent.PacketInCost, p.ControllerChannel.Latency,
		p.Forwarding.HitDelay, p.Forwarding.PacketOutDelay, p.Install.ActivationDelay)
}

// threadCPU is the CPU time (user + system, clock ticks) of each thread
// of process pid, summed by thread name (handler1, revalidator2, ...
// counted by kind: the digits dropped), for a per-cell log of where
// ovs-vswitchd spends its CPU.
func threadCPU(pid int) map[string]int {
	out := map[string]int{}
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", pid))
	for _, f := range tasks {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		s := string(b)
		l, r := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if l < 0 || r < l {
			continue
		}
		name := strings.TrimRight(s[l+1:r], "0123456789")
		f := strings.Fields(s[r+1:])
		if len(f) < 13 {
			continue
		}
		u, _ := strconv.Atoi(f[11])
		st, _ := strconv.Atoi(f[12])
		out[name] += u + st
	}
	return out
}

// cpuDelta formats after − before per thread kind, the busiest first.
func cpuDelta(before, after map[string]int) string {
	type kv struct {
		k string
		v int
	}
	var d []kv
	for k, v := range after {
		if v-before[k] > 0 {
			d = append(d, kv{k, v - before[k]})
		}
	}
	sort.Slice(d, func(i, j int) bool { return d[i].v > d[j].v })
	var b strings.Builder
	for _, e := range d {
		fmt.Fprintf(&b, " %s %d", e.k, e.v)
	}
	return b.String()
}
