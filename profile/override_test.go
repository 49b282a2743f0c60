package profile

import (
	"strings"
	"testing"
	"time"
)

// An override changes exactly the keys it names; durations stay strings,
// so the result loads as the same profile except for those keys.
func TestOverrideBuiltin(t *testing.T) {
	doc, err := Document("pica8-p3297")
	if err != nil {
		t.Fatal(err)
	}
	out, err := Override(doc, map[string]string{
		"name":                        "pica8-p3297+lowest-first+syn_first",
		"tcam.layout":                 "lowest-first",
		"agent.scheduling":            "syn_first",
		"agent.controller_rate_limit": "1000",
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := Parse(out, "test")
	if err != nil {
		t.Fatal(err)
	}
	base, err := Load("pica8-p3297")
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "pica8-p3297+lowest-first+syn_first" || got.TCAM.Layout != "lowest-first" ||
		got.Agent.Scheduling != "syn_first" || got.Agent.RateLimit != 1000 {
		t.Errorf("overrides not applied: name %q layout %q scheduling %q rate %v", got.Name, got.TCAM.Layout, got.Agent.Scheduling, got.Agent.RateLimit)
	}
	if got.Agent.PacketInCost != base.Agent.PacketInCost || got.Agent.PacketInCost != 4200*time.Microsecond ||
		got.TCAM.Timing != base.TCAM.Timing || got.TCAM.Capacity != base.TCAM.Capacity {
		t.Errorf("untouched keys changed: %+v vs %+v", got.Agent, base.Agent)
	}
	if !strings.Contains(string(out), "§2.1") {
		t.Errorf("comments lost")
	}
}

func TestOverrideErrors(t *testing.T) {
	doc, err := Document("pica8-p3297")
	if err != nil {
		t.Fatal(err)
	}
	for key, val := range map[string]string{
		"tcam.layout":      "sideways",     // invalid value: the profile check refuses it
		"tacm.layout":      "lowest-first", // no such section
		"agent":            "x",            // a section, not a value
		"agent.scheduling": "nope",
	} {
		if _, err := Override(doc, map[string]string{key: val}); err == nil {
			t.Errorf("override %s=%s: no error", key, val)
		}
	}
	if _, err := Document("no-such-profile"); err == nil {
		t.Error("unknown profile: no error")
	}
}
