package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// high-bdp through the real main(): a tiny spec file (1/2000 scale, one
// bottleneck, one algorithm) run whole and as two shards merged gives
// the same summary.json (the perf keys aside); a bad shard set exits 2.
func TestExperimentHighBDP(t *testing.T) {
	if testing.Short() {
		t.Skip("long single-goroutine simulation: the race phase (-short) leaves it to the integration phase")
	}
	actAsMain()
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	spec := p("high-bdp-tiny.yaml")
	if err := os.WriteFile(spec, []byte(`name: high-bdp-tiny
scale: 2000
duration: 1h
bottlenecks: [10G]
algorithms: [ns2-newreno]
seeds: [1]
buffer_bdp: 0.1
buffer_sweep: [1]
access_delay: 2ms
bottleneck_delay: 53ms
initial_ssthresh_bytes: 65535
initial_cwnd: 2
mss: 1460
long_flows: 2
short_flows: 1
web_flows: 1
short_share: [0.01]
short_start: [0.5]
long_start_spread: 1s
web_mean_bytes: 20000
web_think: 1s
trace_every: 1s
fine_every: 10ms
fine_for: 1s
util_every: 10s
`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range []string{
		"experiment run " + spec + " --quiet --out " + p("single"),
		"experiment run " + spec + " --quiet --shard 0/2 --out " + p("s0"),
		"experiment run " + spec + " --quiet --shard 1/2 --out " + p("s1"),
		"experiment merge --out " + p("merged") + " " + p("s1") + " " + p("s0"),
	} {
		if code, msg := runMain(t, "TestExperimentHighBDP", args); code != 0 {
			t.Fatalf("%q: exit code %d; stderr:\n%s", args, code, msg)
		}
	}
	perf := regexp.MustCompile(`(?m)^.*"highbdp\.perf\..*$\n`)
	read := func(d string) []byte {
		b, err := os.ReadFile(filepath.Join(d, "summary.json"))
		if err != nil {
			t.Fatal(err)
		}
		return perf.ReplaceAll(b, nil)
	}
	if a, b := read(p("single")), read(p("merged")); !bytes.Equal(a, b) || !bytes.Contains(a, []byte("highbdp.utilisation.10G")) {
		t.Errorf("merged summary.json differs from the single run's (or lacks the utilisation):\n%s\n---\n%s", b, a)
	}
	for _, c := range []struct{ args, want string }{
		{"experiment merge --out " + p("bad") + " " + p("s0"), "1 of 2 shards"},
		{"experiment run " + spec + " --quiet --shard 2/2 --out " + p("bad"), "--shard"},
		{"experiment run " + spec + " --quiet --workers -1 --out " + p("bad"), "--workers"},
	} {
		code, msg := runMain(t, "TestExperimentHighBDP", c.args)
		if code != exitUsage || !strings.Contains(msg, c.want) {
			t.Errorf("%q: exit code %d, want %d with %q; stderr:\n%s", c.args, code, exitUsage, c.want, msg)
		}
	}
}
