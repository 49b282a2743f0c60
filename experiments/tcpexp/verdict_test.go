package tcpexp

import (
	"math"
	"testing"
)

// Verdicts on made-up values: the cut is measured against the floor (0
// for probe cells, the reference switch for bulk cells), a baseline at
// its floor is cut only if the mitigation stays there, and space lost
// above 10 % fails whatever the cut.
func TestVerdictsAgainstTheFloor(t *testing.T) {
	r := &Result{Spec: &Spec{Timers: []string{"linux"}, Cells: []CellSpec{{ID: "c"}}}}
	set := func(m string, v map[string]float64) {
		for k, x := range v {
			r.Values["mitigation."+m+"."+k] = []float64{x}
		}
	}
	r.Values = map[string][]float64{}
	set(BaselineName, map[string]float64{
		"handshake.syn_retx_share.L3500.10pps": 0.2, "handshake.syn_retx_share.L3500.5000pps": 1, "data.share_gt_1.5s.L3500.10pps": 0.5,
		"c.syn_retrans_per_flow": 0, "c.timeouts_per_flow": 3, "c.ref.syn_retrans_per_flow": 0, "c.ref.timeouts_per_flow": 0.7,
	})
	good := map[string]float64{"handshake.syn_retx_share.L3500.10pps": 0, "handshake.syn_retx_share.L3500.5000pps": 0.04,
		"data.share_gt_1.5s.L3500.10pps": 0, "c.syn_retrans_per_flow": 0, "c.timeouts_per_flow": 0.8}
	set("a+b", good)
	set("big", good)
	worse := map[string]float64{}
	for k, v := range good {
		worse[k] = v
	}
	worse["c.syn_retrans_per_flow"] = 0.1
	set("worse", worse)
	r.Mitigation = []MitigationResult{{Mitigation: Mitigation{Name: BaselineName}}, {Mitigation: Mitigation{Name: "a+b"}, SpaceLost: 0.05},
		{Mitigation: Mitigation{Name: "big"}, SpaceLost: 0.2}, {Mitigation: Mitigation{Name: "worse"}}}
	vs := r.Verdicts()
	if len(vs) != 3 {
		t.Fatalf("%d verdicts", len(vs))
	}
	ab := vs[0]
	if want := (3 - 0.8) / (3 - 0.7); math.Abs(ab.Cut["c.timeouts_per_flow"]-want) > 1e-12 || math.Abs(ab.MinCut-want) > 1e-12 {
		t.Errorf("a+b: cut %v, min %g; want %g against the reference floor", ab.Cut, ab.MinCut, want)
	}
	if !ab.Pass || ab.Single || ab.Cut["c.syn_retrans_per_flow"] != 1 {
		t.Errorf("a+b: %+v", ab)
	}
	if vs[1].Pass || !vs[1].Single {
		t.Errorf("big: passes with 20 %% of the TCAM lost: %+v", vs[1])
	}
	if vs[2].Pass || !math.IsInf(vs[2].MinCut, -1) {
		t.Errorf("worse: a measure off its floor of 0 must fail: %+v", vs[2])
	}
}
