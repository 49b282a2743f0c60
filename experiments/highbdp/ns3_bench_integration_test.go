//go:build integration

package highbdp

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// BenchmarkAIMDHourVsNS3 puts ns-3 3.37's time for the 622 Mbit/s
// hour beside ours, both extrapolated from the same measured 10 simulated
// seconds (validation/ns3/highbdp.cc, the scenario without web flows;
// ns3Comparable): CPU per packet L delivered, times the hour's packets at
// full load (hourPackets, an upper bound on both sides). A 10 s run is
// slow start and early additive increase: it measures the cost per
// packet, not the hour's utilisation. ns-3's CPU time is its process's
// user+system time, ours the cell's; the machine is shared, so both are
// CPU seconds, not wall.
func BenchmarkAIMDHourVsNS3(b *testing.B) {
	if exec.Command("pkg-config", "--exists", "ns3-core").Run() != nil {
		b.Skip("ns-3 not installed")
	}
	dir := b.TempDir()
	build := exec.Command("sh", filepath.Join("..", "..", "validation", "ns3", "build-highbdp.sh"))
	build.Env = append(os.Environ(), "OUT="+dir)
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("build: %v\n%s", err, out)
	}
	const d = 10 * time.Second
	bw, _ := ParseRate("622M")
	sc := ns3Comparable(bw, d, 0)
	sc.BufferPkts = int(math.Round(sc.BDPPkts() * 0.1))
	var oursCPU, oursPkts, nsCPU, nsPkts float64
	var oursEv, nsEv uint64
	for b.Loop() {
		o, err := sc.Run()
		if err != nil {
			b.Fatal(err)
		}
		oursCPU += o.CPUS
		oursPkts += shortRunPackets(sc, o)
		oursEv += o.Events
		cmd := exec.Command(filepath.Join(dir, "highbdp"), "--bottleneck="+fmt.Sprintf("%dbps", bw),
			"--duration="+strconv.FormatFloat(d.Seconds(), 'f', -1, 64), "--queue="+strconv.Itoa(sc.BufferPkts))
		out, err := cmd.Output()
		if err != nil {
			b.Fatalf("ns-3: %v", err)
		}
		var ns3 struct {
			Utilisation float64 `json:"utilisation"`
			Events      uint64  `json:"events"`
		}
		if err := json.Unmarshal(out, &ns3); err != nil {
			b.Fatalf("ns-3 output %q: %v", out, err)
		}
		ps := cmd.ProcessState
		nsCPU += (ps.UserTime() + ps.SystemTime()).Seconds()
		nsPkts += runPackets(sc, ns3.Utilisation)
		nsEv += ns3.Events
	}
	b.ReportMetric(oursCPU/oursPkts*hourPackets(bw), "ours-hour-cpu-s")
	b.ReportMetric(nsCPU/nsPkts*hourPackets(bw), "ns3-hour-cpu-s")
	b.ReportMetric(float64(oursEv)/oursCPU, "ours-events/cpu-s")
	b.ReportMetric(float64(nsEv)/nsCPU, "ns3-events/cpu-s")
	b.ReportMetric(oursCPU/float64(b.N), "ours-cpu-s/run")
	b.ReportMetric(nsCPU/float64(b.N), "ns3-cpu-s/run")
}
