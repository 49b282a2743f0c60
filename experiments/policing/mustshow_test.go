package policing

import (
	"math"
	"strings"
	"testing"
	"time"
)

func loadSpec(t testing.TB) *Spec {
	t.Helper()
	s, err := LoadSpec("")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Must-show (issue 14, sim): the three behavioural bullets on the
// simulator's summary, first server, every mode except the unlimited
// download (a 1 Gbit/s flow: seconds of CPU, and no bullet needs it).
func TestSimMustShow(t *testing.T) {
	if testing.Short() {
		// Whole simulated TCP runs: minutes under -race; the integration
		// phase (no -short) runs them.
		t.Skip("runs TCP simulations")
	}
	s := loadSpec(t)
	res, err := Run(s, Sim{}, Options{Select: func(c Cell) bool {
		return c.Server == s.Servers[0] && !(c.Mode == "nolimit" && !c.Upload)
	}})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range SortedKeys(res.Summary) {
		if !strings.Contains(k, ".server.") {
			t.Logf("%s = %.4g", k, res.Summary[k])
		}
	}
	for _, c := range MustShow(res.Summary, "sim") {
		if !c.OK && c.Advisory {
			t.Logf("MISS (advisory) %s: %s", c.Name, c.Detail)
		} else if !c.OK {
			t.Errorf("%s: %s", c.Name, c.Detail)
		} else {
			t.Logf("ok %s: %s", c.Name, c.Detail)
		}
	}
	if err := res.Write(t.TempDir()); err != nil {
		t.Fatal(err)
	}
}

func TestPhaseLocked(t *testing.T) {
	for key, want := range map[string]bool{
		"cubic.police.down.goodput_mbps":      true,
		"cubic.police.up.goodput_mbps":        true,
		"bbr_client.police.down.goodput_mbps": true,  // the server sends, with CUBIC
		"bbr_client.police.up.goodput_mbps":   false, // the client sends, with BBR
		"bbr.police.down.goodput_mbps":        false,
		"cubic.shape.down.goodput_mbps":       false,
		"cubic.shape_loss.up.goodput_mbps":    false,
		"e2e.up.goodput_mbps":                 false,
	} {
		if got := PhaseLocked(key); got != want {
			t.Errorf("PhaseLocked(%q) = %v, want %v", key, got, want)
		}
	}
}

func TestBand(t *testing.T) {
	quiet := map[string]float64{"policing.sim.cubic.police.down.goodput_mbps": 7, "policing.sim.cubic.shape.down.goodput_mbps": 19}
	noisy := map[string]float64{"policing.sim.cubic.police.down.goodput_mbps": 17}
	for live, ok := range map[float64]bool{4.8: false, 5: true, 12: true, 17: true, 17.5: false} {
		got := Band(quiet, noisy, map[string]float64{
			"policing.live.cubic.police.down.goodput_mbps":              live,
			"policing.live.server.front.cubic.police.down.goodput_mbps": live, // a per-server copy: not checked
			"policing.live.cubic.shape.down.goodput_mbps":               1,    // not phase-locked: Agree's
		}, 0.3)
		if len(got) != 1 || got[0].OK != ok {
			t.Errorf("live %v: %+v, want one check OK=%v", live, got, ok)
		}
	}
	if got := Band(quiet, map[string]float64{}, map[string]float64{"policing.live.cubic.police.down.goodput_mbps": 7}, 0.3); len(got) != 1 || got[0].OK {
		t.Errorf("no noisy value: %+v, want one failed check", got)
	}
}

// The live goodput bounds with a phase-locked side come from the
// simulator's band (bandBounds): the ratio at the noisy end, the smaller
// over the directions (the larger for "at most"). A live run inside the
// band passes them, one without policing (policed = shaped) fails.
func TestLiveBoundsFromBand(t *testing.T) {
	sim := map[string]float64{}
	noisy := map[string]float64{}
	for _, d := range []string{"up", "down"} {
		sim["policing.sim.cubic.shape."+d+".goodput_mbps"] = 19
		sim["policing.sim.bbr.police."+d+".goodput_mbps"] = 18
		sim["policing.sim.cubic.police."+d+".goodput_mbps"] = 7
	}
	sim["policing.sim.bbr_client.police.up.goodput_mbps"] = 18
	noisy["policing.sim.cubic.police.up.goodput_mbps"] = 16
	noisy["policing.sim.cubic.police.down.goodput_mbps"] = 17
	noisy["policing.sim.bbr_client.police.down.goodput_mbps"] = 16.5
	b := bandBounds(sim, noisy)
	for name, want := range map[string]float64{
		"cubic shape/police goodput":      19.0 / 17, // the down direction's: the smaller
		"bbr/cubic policed goodput":       18.0 / 17,
		"bbr client-only raises upload":   18.0 / 16,
		"bbr client-only leaves download": 16.5 / 18,
	} {
		if got, ok := b[name]; !ok || math.Abs(got-want) > 1e-12 {
			t.Errorf("%s: bound %v (present %v), want %v", name, got, ok, want)
		}
	}
	if _, ok := bandBounds(sim, map[string]float64{})["cubic shape/police goodput"]; ok {
		t.Error("a bound without the noisy sim")
	}
	live := func(police float64) map[string]float64 {
		m := map[string]float64{}
		for _, d := range []string{"up", "down"} {
			m["policing.live.cubic.shape."+d+".goodput_mbps"] = 19
			m["policing.live.cubic.shape."+d+".retransmits"] = 3
			m["policing.live.bbr.police."+d+".goodput_mbps"] = 18.5
			m["policing.live.bbr.police."+d+".retransmits"] = 1400
			m["policing.live.cubic.police."+d+".goodput_mbps"] = police
			m["policing.live.cubic.police."+d+".retransmits"] = 60
		}
		m["policing.live.bbr_client.police.up.goodput_mbps"] = 18.5
		m["policing.live.bbr_client.police.down.goodput_mbps"] = police
		return m
	}
	hardFailures := func(police float64) []string {
		var out []string
		for _, c := range MustShowLive(live(police), sim, noisy) {
			if !c.Advisory && !c.OK {
				out = append(out, c.Name+": "+c.Detail)
			}
		}
		return out
	}
	// 15.2 Mbit/s was live policed CUBIC beside a memory-bound job; the
	// fixed ×1.4 bound failed it.
	for _, police := range []float64{7, 12, 15.2} {
		if f := hardFailures(police); len(f) != 0 {
			t.Errorf("policed CUBIC at %v Mbit/s: %v", police, f)
		}
	}
	if f := hardFailures(19); len(f) < 4 {
		t.Errorf("no policing (policed = shaped = 19 Mbit/s): %d hard failures %v, want every goodput bound to fail", len(f), f)
	}
}

// The phase lock PhaseLocked names, on the simulator: host noise lifts a
// policed CUBIC flow's goodput (7.24 Mbit/s without, 12.9 with 0.3 ms,
// 17.0 with 1 ms) and leaves a shaped one where it was.
func TestHostJitterBreaksPhaseLock(t *testing.T) {
	if testing.Short() {
		t.Skip("runs TCP simulations")
	}
	s := loadSpec(t)
	s.Duration, s.Omit = Duration(10*time.Second), Duration(2*time.Second)
	sel := func(c Cell) bool {
		return c.Server == s.Servers[0] && c.Group == "cubic" && !c.Upload && (c.Mode == "police" || c.Mode == "shape")
	}
	run := func(j time.Duration) map[string]float64 {
		t.Helper()
		sj := *s
		sj.HostJitter = Duration(j)
		res, err := Run(&sj, Sim{}, Options{Select: sel})
		if err != nil {
			t.Fatal(err)
		}
		return res.Summary
	}
	quiet, noisy := run(0), run(time.Millisecond)
	const police, shape = "policing.sim.cubic.police.down.goodput_mbps", "policing.sim.cubic.shape.down.goodput_mbps"
	t.Logf("policed %.3f → %.3f Mbit/s, shaped %.3f → %.3f with 1 ms of host noise", quiet[police], noisy[police], quiet[shape], noisy[shape])
	if noisy[police] < 1.5*quiet[police] {
		t.Errorf("policed CUBIC: %.3f Mbit/s with 1 ms of host noise, %.3f without: want ≥ ×1.5", noisy[police], quiet[police])
	}
	if d := noisy[shape]/quiet[shape] - 1; d < -0.05 || d > 0.05 {
		t.Errorf("shaped CUBIC: %.3f Mbit/s with host noise, %.3f without: want within 5 %%", noisy[shape], quiet[shape])
	}
}
