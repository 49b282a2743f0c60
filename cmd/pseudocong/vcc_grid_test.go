package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tinyVCCSpec is a vcc spec small enough for a unit test: every
// experiment with one cell of a few flows, 2 s runs.
const tinyVCCSpec = `name: tiny
key_prefix: vcc
seed: 1
seeds: 1
rtt: 10ms
duration: 2s
warmup: 1s
react: rtt
red: "red,limit=400000,min=30000,max=90000,probability=0.02,avpkt=1000,ecn"
a: {rate_mbps: 10, senders: 2, nonecn: [1]}
b: {rate_mbps: 10, access_mbps: [5, 10], ecn: 1, nonecn: 1}
c: {rate_mbps: 5, ecn: 1, nonecn: 1, min_kb: [20], probability: 0.1}
d: {rates_mbps: [10], ecn: 1, tenants: 1, cc: [bic]}
`

// vcc grid writes the summary with both keys of every cell on both sides,
// the CSV and the four figures; bad input exits 2 naming the problem.
func TestVCCGridCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("long single-goroutine simulation: the race phase (-short) leaves it to the integration phase")
	}
	actAsMain()
	dir := t.TempDir()
	spec := filepath.Join(dir, "tiny.yaml")
	if err := os.WriteFile(spec, []byte(tinyVCCSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte(strings.Replace(tinyVCCSpec, "seeds: 1", "seeds: 0", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	if code, msg := runMain(t, "TestVCCGridCommand", "vcc grid --spec "+spec+" --workers 1 --out "+out); code != 0 {
		t.Fatalf("exit %d: %s", code, msg)
	}
	b, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum struct {
		Spec    string             `json:"spec"`
		Results map[string]float64 `json:"results"`
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	for _, cell := range []string{"a.n1", "b.access5-10", "c.min20kb", "d.bic.r10"} {
		for _, k := range []string{"throughput_ratio_nonecn_over_ecn", "jain"} {
			for _, side := range []string{"with", "without"} {
				if v, ok := sum.Results["vcc."+cell+"."+k+"."+side]; !ok || v <= 0 {
					t.Errorf("summary: vcc.%s.%s.%s = %v, %v", cell, k, side, v, ok)
				}
			}
		}
	}
	for _, f := range []string{"cells.csv", "vcc-a.png", "vcc-b.png", "vcc-c.png", "vcc-d.png"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	for _, c := range []struct{ args, want string }{
		{"vcc grid --workers 0 --out " + out, "--workers 0"},
		{"vcc grid --spec nope --out " + out, "nope"},
		{"vcc grid --spec " + bad + " --out " + out, "seeds 0"},
		{"vcc grid --bogus", "bogus"},
	} {
		code, msg := runMain(t, "TestVCCGridCommand", c.args)
		if code != exitUsage || !strings.Contains(msg, c.want) {
			t.Errorf("%q: exit %d, want %d with %q; stderr:\n%s", c.args, code, exitUsage, c.want, msg)
		}
	}
}

// mptcp grid shares vcc grid's command (grid.go): its bad input exits 2
// naming the problem too, before anything runs.
func TestMPTCPGridCommandBadInput(t *testing.T) {
	actAsMain()
	out := filepath.Join(t.TempDir(), "out")
	for _, c := range []struct{ args, want string }{
		{"mptcp grid --workers 0 --out " + out, "--workers 0"},
		{"mptcp grid --out=", "--out must not be empty"},
		{"mptcp grid --spec nope --out " + out, `mptcp spec "nope"`},
		{"mptcp grid --spec /nonexistent/x.yaml --out " + out, "no such file"},
	} {
		code, msg := runMain(t, "TestMPTCPGridCommandBadInput", c.args)
		if code != exitUsage || !strings.Contains(msg, c.want) {
			t.Errorf("%q: exit %d, want %d with %q; stderr:\n%s", c.args, code, exitUsage, c.want, msg)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("bad input wrote the output directory")
	}
}
