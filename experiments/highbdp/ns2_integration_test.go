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

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/pseudocong/pseudocong/internal/testenv"
)

// ns2Result is what validation/ns2/highbdp.tcl prints.
type ns2Result struct {
	Utilisation float64      `json:"utilisation"`
	Goodput     float64      `json:"goodput"`
	Drops       uint64       `json:"drops"`
	Timeouts    uint64       `json:"timeouts"`
	Retrans     uint64       `json:"retransmitted"`
	Util        []float64    `json:"util"`
	Cwnd        [][3]float64 `json:"cwnd"`
}

// runNS2 runs paper 002's dumbbell in ns-2 on the instance sc describes
// (its bottleneck, access rate, buffers, duration and our long flows'
// start times). It returns ns-2's wall and CPU time (user + system).
func runNS2(t testing.TB, sc Scenario) (ns2Result, time.Duration, time.Duration) {
	t.Helper()
	var starts []string
	for _, st := range sc.LongStarts() {
		starts = append(starts, strconv.FormatFloat(st.Seconds(), 'f', 9, 64))
	}
	sc.setDefaults() // the access rate and buffers Run would use
	script, err := filepath.Abs(filepath.Join("..", "..", "validation", "ns2", "highbdp.tcl"))
	if err != nil {
		t.Fatal(err)
	}
	args := []string{script,
		"bottleneck", fmt.Sprint(sc.Bottleneck), "access", fmt.Sprint(sc.Access),
		"duration", strconv.FormatFloat(sc.Duration.Seconds(), 'f', -1, 64),
		"queue", strconv.Itoa(sc.BufferPkts), "access_queue", strconv.Itoa(sc.AccessBufferPkts),
		"starts", strings.Join(starts, ","), "util_every", "10", "trace_every", "10"}
	if !sc.DelAck {
		args = append(args, "delack", "0")
	}
	cmd := exec.Command("ns", args...)
	cmd.Dir = t.TempDir() // ns-2 may write nothing, but never into the tree
	start := time.Now()
	out, err := cmd.Output()
	wall := time.Since(start)
	var cpu time.Duration
	if ps := cmd.ProcessState; ps != nil {
		cpu = ps.UserTime() + ps.SystemTime()
	}
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("ns-2: %v\n%s", err, stderr)
	}
	var r ns2Result
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("ns-2 output %q: %v", out, err)
	}
	return r, wall, cpu
}

// TestNS2SideBySide runs paper 002's dumbbell (without web flows) in
// ns-2 2.35, the simulator the paper used, and here: the same instance
// (ns-2 starts the long flows at our times), and wants L's utilisation
// within ±3 points. CI runs 100 Mbit/s for 60 s and high-bdp-ci's 10G
// cell (1/50: 200 Mbit/s for 72 s), about 15 s of ns-2 together;
// HIGHBDP_NS2="BW:DURATION[:k][:q=N][:aq=N][:cc=NAME][:restart=1] ..." runs others, e.g.
// "622M:3600s" or "10G:180s:20" (the bottleneck and access links divided
// by k, as the scaled specs do) or "10G:180s:20:q=3:aq=50" (L's buffer
// and every access link's in packets; defaults 0.1 BDP and 10 000; our
// side's algorithm, default ns2-newreno; restart=1 sets
// Scenario.RTORestart),
// logged and checked the same way.
func TestNS2SideBySide(t *testing.T) {
	testenv.RequireCommandPath(t, "ns")
	cases := []string{"100M:60s", "10G:72s:50"}
	if v := os.Getenv("HIGHBDP_NS2"); v != "" {
		cases = strings.Fields(v)
	}
	for _, c := range cases {
		t.Run(c, func(t *testing.T) {
			sc := ns2Case(t, c)
			// Both sides sample L and flow 0 every 10 simulated seconds.
			sc.UtilEvery, sc.TraceEvery = 10*time.Second, 10*time.Second
			ours, err := sc.Run()
			if err != nil {
				t.Fatal(err)
			}
			// ns-2 with our access queues: the same network on both sides.
			ns2, wall, _ := runNS2(t, sc)
			t.Logf("%s: ours utilisation %.4f goodput %.4f drops %d timeouts %d retrans %d (%.1f CPU s); ns-2 %.4f / %.4f drops %d timeouts %d retrans %d (%.1f wall s)",
				c, ours.Utilisation, ours.Goodput, ours.Drops, ours.Timeouts, ours.Retrans, ours.CPUS,
				ns2.Utilisation, ns2.Goodput, ns2.Drops, ns2.Timeouts, ns2.Retrans, wall.Seconds())
			if dir := os.Getenv("HIGHBDP_NS2_OUT"); dir != "" {
				writeNS2Comparison(t, dir, c, ours, ns2)
			}
			if d := math.Abs(ours.Utilisation - ns2.Utilisation); d > 0.03 {
				t.Errorf("%s: utilisation %.4f here, %.4f in ns-2 (%.1f points): want within 3", c, ours.Utilisation, ns2.Utilisation, 100*d)
			}
		})
	}
}

// writeNS2Comparison keeps both sides of one case in dir: the numbers
// and series as JSON, L's utilisation and flow 0's window over time as a
// figure.
func writeNS2Comparison(t *testing.T, dir, c string, ours *Outcome, ns2 ns2Result) {
	t.Helper()
	name := "ns2-" + strings.NewReplacer(":", "-", ".", "_").Replace(c)
	type side struct {
		Utilisation, Goodput     float64
		Drops, Timeouts, Retrans uint64
		Util                     []float64
		CwndT, Cwnd              []float64
	}
	o := side{Utilisation: ours.Utilisation, Goodput: ours.Goodput, Drops: ours.Drops, Timeouts: ours.Timeouts, Retrans: ours.Retrans, Util: ours.Util}
	for _, p := range ours.Trace {
		o.CwndT, o.Cwnd = append(o.CwndT, p.T), append(o.Cwnd, float64(p.Cwnd))
	}
	n := side{Utilisation: ns2.Utilisation, Goodput: ns2.Goodput, Drops: ns2.Drops, Timeouts: ns2.Timeouts, Retrans: ns2.Retrans, Util: ns2.Util}
	for _, p := range ns2.Cwnd {
		n.CwndT, n.Cwnd = append(n.CwndT, p[0]), append(n.Cwnd, p[1])
	}
	b, err := json.MarshalIndent(map[string]any{"case": c, "ours": o, "ns2": n}, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".json"), append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct {
		suffix, y string
		series    func(s side) plotter.XYs
	}{
		{"util", "utilisation of L (10 s)", func(s side) plotter.XYs {
			var xys plotter.XYs
			for i, v := range s.Util {
				xys = append(xys, plotter.XY{X: float64(i+1) * 10, Y: v})
			}
			return xys
		}},
		{"cwnd", "flow 0's cwnd (segments)", func(s side) plotter.XYs {
			var xys plotter.XYs
			for i := range s.Cwnd {
				xys = append(xys, plotter.XY{X: s.CwndT[i], Y: s.Cwnd[i]})
			}
			return xys
		}},
	} {
		p := plot.New()
		p.Title.Text, p.X.Label.Text, p.Y.Label.Text = "paper 002's dumbbell, "+c+": ours and ns-2 2.35", "time (s)", f.y
		p.Legend.Top = false // bottom right: both curves start low and end high
		p.Add(plotter.NewGrid())
		for i, sd := range []struct {
			name string
			s    side
		}{{"ours", o}, {"ns-2", n}} {
			l, err := plotter.NewLine(f.series(sd.s))
			if err != nil {
				continue
			}
			l.Color, l.Width = plotutil.Color(i), vg.Points(1)
			p.Add(l)
			p.Legend.Add(sd.name, l)
		}
		if err := p.Save(8*vg.Inch, 4*vg.Inch, filepath.Join(dir, name+"-"+f.suffix+".png")); err != nil {
			t.Fatal(err)
		}
	}
}

// ns2Case parses "BW:DURATION[:k][:q=N][:aq=N][:cc=NAME][:restart=1]" into the ns-3
// comparison's scenario (ns3Comparable), by default with L's buffer at
// 0.1 BDP and ns2-newreno.
func ns2Case(t *testing.T, c string) Scenario {
	t.Helper()
	f := strings.Split(c, ":")
	if len(f) < 2 {
		t.Fatalf("HIGHBDP_NS2 case %q: want BW:DURATION[:k][:q=N][:aq=N][:cc=NAME][:restart=1]", c)
	}
	opts := map[string]int{}
	cc := NS2Reno
	for len(f) > 2 && strings.Contains(f[len(f)-1], "=") {
		k, v, _ := strings.Cut(f[len(f)-1], "=")
		if k == "cc" {
			cc = v
			f = f[:len(f)-1]
			continue
		}
		n, err := strconv.Atoi(v)
		if k == "restart" && err == nil && (n == 0 || n == 1) {
			opts[k] = n
			f = f[:len(f)-1]
			continue
		}
		if (k != "q" && k != "aq") || err != nil || n < 1 {
			t.Fatalf("case %q: option %q: want q=N or aq=N (N ≥ 1 packets) or cc=NAME or restart=0|1", c, f[len(f)-1])
		}
		opts[k] = n
		f = f[:len(f)-1]
	}
	if len(f) > 3 {
		t.Fatalf("HIGHBDP_NS2 case %q: want BW:DURATION[:k][:q=N][:aq=N][:cc=NAME][:restart=1]", c)
	}
	bw, err := ParseRate(f[0])
	if err != nil {
		t.Fatalf("case %q: %v", c, err)
	}
	d, err := time.ParseDuration(f[1])
	if err != nil || d <= 0 {
		t.Fatalf("case %q: duration %q: want a positive Go duration", c, f[1])
	}
	k := int64(1)
	if len(f) == 3 {
		if k, err = strconv.ParseInt(f[2], 10, 64); err != nil || k < 1 {
			t.Fatalf("case %q: scale %q: want an integer ≥ 1", c, f[2])
		}
	}
	sc := ns3Comparable(bw/k, d, 0)
	sc.Access = 1_000_000_000 / k
	sc.BufferPkts = max(2, int(math.Round(sc.BDPPkts()*0.1)))
	if q, ok := opts["q"]; ok {
		sc.BufferPkts = q
	}
	sc.AccessBufferPkts = opts["aq"]
	sc.RTORestart = opts["restart"] == 1
	sc.CC = cc
	return sc
}

// BenchmarkAIMDHourVsNS2 is BenchmarkAIMDHourVsNS3 with ns-2 2.35 (the
// paper's simulator) as the peer: both simulators run the same 10
// simulated seconds at 622 Mbit/s (validation/ns2/highbdp.tcl, the same
// instance), and each one's CPU per packet L delivered is multiplied by
// the hour's packets at full load (hourPackets, an upper bound on both
// sides). ns-2 counts no events, so only CPU is compared.
func BenchmarkAIMDHourVsNS2(b *testing.B) {
	if _, err := exec.LookPath("ns"); err != nil {
		b.Skip("ns-2 not installed")
	}
	const d = 10 * time.Second
	bw, _ := ParseRate("622M")
	sc := ns3Comparable(bw, d, 0)
	sc.BufferPkts = int(math.Round(sc.BDPPkts() * 0.1))
	var oursCPU, oursPkts, nsCPU, nsPkts float64
	for b.Loop() {
		o, err := sc.Run()
		if err != nil {
			b.Fatal(err)
		}
		oursCPU += o.CPUS
		oursPkts += shortRunPackets(sc, o)
		r, _, cpu := runNS2(b, sc)
		nsCPU += cpu.Seconds()
		nsPkts += runPackets(sc, r.Utilisation)
	}
	b.ReportMetric(oursCPU/oursPkts*hourPackets(bw), "ours-hour-cpu-s")
	b.ReportMetric(nsCPU/nsPkts*hourPackets(bw), "ns2-hour-cpu-s")
	b.ReportMetric(oursCPU/float64(b.N), "ours-cpu-s/run")
	b.ReportMetric(nsCPU/float64(b.N), "ns2-cpu-s/run")
}
