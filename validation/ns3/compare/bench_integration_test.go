//go:build integration

package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/tcp/dumbbell"
)

// cpuTime is this process's user+system time (ours runs in process; the
// garbage collector's threads count too).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkDumbbellVsNS3 is the speed comparison, side by side in
// one run: 2 NewReno flows, 10 Mbit/s, 40 ms RTT, DropTail of 100
// packets, 30 simulated seconds, the validation's shared settings. Each
// iteration runs ours once (in process) and ns-3's program once (a child
// process); both are measured in CPU time (user+system: ours of this
// process, ns-3's of the child, startup included), which a busy machine
// disturbs less than wall time. The target is ours at least 10× faster.
func BenchmarkDumbbellVsNS3(b *testing.B) {
	if err := exec.Command("pkg-config", "--exists", "ns3-core").Run(); err != nil {
		b.Skip("ns-3 not installed: install scripts/install-deps.sh's packages")
	}
	dir := b.TempDir()
	build := exec.Command("sh", filepath.Join("..", "build.sh"))
	build.Env = append(os.Environ(), "OUT="+dir)
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("build: %v\n%s", err, out)
	}
	bin := filepath.Join(dir, "dumbbell")
	c := cell{flows: 2, cc: "newreno", mbit: 10, rtt: 40 * time.Millisecond}
	args := []string{"--flows=2", "--cc=newreno", "--bottleneck=10Mbps", "--rttMs=40", "--queue=100",
		"--duration=30", "--segment=1448", "--minRto=1", "--delack=true"}
	var oursCPU, theirsCPU time.Duration
	var oursEv, theirsEv uint64
	var oursU, theirsU float64
	b.ResetTimer()
	for b.Loop() {
		cfg := oursConfig(c, 30*time.Second)
		cfg.Queue = 100
		t0 := cpuTime()
		r, err := dumbbell.Run(cfg)
		if err != nil {
			b.Fatal(err)
		}
		oursCPU += cpuTime() - t0
		oursEv, oursU = r.Events, r.Utilisation
		cmd := exec.Command(bin, args...)
		out, err := cmd.Output()
		if err != nil {
			b.Fatal(err)
		}
		theirsCPU += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		var t dumbbell.Result
		if err := json.Unmarshal(out, &t); err != nil {
			b.Fatal(err)
		}
		theirsEv, theirsU = t.Events, t.Utilisation
	}
	n := float64(b.N)
	b.ReportMetric(oursCPU.Seconds()/n, "ours-cpu-s")
	b.ReportMetric(theirsCPU.Seconds()/n, "ns3-cpu-s")
	b.ReportMetric(float64(theirsCPU)/float64(oursCPU), "speedup")
	b.ReportMetric(float64(oursEv), "ours-events")
	b.ReportMetric(float64(theirsEv), "ns3-events")
	b.ReportMetric(oursU, "ours-util")
	b.ReportMetric(theirsU, "ns3-util")
}
