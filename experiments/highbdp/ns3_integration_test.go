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
	"strings"
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/internal/testenv"
)

// ns3Comparable is the scenario validation/ns3/highbdp.cc builds: the
// paper's without the web flows, every other choice the same.
func ns3Comparable(bw int64, d time.Duration, queue int) Scenario {
	return Scenario{Bottleneck: bw, AccessDelay: 2 * time.Millisecond, BottleneckDelay: 53 * time.Millisecond,
		BufferPkts: queue, Duration: d, CC: NS2Reno, SsthreshBytes: 65535, DelAck: true, InitialCwnd: 2,
		Long: 10, Short: 3, ShortBytes: []int{int(float64(bw) / 8 * d.Seconds() * 0.005), int(float64(bw) / 8 * d.Seconds() * 0.01), int(float64(bw) / 8 * d.Seconds() * 0.015)},
		ShortStart: []float64{0.2, 0.4, 0.6}, LongStartSpread: 5 * time.Second, Seed: 1}
}

// TestNS3SideBySide runs paper 002's dumbbell (without web flows) in
// ns-3 3.37 and here, at 100 Mbit/s for 60 s (ns-3 needs about 1.5 s of
// wall time per simulated second there), the same instance on both sides
// (ns-3 starts the long flows at our times), and wants the utilisation of
// L within ±3 points. HIGHBDP_NS3_622M=1 adds 622 Mbit/s for 200 s
// (HIGHBDP_NS3_622M=<duration>: for that long); see ns3Duration622.
func TestNS3SideBySide(t *testing.T) {
	testenv.RequireCommandPath(t, "pkg-config")
	if exec.Command("pkg-config", "--exists", "ns3-core").Run() != nil {
		t.Skip("ns-3 not installed")
	}
	dir := t.TempDir()
	build := exec.Command("sh", filepath.Join("..", "..", "validation", "ns3", "build-highbdp.sh"))
	build.Env = append(os.Environ(), "OUT="+dir)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	cases := []struct {
		bw string
		d  time.Duration
	}{{"100M", 60 * time.Second}}
	if v := os.Getenv("HIGHBDP_NS3_622M"); v != "" {
		cases = append(cases, struct {
			bw string
			d  time.Duration
		}{"622M", ns3Duration622(t, v)})
	}
	for _, c := range cases {
		bw, _ := ParseRate(c.bw)
		sc := ns3Comparable(bw, c.d, 0)
		sc.BufferPkts = int(math.Round(sc.BDPPkts() * 0.1))
		ours, err := sc.Run()
		if err != nil {
			t.Fatal(err)
		}
		// The same instance on both sides: ns-3 starts the long flows at
		// our times rather than at its own draws.
		var starts []string
		for _, st := range sc.LongStarts() {
			starts = append(starts, strconv.FormatFloat(st.Seconds(), 'f', 9, 64))
		}
		cmd := exec.Command(filepath.Join(dir, "highbdp"), "--bottleneck="+fmt.Sprintf("%dbps", bw),
			"--duration="+strconv.FormatFloat(c.d.Seconds(), 'f', -1, 64), "--queue="+strconv.Itoa(sc.BufferPkts),
			"--starts="+strings.Join(starts, ","))
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("ns-3: %v", err)
		}
		var ns3 struct {
			Utilisation float64 `json:"utilisation"`
			Goodput     float64 `json:"goodput"`
			WallS       float64 `json:"wall_s"`
		}
		if err := json.Unmarshal(out, &ns3); err != nil {
			t.Fatalf("ns-3 output %q: %v", out, err)
		}
		t.Logf("%s %v: ours utilisation %.3f goodput %.3f (%.1f CPU s); ns-3 %.3f / %.3f (%.1f wall s)",
			c.bw, c.d, ours.Utilisation, ours.Goodput, ours.CPUS, ns3.Utilisation, ns3.Goodput, ns3.WallS)
		// The bound, ±3 points. With the same start times on both
		// sides (since ns-3 gets ours) they agree within 0.3 points at 100M
		// (0.863 vs 0.861, deterministic on both sides); with ns-3's own
		// draws the instance differed and so did the utilisation (3.4
		// points), docs/high-bdp.md.
		if d := math.Abs(ours.Utilisation - ns3.Utilisation); d > 0.03 {
			t.Errorf("%s: utilisation %.3f here, %.3f in ns-3 (%.1f points): want within the issue's 3", c.bw, ours.Utilisation, ns3.Utilisation, 100*d)
		}
	}
}

// ns3Duration622 is the optional 622 Mbit/s run's length: a Go duration
// ("30s"), or 200 s for any other value ("1"). 200 s because the ten long
// flows leave slow start at 44 segments and, growing one segment per two
// RTTs with delayed ACKs, first fill L's 591-packet buffer after about
// 140 s: a shorter run has no loss at all (120 s: none here; 200 s: 19
// drops and one RTO), so it checks the window growth, not recovery. ns-3
// needs about 500 CPU-s for the 200 s (docs/high-bdp.md).
func ns3Duration622(t *testing.T, v string) time.Duration {
	if d, err := time.ParseDuration(v); err == nil {
		if d <= 0 {
			t.Fatalf("HIGHBDP_NS3_622M=%s: want a positive duration", v)
		}
		return d
	}
	return 200 * time.Second
}
