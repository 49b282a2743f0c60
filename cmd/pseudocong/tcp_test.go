package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestTCPDumbbellJSON runs the command in-process and checks the object's
// shape and that its numbers are sane for one NewReno flow.
func TestTCPDumbbellJSON(t *testing.T) {
	root := newRootCommand()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetArgs(strings.Fields("tcp dumbbell --flows 2 --cc newreno,cubic --bottleneck 10mbit --rtt 40ms --queue 50 --duration 5s --seed 3 --json"))
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	var r struct {
		Flows []struct {
			CC          string   `json:"cc"`
			GoodputMbps *float64 `json:"goodput_mbps"`
			Retransmits *uint64  `json:"retransmits"`
			Timeouts    *uint64  `json:"timeouts"`
		} `json:"flows"`
		Utilisation *float64 `json:"utilisation"`
		Jain        *float64 `json:"jain"`
		WallS       *float64 `json:"wall_s"`
		Events      *uint64  `json:"events"`
	}
	dec := json.NewDecoder(&out)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		t.Fatalf("%v in %s", err, out.String())
	}
	if len(r.Flows) != 2 || r.Flows[0].CC != "newreno" || r.Flows[1].CC != "cubic" {
		t.Fatalf("flows %+v", r.Flows)
	}
	for _, f := range r.Flows {
		if f.GoodputMbps == nil || f.Retransmits == nil || f.Timeouts == nil || *f.GoodputMbps <= 0 || *f.GoodputMbps > 10 {
			t.Errorf("flow %+v", f)
		}
	}
	if r.Utilisation == nil || *r.Utilisation <= 0.5 || *r.Utilisation > 1 || r.Jain == nil || r.Events == nil || *r.Events == 0 || r.WallS == nil {
		t.Errorf("summary %s", out.String())
	}
}

// Bad flags exit 2 with a message naming the flag.
func TestTCPDumbbellBadFlagsExitTwo(t *testing.T) {
	actAsMain()
	for _, c := range []struct{ args, want string }{
		{"tcp dumbbell --flows x", "--flows"},
		{"tcp dumbbell --flows 0", "--flows 0"},
		{"tcp dumbbell --bottleneck 10", "--bottleneck"},
		{"tcp dumbbell --cc reno,nope", "nope"},
		{"tcp dumbbell --rtt 40", "--rtt"},
		{"tcp dumbbell --delack maybe", "--delack"},
		{"tcp dumbbell --qdisc fq", "--qdisc"},
		{"tcp dumbbell --profile bsd", "--profile"},
		{"tcp dumbbell --queue 0", "--queue"},
	} {
		code, msg := runMain(t, "TestTCPDumbbellBadFlagsExitTwo", c.args)
		if code != exitUsage || !strings.Contains(msg, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want %d naming %q", c.args, code, msg, exitUsage, c.want)
		}
	}
}
