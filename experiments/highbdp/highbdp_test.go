package highbdp

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/tcp"
)

func mustSpec(t *testing.T, name string) *Spec {
	t.Helper()
	s, err := LoadSpec(name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func runCell(t *testing.T, s *Spec, c Cell) (*Outcome, Scenario) {
	t.Helper()
	sc, err := s.Scenario(c)
	if err != nil {
		t.Fatal(err)
	}
	o, err := sc.Run()
	if err != nil {
		t.Fatal(err)
	}
	return o, sc
}

func TestBuiltinSpecsLoad(t *testing.T) {
	for _, n := range []string{SpecName, SpecNameCI, SpecName20} {
		s := mustSpec(t, n)
		if s.Name != n || !IsSpec(n) {
			t.Errorf("%s: name %q, IsSpec %v", n, s.Name, IsSpec(n))
		}
		sc, err := s.Scenario(Cell{Kind: "grid", Bottleneck: "100M", CC: NS2Reno, Seed: 1, Buffer: s.Buffer, DelAck: true})
		if err != nil {
			t.Fatal(err)
		}
		// The paper's long-flow RTT.
		if sc.RTT() != 114*time.Millisecond {
			t.Errorf("%s: rtt %v, want 114ms", n, sc.RTT())
		}
	}
	if IsSpec("paper") {
		t.Error("IsSpec(paper)")
	}
}

// A high-bdp spec saved under any name goes to this package, an
// experiment spec of another kind does not.
func TestIsSpecByContent(t *testing.T) {
	dir := t.TempDir()
	mine := filepath.Join(dir, "my-run.yaml")
	if err := os.WriteFile(mine, builtinCI, 0o644); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other.yaml")
	if err := os.WriteFile(other, []byte("name: other\nexperiments: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path string
		want bool
	}{
		{mine, true},
		{other, false},
		{filepath.Join(dir, "high-bdp-missing.yaml"), true}, // its name says so; the loader reports the missing file
		{filepath.Join(dir, "missing.yaml"), false},
	} {
		if got := IsSpec(tc.path); got != tc.want {
			t.Errorf("IsSpec(%s) = %v, want %v", filepath.Base(tc.path), got, tc.want)
		}
	}
	if _, err := LoadSpec(mine); err != nil {
		t.Errorf("LoadSpec(%s): %v", mine, err)
	}
}

func TestSpecErrors(t *testing.T) {
	for _, tc := range []struct{ mut func(*Spec) string }{
		{func(s *Spec) string { s.Scale = 0.5; return "scale" }},
		{func(s *Spec) string { s.Bottlenecks = []string{"fast"}; return "rate" }},
		{func(s *Spec) string { s.Algorithms = []string{"nope"}; return "nope" }},
		{func(s *Spec) string { s.ShortShare = nil; return "short" }},
		{func(s *Spec) string { s.Buffer = 0; return "buffer" }},
		{func(s *Spec) string { s.SplitBottlenecks = []string{"10G"}; return "without split" }},
		{func(s *Spec) string { s.Split, s.SplitBottlenecks = SplitBottleneck, []string{"40G"}; return "40G" }},
	} {
		s := mustSpec(t, SpecNameCI)
		want := tc.mut(s)
		if err := s.check(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("want an error about %s, got %v", want, err)
		}
	}
	if _, err := (Scenario{}).Run(); err == nil {
		t.Error("empty scenario ran")
	}
	// split_bottlenecks: only those grid cells are cut.
	s := mustSpec(t, SpecNameCI)
	s.Split, s.SplitBottlenecks = SplitBottleneck, []string{"10G"}
	for _, c := range []struct {
		cell Cell
		want string
	}{
		{Cell{Kind: "grid", Bottleneck: "10G"}, SplitBottleneck},
		{Cell{Kind: "grid", Bottleneck: "100M"}, SplitNone},
		{Cell{Kind: "buffer", Bottleneck: "10G"}, SplitBottleneck},
		{Cell{Kind: "buffer", Bottleneck: "2.5G"}, SplitNone},
		{Cell{Kind: "growth", Bottleneck: "10G"}, SplitNone},
	} {
		if got := s.splitFor(c.cell); got != c.want {
			t.Errorf("splitFor(%+v) = %q, want %q", c.cell, got, c.want)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := RunShard(ctx, mustSpec(t, SpecNameCI), "x", RunOptions{}); err == nil || !strings.Contains(err.Error(), "stopped") {
		t.Errorf("cancelled run: %v", err)
	}
}

func TestAnalytic(t *testing.T) {
	w, l, h := Analytic()
	// §1: 83 333 segments, one loss in 5·10⁹ packets, an event per 1.6 h.
	if math.Abs(w-83333) > 1 || l < 4.5e9 || l > 5.5e9 || math.Abs(h-1.6) > 0.05 {
		t.Errorf("window %.0f, packets per loss %.3g, hours per event %.2f", w, l, h)
	}
}

func TestAnalyseLong(t *testing.T) {
	tr := []Point{{T: 0, Cwnd: 2}, {T: 1, Cwnd: 50}, {T: 2, Cwnd: 100}, {T: 3, Cwnd: 50}, {T: 4, Cwnd: 25}, {T: 5, Cwnd: 60}, {T: 6, Cwnd: 100}}
	lf := AnalyseLong(tr)
	if lf.PeakCwnd != 100 || lf.PeakS != 2 || lf.RecoveryS != 4 {
		t.Errorf("%+v, want peak 100 at 2 s, recovery 4 s", lf)
	}
	if lf := AnalyseLong(tr[:5]); lf.RecoveryS != -1 {
		t.Errorf("unrecovered: %+v", lf)
	}
	if g := Growth(tr, 1000, 50000, 100000); g != 1 {
		t.Errorf("growth %v, want 1", g)
	}
	if g := Growth(tr, 1000, 50000, 200000); g != -1 {
		t.Errorf("growth to an unreached window %v, want -1", g)
	}
}

// TestDelayedACKsDoubleGrowth is the paper's 24.35 s predicted vs 48.54 s
// measured: with ns-2's per-ACK growth, delayed ACKs (one ACK per two
// segments) halve the additive increase.
func TestDelayedACKsDoubleGrowth(t *testing.T) {
	if testing.Short() {
		t.Skip("long single-goroutine simulation: the race phase (-short) leaves it to the integration phase")
	}
	s := mustSpec(t, SpecNameCI)
	g := map[bool]float64{}
	var rtt time.Duration
	for _, d := range []bool{true, false} {
		o, sc := runCell(t, s, Cell{Kind: "growth", Bottleneck: s.GrowthBottleneck, CC: NS2Reno, DelAck: d})
		g[d] = Growth(o.Fine, s.MSS, s.SsthreshBytes, s.GrowthTargetBytes)
		rtt = sc.RTT()
		if o.Drops != 0 {
			t.Errorf("delack=%v: %d drops in the loss-free growth run", d, o.Drops)
		}
	}
	pred := float64(s.GrowthTargetBytes-s.SsthreshBytes) * rtt.Seconds() / float64(s.MSS)
	t.Logf("predicted %.2f s, without delayed ACKs %.2f s, with %.2f s", pred, g[false], g[true])
	if g[false] <= 0 || math.Abs(g[false]-pred)/pred > 0.1 {
		t.Errorf("growth without delayed ACKs %.2f s, want within 10%% of T = (CW2 − CW1)·RTT/MSS = %.2f s", g[false], pred)
	}
	if r := g[true] / g[false]; r < 1.7 || r > 2.3 {
		t.Errorf("delayed ACKs: growth %.2f s vs %.2f s, ratio %.2f, want ≈ 2", g[true], g[false], r)
	}
}

// TestScaledTrend is the paper's trend on the CI-sized scenario (rates
// and duration ÷ 50, docs/high-bdp.md "Scaling"): under ns-2's NewReno
// the utilisation of L falls from the smallest bottleneck to the largest,
// and an algorithm for high-BDP paths recovers some of it at the largest.
func TestScaledTrend(t *testing.T) {
	if testing.Short() {
		t.Skip("a minute of simulation")
	}
	s := mustSpec(t, SpecNameCI)
	util := func(bw, cc string) float64 {
		o, _ := runCell(t, s, Cell{Kind: "grid", Bottleneck: bw, CC: cc, Seed: 1, Buffer: s.Buffer, DelAck: true})
		t.Logf("%s %s: utilisation %.3f goodput %.3f drops %d", bw, cc, o.Utilisation, o.Goodput, o.Drops)
		return o.Utilisation
	}
	small, large := util("100M", NS2Reno), util("10G", NS2Reno)
	if small-large < 0.05 {
		t.Errorf("NewReno: utilisation %.3f at 100M/50, %.3f at 10G/50: want a fall of at least 5 points", small, large)
	}
	// The bar: one of them reaches 80 % where NewReno does not.
	best := max(util("10G", "cubic"), util("10G", "highspeed"))
	if best < 0.8 || best-large < 0.05 {
		t.Errorf("10G/50: best of CUBIC and HighSpeed %.3f vs NewReno %.3f: want >= 0.80 and at least 5 points more", best, large)
	}
}

func TestDeterministicAndBounded(t *testing.T) {
	s := mustSpec(t, SpecNameCI)
	s.Scale = 1000 // 10 Mbit/s, 3.6 s: a quick cell
	c := Cell{Kind: "grid", Bottleneck: "10G", CC: NS2Reno, Seed: 3, Buffer: s.Buffer, DelAck: true}
	a, sc := runCell(t, s, c)
	b, _ := runCell(t, s, c)
	a.WallS, b.WallS, a.CPUS, b.CPUS = 0, 0, 0, 0
	if !reflect.DeepEqual(a, b) {
		t.Error("the same cell gave two outcomes")
	}
	if n := int(sc.Duration/sc.TraceEvery) + 1; len(a.Trace) > n || len(a.Trace) < n-1 {
		t.Errorf("trace of %d points, want about %d (one per %v)", len(a.Trace), n, sc.TraceEvery)
	}
	if n := int(min(sc.FineFor, sc.Duration)/sc.FineEvery) + 1; len(a.Fine) > n {
		t.Errorf("fine trace of %d points, want at most %d", len(a.Fine), n)
	}
	if a.Utilisation <= 0 || a.Utilisation > 1 || a.Goodput > a.Utilisation {
		t.Errorf("utilisation %.3f, goodput %.3f", a.Utilisation, a.Goodput)
	}
	// Every algorithm's segments fit the links (SACK and timestamps
	// included) and every one moves data.
	for _, cc := range s.Algorithms {
		c.CC = cc
		o, _ := runCell(t, s, c)
		if o.Oversized != 0 || o.Goodput < 0.2 {
			t.Errorf("%s: %d oversized packets, goodput %.3f", cc, o.Oversized, o.Goodput)
		}
	}
}

func TestShardsMergeToTheWholeRun(t *testing.T) {
	if testing.Short() {
		t.Skip("long single-goroutine simulation: the race phase (-short) leaves it to the integration phase")
	}
	s := mustSpec(t, SpecNameCI)
	s.Scale, s.GrowthDuration = 2000, 0
	s.Bottlenecks, s.Algorithms, s.BufferSweep = []string{"100M", "10G"}, []string{NS2Reno, "cubic"}, []float64{1}
	whole, err := RunShard(context.Background(), s, "x", RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for i := range 3 {
		doc, err := RunShard(context.Background(), s, "x", RunOptions{Shard: i, Count: 3})
		if err != nil {
			t.Fatal(err)
		}
		d := t.TempDir()
		if err := WriteShard(d, doc); err != nil {
			t.Fatal(err)
		}
		if !IsShardDir(d) {
			t.Fatal("IsShardDir false")
		}
		dirs = append(dirs, d)
	}
	if _, _, err := Merge(dirs[:2]); err == nil {
		t.Error("merged 2 of 3 shards")
	}
	if _, _, err := Merge(append(dirs, dirs[0])); err == nil {
		t.Error("merged a shard twice")
	}
	rs, name, err := Merge([]string{dirs[2], dirs[0], dirs[1]})
	if err != nil || name != "x" {
		t.Fatal(err, name)
	}
	strip := func(m map[string]float64) map[string]float64 {
		for k := range m {
			if strings.Contains(k, ".perf.") {
				delete(m, k)
			}
		}
		return m
	}
	if a, b := strip(Summary(s, whole.Results)), strip(Summary(s, rs)); !reflect.DeepEqual(a, b) {
		t.Errorf("merged summary differs from the whole run's:\n%v\n%v", a, b)
	}
	// Cells in parallel, the costliest first: the same cells, in grid
	// order, with the same outcomes apart from the timings.
	par, err := RunShard(context.Background(), s, "x", RunOptions{Workers: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(par.Results) != len(whole.Results) {
		t.Fatalf("%d cells with 3 workers, %d with one", len(par.Results), len(whole.Results))
	}
	for i, r := range par.Results {
		w := whole.Results[i]
		if r.Outcome.CPUS <= 0 {
			t.Errorf("cell %s: thread CPU time %v", r.Cell.Label(), r.Outcome.CPUS)
		}
		a, b := *r.Outcome, *w.Outcome
		a.CPUS, a.WallS, b.CPUS, b.WallS = 0, 0, 0, 0
		if r.Index != w.Index || r.Cell != w.Cell || !reflect.DeepEqual(a, b) {
			t.Errorf("result %d: cell %s (index %d) with 3 workers, %s (index %d) with one, or their outcomes differ", i, r.Cell.Label(), r.Index, w.Cell.Label(), w.Index)
		}
	}
	files, err := WriteOutputs(t.TempDir(), s, rs)
	if err != nil || len(files) < 5 {
		t.Errorf("outputs %v: %v", files, err)
	}
	// Without a buffer sweep there is no buffer figure (a log axis of
	// one point would not draw).
	s.BufferSweep = nil
	var grid []CellResult
	for _, r := range rs {
		if r.Cell.Kind == "grid" {
			grid = append(grid, r)
		}
	}
	if _, err := WriteOutputs(t.TempDir(), s, grid); err != nil {
		t.Errorf("outputs without a sweep: %v", err)
	}
}

// TestNS2RenoName: "ns2-reno" is ns2-newreno's window rule with Reno
// recovery; every other name keeps the default (NewReno) recovery, so
// existing specs run as before.
func TestNS2RenoName(t *testing.T) {
	a, err := newAlgorithm(NS2RenoReno, 44, nil)
	if err != nil {
		t.Fatal(err)
	}
	if a.Name() != NS2RenoReno {
		t.Errorf("name %q, want %q", a.Name(), NS2RenoReno)
	}
	if got := recoveryFor(NS2RenoReno); got != tcp.RecoveryReno {
		t.Errorf("recovery for %s: %v, want reno", NS2RenoReno, got)
	}
	if got := recoveryFor(NS2NewRenoInflation); got != tcp.RecoveryNewRenoInflation {
		t.Errorf("recovery for %s: %v, want newreno-inflation", NS2NewRenoInflation, got)
	}
	for _, n := range []string{NS2Reno, "cubic", "bbr"} {
		if got := recoveryFor(n); got != tcp.RecoveryNewReno {
			t.Errorf("recovery for %s: %v, want newreno", n, got)
		}
	}
}
