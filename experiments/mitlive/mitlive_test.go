package mitlive

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/agent"
	"github.com/pseudocong/pseudocong/experiments/live"
	"github.com/pseudocong/pseudocong/profile"
)

func TestParseVariant(t *testing.T) {
	v, err := ParseVariant("lowest-first+syn_first+cover_rules+tcp_frto=0+rto_min=50ms")
	if err != nil {
		t.Fatal(err)
	}
	if v.Switch.Layout != "lowest-first" || v.Switch.Policy != agent.SYNFirst || !v.Switch.SDN.CoverRules {
		t.Errorf("switch side: %+v", v.Switch)
	}
	if len(v.Sysctls) != 1 || v.Sysctls[0] != (live.Sysctl{Key: "net.ipv4.tcp_frto", Value: "0"}) || v.RTOMin != 50*time.Millisecond {
		t.Errorf("knobs: %+v %v", v.Sysctls, v.RTOMin)
	}
	kv := v.kernelVariant("x.yaml")
	if !kv.CoverRules || kv.RouteRTOMin != 50*time.Millisecond || kv.Name != v.Name || kv.Priority != "" {
		t.Errorf("kernel variant: %+v", kv)
	}
	if d, _ := ParseVariant("descending"); d.kernelVariant("p").Priority != "descending" {
		t.Errorf("descending: %+v", d.kernelVariant("p"))
	}
	for _, n := range DefaultVariants {
		if _, err := ParseVariant(n); err != nil {
			t.Errorf("default variant %s: %v", n, err)
		}
	}
	for _, bad := range []string{"", "sideways", "frto", "linear_syn", "rto_min=1.5ms", "rto_min=0s", "foo=1",
		"tcp_a.b=1", "tcp_frto=", "lowest-first+hermes", "fifo+syn_first", "rto_min=5ms+rto_min=6ms"} {
		if _, err := ParseVariant(bad); err == nil {
			t.Errorf("ParseVariant(%q): no error", bad)
		}
	}
}

// A switch-side variant gets a profile file with its layout and policy
// and the base profile's every other value; a knob-only variant keeps
// the base profile's name.
func TestSwitchProfile(t *testing.T) {
	dir := t.TempDir()
	base, err := profile.Load(DefaultProfile)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := ParseVariant("lowest-first+rate_limited")
	arg, p, err := v.switchProfile(DefaultProfile, dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(arg, dir) || p.TCAM.Layout != "lowest-first" || p.Agent.Scheduling != agent.RateLimited ||
		p.Agent.RateLimit != 1000 || p.Agent.BurstLimit != 250 || p.Name != "pica8-p3297+lowest-first+rate_limited" {
		t.Errorf("derived profile %s: %+v %+v", arg, p.TCAM, p.Agent)
	}
	if p.Agent.PacketInCost != base.Agent.PacketInCost || p.TCAM.Timing != base.TCAM.Timing {
		t.Errorf("derived profile changed other values")
	}
	k, _ := ParseVariant("tcp_syn_linear_timeouts=0")
	arg, p, err = k.switchProfile(DefaultProfile, dir)
	if err != nil || arg != DefaultProfile || p.Name != base.Name {
		t.Errorf("knob-only variant: %s %v %v", arg, p, err)
	}
	h, _ := ParseVariant("hermes")
	_, hp, err := h.switchProfile(DefaultProfile, dir)
	if err != nil {
		t.Fatal(err)
	}
	if lost, err := h.Switch.SpaceLost(hp); err != nil || !(lost > 0) {
		t.Errorf("hermes space lost %v, %v", lost, err)
	}
}

func TestVerdictsAndOutput(t *testing.T) {
	r := &Result{
		Config: Config{Profile: "pica8-p3297", Flows: 100, Rate: 100, BaseLoad: 1000, Priority: "ascending", Exchange: 100, Rounds: 3},
		Variants: []VariantResult{
			{Name: "baseline", Rounds: []Measure{{SYNRetrans: 300, DataRTOs: 4}, {SYNRetrans: 320, DataRTOs: 2}, {SYNRetrans: 280, DataRTOs: 0}}},
			{Name: "good", Rounds: []Measure{{SYNRetrans: 0}, {SYNRetrans: 10}, {SYNRetrans: 0}}},
			{Name: "lossy", SpaceLost: 0.2, Rounds: []Measure{{}, {}, {}}},
			{Name: "half", Rounds: []Measure{{SYNRetrans: 150, DataRTOs: 1}}},
		},
	}
	vs := r.Verdicts()
	if len(vs) != 3 {
		t.Fatalf("%d verdicts", len(vs))
	}
	if v := vs[0]; !v.Holds || v.SYNCut != 1 || v.RTOCut != 1 || v.NoRTOs {
		t.Errorf("good: %+v", v)
	}
	if vs[1].Holds {
		t.Errorf("lossy holds with 20 %% of the TCAM lost: %+v", vs[1])
	}
	if v := vs[2]; v.Holds || v.SYNCut != 0.5 || v.RTOCut != 0.5 {
		t.Errorf("half: %+v", v)
	}
	if s := r.Variants[0].Of(SYNRetrans); s != (Stat{Median: 300, Min: 280, Max: 320}) {
		t.Errorf("baseline stat %+v", s)
	}
	md := r.Markdown()
	for _, want := range []string{"| baseline | 300 (280–320) | — |", "| good | 0 (0–10) | 100 % |", "| lossy |", "| half | 150 | 50 % |"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	b, err := r.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc["variants"].([]any)) != 4 || len(doc["verdicts"].([]any)) != 3 {
		t.Errorf("json: %s", b)
	}
	// A reference without data RTOs: a variant with some fails, one
	// without passes that part.
	r.Variants[0].Rounds = []Measure{{SYNRetrans: 100}}
	if v := r.Verdicts()[2]; v.RTOCutOK || v.NoRTOs || v.Holds {
		t.Errorf("RTOs against a zero reference: %+v", v)
	}
	if v := r.Verdicts()[0]; v.RTOCutOK || !v.NoRTOs || !v.Holds {
		t.Errorf("no RTOs in reference or variant: %+v", v)
	}
	if md := r.Markdown(); !strings.Contains(md, "| good | 100 % | none in either | 0.0 % | yes |") {
		t.Errorf("markdown verdict:\n%s", md)
	}
}
