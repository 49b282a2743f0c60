//go:build integration

package policing

import (
	"log/slog"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/experiments/livetcp"
	"github.com/pseudocong/pseudocong/internal/testenv"
)

func requireLive(t *testing.T) {
	t.Helper()
	testenv.RequireRoot(t)
	testenv.RequireCommand(t, "ip", "ping", "iperf3", "nstat", "ss", "tc")
}

// liveCells is the live test's share of the matrix: the front VM, CUBIC
// and BBR policed and shaped both ways, BBR on the client only under
// policing. 10 transfers of 15 s (3 s omitted), the three policed ones
// with a CUBIC sender 30 s: about four minutes.
//
// POLICING_LIVE_CELLS, if set, is a regexp on the cells' keys that
// narrows the run further (for re-measuring one cell by hand).
func liveCells(t *testing.T, s *Spec) func(Cell) bool {
	var only *regexp.Regexp
	if v := os.Getenv("POLICING_LIVE_CELLS"); v != "" {
		only = regexp.MustCompile(v)
		t.Logf("only cells matching %q", v)
	}
	return func(c Cell) bool {
		if only != nil && !only.MatchString(c.Key(true)) {
			return false
		}
		if c.Server != s.Servers[0] || c.Group == "e2e" {
			return false
		}
		switch c.Group {
		case "cubic":
			return c.Mode == "police" || c.Mode == "shape"
		case "bbr":
			// BBR shaped is no must-show; its cells are the CLI's
			// (`pseudocong policing --backend live`), not CI's.
			return c.Mode == "police"
		case "bbr_client":
			return c.Mode == "police"
		}
		return false
	}
}

// Must-show (issue 14, live, and sim vs live): the three behavioural
// bullets on the live summary at LiveBounds (the thresholds are
// reported beside them), and every live goodput within ±30 % of the
// simulator's for the same cells, durations and path (±20 % reported).
func TestSerialPolicingLive(t *testing.T) {
	requireLive(t)
	s := loadSpec(t)
	// CI-sized: 10 s cells (8 s measured after 2 s omitted); the CLI runs
	// the spec's full durations (`pseudocong policing --backend live`).
	s.Duration, s.Omit = Duration(10*time.Second), Duration(2*time.Second)
	sel := liveCells(t, s)
	// A policed CUBIC flow's goodput depends on where the window cuts its
	// sawtooth (2–3 s cycles): those cells run 20 s.
	adj := func(c *Cell) {
		if PhaseLocked(c.Key(true)) {
			c.Duration = 20 * time.Second
		}
	}
	sim, err := Run(s, Sim{}, Options{Select: sel, Adjust: adj})
	if err != nil {
		t.Fatal(err)
	}
	// The phase-locked cells' band: the same cells with 1 ms of host
	// noise, more than a live host's (PhaseLocked, Band).
	noisySpec := *s
	noisySpec.HostJitter = Duration(time.Millisecond)
	locked := func(c Cell) bool { return sel(c) && PhaseLocked(c.Key(true)) }
	noisy, err := Run(&noisySpec, Sim{}, Options{Select: locked, Adjust: adj})
	if err != nil {
		t.Fatal(err)
	}
	live := &Live{Binary: testenv.BuildPseudocong(t), Log: slog.New(slog.NewTextHandler(os.Stderr, nil))}
	t.Cleanup(func() {
		if err := live.Close(); err != nil {
			t.Errorf("live close: %v", err)
		}
	})
	res, err := Run(s, live, Options{Select: sel, Adjust: adj})
	if err != nil {
		t.Fatal(err)
	}
	if err := live.Close(); err != nil {
		t.Errorf("live close: %v", err)
	}
	for _, k := range SortedKeys(res.Summary) {
		if !strings.Contains(k, ".server.") {
			t.Logf("%s = %.4g (sim %.4g)", k, res.Summary[k], sim.Summary["policing.sim."+k[len("policing.live."):]])
		}
	}
	for _, c := range MustShowLive(res.Summary, sim.Summary, noisy.Summary) {
		if !c.OK && c.Advisory {
			t.Logf("MISS (advisory) live %s: %s", c.Name, c.Detail)
		} else if !c.OK {
			t.Errorf("live %s: %s", c.Name, c.Detail)
		} else {
			t.Logf("ok live %s: %s", c.Name, c.Detail)
		}
	}
	// Sim vs live: the issue's ±20 % is reported; the test fails beyond
	// ±30 % (one live run varies by up to ~25 % here, LiveBounds), except
	// for the phase-locked cells, which must lie in the simulator's band
	// for them (Band); their distance from the noiseless sim is in the
	// ±20 % report.
	for _, c := range Agree(sim.Summary, res.Summary, 0.20, nil) {
		if !c.OK {
			t.Logf("MISS (advisory, issue's ±20 %%) %s: %s", c.Name, c.Detail)
		}
	}
	agree := Agree(sim.Summary, res.Summary, 0.30, PhaseLocked)
	for _, c := range append(agree, Band(sim.Summary, noisy.Summary, res.Summary, 0.30)...) {
		if !c.OK {
			t.Errorf("%s: %s", c.Name, c.Detail)
		} else {
			t.Logf("ok %s: %s", c.Name, c.Detail)
		}
	}
	// POLICING_KEEP=DIR keeps the live summary, series and plots.
	dir := t.TempDir()
	if d := os.Getenv("POLICING_KEEP"); d != "" {
		dir = d
	}
	if err := res.Write(dir); err != nil {
		t.Fatal(err)
	}
}

// Anchor (issue 14): our shaper (the switch's tbf on its port towards
// the server) and the kernel's tbf on the same veth with the same rate,
// burst and latency, the switch otherwise plain: CUBIC upload goodput
// within 5 %, measured back to back in the same test.
func TestSerialPolicingKernelTBFAnchor(t *testing.T) {
	requireLive(t)
	bin := testenv.BuildPseudocong(t)
	ctx := t.Context()
	const rate, burst, latency = "20mbit", "32kb", "50ms"
	ours := []livetcp.SwitchEmu{{Right: livetcp.PortEmu{Qdisc: "tbf,rate=" + rate + ",burst=" + burst + ",latency=" + latency, Delay: "14ms"}}}
	bed, err := livetcp.Up(ctx, livetcp.Config{Binary: bin, Switches: ours, CC: []string{"cubic"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := bed.Close(); err != nil {
			t.Errorf("bed close: %v", err)
		}
	})
	run := func() *livetcp.Result {
		t.Helper()
		r, err := bed.Run(ctx, livetcp.Iperf{ClientCC: "cubic", ServerCC: "cubic", CC: "cubic", MSS: 1400,
			Duration: 8 * time.Second, Omit: 2 * time.Second})
		if err != nil {
			t.Fatalf("%v\n%s", err, bed.SwitchOutput())
		}
		return r
	}
	a := run()
	// The kernel's: the delay line stays on our port, the shaping moves
	// to the veth's root qdisc behind it.
	if err := bed.Reconfigure(ctx, []livetcp.SwitchEmu{{Right: livetcp.PortEmu{Delay: "14ms"}}}); err != nil {
		t.Fatal(err)
	}
	undo, err := livetcp.KernelTBF(bed.Ports()[0][1], rate, burst, latency)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := undo(); err != nil {
			t.Error(err)
		}
	})
	k := run()
	t.Logf("ours %.3f Mbit/s (%d retransmits), kernel tbf %.3f Mbit/s (%d): %+.2f %%", a.GoodputMbps, a.Retransmits, k.GoodputMbps, k.Retransmits, (a.GoodputMbps/k.GoodputMbps-1)*100)
	if d := a.GoodputMbps/k.GoodputMbps - 1; d < -0.05 || d > 0.05 {
		t.Errorf("our shaper %.3f vs kernel tbf %.3f Mbit/s: %+.2f %%, want within 5 %%", a.GoodputMbps, k.GoodputMbps, d*100)
	}
}
