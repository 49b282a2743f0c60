package experiments

import "testing"

// The numbers issue 4 says the simulation must show with the pica8-p3297
// profile and one parameter set. These are assertions on the model's
// output: they fail when the model or its calibration drifts.
func TestPaperMustShow(t *testing.T) {
	if testing.Short() {
		t.Skip("runs ~30 simulated experiments")
	}
	at10 := func(e *ExperimentSpec) { e.Rates = []float64{10} }
	spec := paperSubset(t, map[string]func(*ExperimentSpec){
		"table1":    nil,
		"fig5":      nil,
		"handshake": nil,
		"data":      func(e *ExperimentSpec) { at10(e); e.BaseLoads = []int{3500} },
	})
	res := execute(t, spec, Options{})
	pn := PaperNumbers()

	// Paper numbers: times within ±20 %, shares within ±10 points.
	for _, key := range []string{
		"table1.max_delay_s.1000pps",
		"table1.max_delay_s.5000pps",
		"table1.controller_mean_s.5000pps",
		"fig5.max_delay_s.ascending",
		"handshake.bins.L500.10pps",
		"handshake.bins.L2000.10pps",
		"handshake.bins.L3500.10pps",
	} {
		got := value(t, res, key)
		if !pn[key].Within(got) {
			t.Errorf("%s = %s, paper %s", key, pn[key].Cmp.Format(got), pn[key].Describe())
		}
	}
	if got := value(t, res, "data.share_gt_1.5s"); !pn["data.share_gt_1.5s.L3500.10pps"].Within(got) {
		t.Errorf("data share beyond 1.5 s at L = 3 500, 10 pps = %.3f, paper 0.732", got[0])
	}

	// L = 500 and 2 000 at 10 pps: every SYN RTT under D1 = 5.8 s.
	for _, l := range []string{"L500", "L2000"} {
		if max := value(t, res, "handshake.max_rtt_s."+l+".10pps")[0]; max >= 5.8 {
			t.Errorf("handshake %s at 10 pps: max RTT %.3f s, paper: all < 5.8 s", l, max)
		}
	}

	// Fig. 5: descending and constant stay flat — their largest delay is
	// far below the ascending one and close to their own mean.
	asc := value(t, res, "fig5.max_delay_s.ascending")[0]
	for _, p := range []string{"descending", "constant"} {
		mx := value(t, res, "fig5.max_delay_s."+p)[0]
		mean := value(t, res, "fig5.mean_delay_s."+p)[0]
		if mx > asc/10 || mx > 3*mean {
			t.Errorf("fig5 %s: max %.3f s, mean %.3f s; paper: nearly flat (ascending max %.3f s)", p, mx, mean, asc)
		}
	}

	// Table 1: batches of 25 at 5 000 pps and a controller time of 1–2 ms
	// per flow when Packet-Ins come one at a time (10 pps).
	for _, c := range res.Cells {
		if c.Exp.ID == "table1" && c.Rate == 5000 {
			// Besides the 400 flows, the two hosts' ARP announcements of the
			// warm-up make one batch of their own before the run. The
			// flows leave in batches of 25, except the first (cut short by
			// the periodic flush timer, whose phase the first miss does
			// not choose) and the last.
			a := c.Outcome.Agent
			if full := uint64(400 / 25); a.Sent != 402 || a.Batches < 1+full || a.Batches > 1+full+1 {
				t.Errorf("table1 5000 pps: %d Packet-Ins in %d batches, paper: the 400 in batches of 25", a.Sent, a.Batches)
			}
		}
	}
	if ct := value(t, res, "table1.controller_mean_s.10pps")[0]; ct < 0.001 || ct > 0.004 {
		t.Errorf("table1 10 pps: controller mean %.4f s, paper: 1–2 ms per flow", ct)
	}
	if v := res.TrendViolations(); len(v) > 0 {
		t.Errorf("trend violations: %v", v)
	}
	if t.Failed() {
		for _, c := range res.Compare() {
			if c.Ours != nil {
				t.Logf("%s: ours %s, paper %s", c.Key, c.Paper.Cmp.Format(c.Ours), c.Paper.Describe())
			}
		}
	}
}
