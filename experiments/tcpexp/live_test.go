package tcpexp

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/experiments"
	"github.com/pseudocong/pseudocong/experiments/live"
	"github.com/pseudocong/pseudocong/profile"
)

// paper-tcp's live part is its cache cell with Linux timers; the
// near-full cell and Berkeley timers are named with their reasons.
func TestLiveCellsOfPaperTCP(t *testing.T) {
	s, err := LoadSpec("paper-tcp")
	if err != nil {
		t.Fatal(err)
	}
	cells, skipped := LiveCells(s)
	if len(cells) != 1 || cells[0].ID != "tcp" || cells[0].TCAMCapacity != 4 {
		t.Errorf("live cells %+v, want the 4-entry cache cell tcp", cells)
	}
	if len(skipped) != 2 || !strings.Contains(skipped[0], "berkeley") || !strings.Contains(skipped[1], "tcp_inserts") {
		t.Errorf("skipped %q", skipped)
	}
	top, err := experiments.LoadTopology(s.Topology)
	if err != nil {
		t.Fatal(err)
	}
	l, err := liveLink(top)
	if err != nil {
		t.Fatal(err)
	}
	// Two 1 ms links: 2 ms host to host, on each switch port's egress.
	if l.Rate != "100mbit" || l.Qdisc != "droptail,limit=100" || l.Delay != 2*time.Millisecond {
		t.Errorf("link %+v", l)
	}
	top.Links[1].Rate = "1gbit"
	if _, err := liveLink(top); err == nil {
		t.Error("links of different rates accepted")
	}
	if kernelCC("newreno") != "reno" || kernelCC("") != "reno" || kernelCC("cubic") != "cubic" {
		t.Error("kernelCC")
	}
	bad := *s
	bad.Live.Rounds = maxLiveRounds + 1
	if err := bad.Validate(); err == nil {
		t.Error("live rounds beyond the bound accepted")
	}
	bad.Live = LiveSpec{Duration: -time.Second}
	if err := bad.Validate(); err == nil {
		t.Error("negative live duration accepted")
	}
}

// The live keys pool rounds: the goodput ratio is the ratio of the mean
// goodputs, the per-flow counts are means, the rounds' own ratios are
// listed.
func TestLiveSummaryPoolsRounds(t *testing.T) {
	run := func(name string, recv uint64, rto, synRetx uint64, share float64, nstatTO uint64) live.BulkResult {
		r := live.BulkResult{Profile: name, Duration: 2 * time.Second, Nstat: map[string]uint64{"TcpExtTCPTimeouts": nstatTO, "TcpRetransSegs": 10},
			SwapIns: 100, QueueDrops: 5}
		for range 2 {
			r.Flows = append(r.Flows, live.KernelFlow{Established: true, Received: recv, Timeouts: rto, SYNRetrans: synRetx, ShareCwnd1: share})
		}
		return r
	}
	// Round 1: 2 × 2.5 MB in 2 s = 20 Mbit/s against 40; round 2: 30 against 40.
	lr := &LiveResult{Sim: &Result{}, Cells: []LiveCell{{
		Cell:      CellSpec{ID: "tcp", Flows: 2},
		Profile:   []live.BulkResult{run("pica8-p3297", 2_500_000, 1, 0, 0.01, 2), run("pica8-p3297", 3_750_000, 3, 1, 0.03, 4)},
		Reference: []live.BulkResult{run("ideal", 5_000_000, 0, 0, 0, 0), run("ideal", 5_000_000, 0, 0, 0, 0)},
	}}}
	v := lr.summarize()
	want := map[string]float64{
		"live.tcp.goodput_mbps.linux":            25,
		"live.tcp.ref.goodput_mbps.linux":        40,
		"live.tcp.goodput_ratio.linux":           25.0 / 40,
		"live.tcp.timeouts_per_flow.linux":       2,
		"live.tcp.syn_retrans_per_flow.linux":    0.5,
		"live.tcp.share_time_cwnd1.linux":        0.02,
		"live.tcp.nstat_timeouts_per_flow.linux": 1.5,
		"live.tcp.retrans_segs_per_flow.linux":   5,
		"live.tcp.established_share.linux":       1,
		"live.tcp.swap_ins":                      100,
	}
	for k, x := range want {
		got, ok := v[k]
		if !ok || len(got) != 1 || math.Abs(got[0]-x) > 1e-9 {
			t.Errorf("%s = %v, want %g", k, got, x)
		}
	}
	if r := v["live.tcp.rounds.goodput_ratio.linux"]; len(r) != 2 || math.Abs(r[0]-0.5) > 1e-9 || math.Abs(r[1]-0.75) > 1e-9 {
		t.Errorf("rounds %v, want 0.5, 0.75", r)
	}
	if _, ok := v["tcp.goodput_ratio.linux"]; ok {
		t.Error("ours' keys without a simulated run")
	}
	// summary.json: backend live, a list stays an array, a NaN ratio
	// (no reference goodput) is null.
	prof, err := profile.Load("pica8-p3297")
	if err != nil {
		t.Fatal(err)
	}
	lr.Spec, lr.Sim.Profile = &Spec{Name: "paper-tcp"}, prof
	lr.Values = map[string][]float64{"a": {1, 2}, "b": {math.NaN()}}
	sum := lr.Summary()
	if sum.Backend != experiments.BackendLive || sum.Profile != "pica8-p3297" {
		t.Errorf("summary %s/%s", sum.Backend, sum.Profile)
	}
	if a, ok := sum.Results["a"].([]any); !ok || len(a) != 2 {
		t.Errorf("list value %#v", sum.Results["a"])
	}
	if b, ok := sum.Results["b"]; !ok || b != nil {
		t.Errorf("NaN value %#v, want null", b)
	}
	if _, err := experiments.MarshalSummary(sum); err != nil {
		t.Error(err)
	}
}
