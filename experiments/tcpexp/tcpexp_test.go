package tcpexp

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBuiltinSpecsLoad(t *testing.T) {
	names := BuiltinSpecNames()
	for _, want := range []string{"paper-tcp", "mitigations"} {
		if !IsSpec(want) {
			t.Errorf("%s is not a built-in TCP spec (have %v)", want, names)
		}
	}
	for _, n := range names {
		if _, err := LoadSpec(n); err != nil {
			t.Errorf("%s: %v", n, err)
		}
	}
	if IsSpec("paper") {
		t.Error("paper is package experiments' spec")
	}
}

func TestParseMitigation(t *testing.T) {
	m, err := ParseMitigation("hermes+syn_first+descending+cover_rules+allowance+frto+linear_syn+keep_iw")
	if err != nil {
		t.Fatal(err)
	}
	if m.Layout != "hermes" || m.Policy != "syn_first" || !m.Descending || !m.SDN.CoverRules || m.SDN.FirstPacketAllowance != FirstPacketAllowance ||
		!m.SDN.FRTO || m.SDN.LinearSYN != linearSYNCount || !m.SDN.KeepIW {
		t.Errorf("parsed %+v", m)
	}
	for _, bad := range []string{"", "nope", "hermes+ruletris", "fifo+syn_first", "lowest-first+"} {
		if _, err := ParseMitigation(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestSpecValidate(t *testing.T) {
	s, err := LoadSpec("testdata/small.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for name, mod := range map[string]func(*Spec){
		"timers":     func(s *Spec) { s.Timers = []string{"bsd"} },
		"duration":   func(s *Spec) { s.Duration = 0 },
		"late start": func(s *Spec) { s.Cells[0].StartRate = 1 },
		"priority":   func(s *Spec) { s.Cells[0].Priority = "up" },
		"mitigation": func(s *Spec) { s.Mitigations = append(s.Mitigations, "magic") },
		"dup id":     func(s *Spec) { s.Cells = append(s.Cells, s.Cells[0]) },
	} {
		c := *s
		c.Cells = append([]CellSpec(nil), s.Cells...)
		c.Mitigations = append([]string(nil), s.Mitigations...)
		mod(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// The reduced mitigations grid end to end: every key of every
// mitigation, the TCP-only mitigation's probe cells are the baseline's,
// the layout that moves nothing on ascending inserts is no worse than
// the baseline at any probe cell, hermes loses its shadow slice, the
// outputs are written.
func TestReducedMitigations(t *testing.T) {
	if testing.Short() {
		// Whole simulated TCP runs: minutes under -race; the integration
		// phase (no -short) runs them.
		t.Skip("runs TCP simulations")
	}
	s, err := LoadSpec("testdata/small.yaml")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Execute(context.Background(), s, Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	probe := []string{"fig5.max_delay_s", "handshake.syn_retx_share.L3500.10pps", "handshake.syn_retx_share.L3500.5000pps",
		"data.share_gt_1.5s.L3500.10pps", "table1.max_delay_s.5000pps"}
	for _, m := range s.Mitigations {
		for _, k := range append(probe, "tcam_space_lost", "tcp.goodput_ratio.linux", "tcp.timeouts_per_flow.berkeley", "tcp.share_time_cwnd1.linux") {
			if _, ok := r.Values["mitigation."+m+"."+k]; !ok {
				t.Errorf("no key mitigation.%s.%s", m, k)
			}
		}
	}
	val := func(m, k string) float64 { return r.Values["mitigation."+m+"."+k][0] }
	for _, k := range probe {
		if val("frto", k) != val("baseline", k) {
			t.Errorf("%s: frto changes the switch's probe cells (%g against %g)", k, val("frto", k), val("baseline", k))
		}
		if val("lowest-first", k) > val("baseline", k) {
			t.Errorf("%s: lowest-first %g worse than the baseline's %g on ascending inserts", k, val("lowest-first", k), val("baseline", k))
		}
	}
	if l := val("hermes", "tcam_space_lost"); !(l > 0 && l <= 0.10) || val("baseline", "tcam_space_lost") != 0 {
		t.Errorf("space lost: hermes %g, baseline %g", l, val("baseline", "tcam_space_lost"))
	}
	if val("cover_rules", "tcp.timeouts_per_flow.linux") != 0 {
		// No rule is ever swapped in: the switch adds nothing but the
		// hit delay, and three flows on 100 Mbit/s with a 100-packet
		// queue do not time out in 2 s.
		t.Errorf("cover rules: %g timeouts per flow", val("cover_rules", "tcp.timeouts_per_flow.linux"))
	}
	vs := r.Verdicts()
	if len(vs) != len(s.Mitigations)-1 {
		t.Errorf("%d verdicts for %d mitigations", len(vs), len(s.Mitigations)-1)
	}
	for _, v := range vs {
		if v.Pass != (v.MinCut >= 0.95 && v.SpaceLost <= 0.10) || math.IsNaN(v.MinCut) {
			t.Errorf("verdict %+v", v)
		}
	}
	dir := filepath.Join(t.TempDir(), "out")
	files, err := WriteOutputs(dir, r)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{SummaryFile, ReportFile, MitigationsFile, "mitigations.csv", "mitigations.png", "flows.csv",
		"tcp_linux_profile_cwnd.csv", "tcp_berkeley_reference_cwnd.png"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s: %v (wrote %v)", f, err, files)
		}
	}
	md, _ := os.ReadFile(filepath.Join(dir, MitigationsFile))
	if !strings.Contains(string(md), "| lowest-first+cover_rules |") {
		t.Error("mitigations.md has no row for lowest-first+cover_rules")
	}
	// A second write replaces the first; a foreign directory is refused.
	if _, err := WriteOutputs(dir, r); err != nil {
		t.Errorf("rewrite: %v", err)
	}
	foreign := t.TempDir()
	os.WriteFile(filepath.Join(foreign, "x.txt"), nil, 0o644)
	if _, err := WriteOutputs(foreign, r); err == nil {
		t.Error("wrote over a directory that is not a run's outputs")
	}
}

// The built-in paper-tcp spec, shortened: its summary keys per timer
// profile, the reference's beside them, and the goodput ratio is the
// ratio of the two goodputs.
func TestPaperTCPShortened(t *testing.T) {
	if testing.Short() {
		// Whole simulated TCP runs: minutes under -race; the integration
		// phase (no -short) runs them.
		t.Skip("runs TCP simulations")
	}
	s, err := LoadSpec("paper-tcp")
	if err != nil {
		t.Fatal(err)
	}
	s.Duration = 2 * 1e9
	for i := range s.Cells {
		s.Cells[i].Flows = 3
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	r, err := Execute(context.Background(), s, Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, tn := range []string{"linux", "berkeley"} {
		for _, k := range []string{"goodput_ratio", "timeouts_per_flow", "share_time_cwnd1"} {
			for _, c := range []string{"tcp", "tcp_inserts"} {
				if _, ok := r.Values[c+"."+k+"."+tn]; !ok {
					t.Errorf("no key %s.%s.%s", c, k, tn)
				}
			}
		}
		g, ref, ratio := r.Values["tcp.goodput_mbps."+tn][0], r.Values["tcp.ref.goodput_mbps."+tn][0], r.Values["tcp.goodput_ratio."+tn][0]
		if !(ref > 0) || math.Abs(ratio-g/ref) > 1e-12 {
			t.Errorf("%s: goodput %g / %g, ratio %g", tn, g, ref, ratio)
		}
	}
	if len(r.Runs) != 2*2*2 {
		t.Errorf("%d runs, want cells × timers × switches = 8", len(r.Runs))
	}
}
