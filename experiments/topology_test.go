package experiments

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBuiltinTopologiesLoad(t *testing.T) {
	names := BuiltinTopologyNames()
	if len(names) == 0 || names[0] != DefaultTopology && !strings.Contains(strings.Join(names, ","), DefaultTopology) {
		t.Fatalf("built-in topologies %v lack %s", names, DefaultTopology)
	}
	for _, n := range append(names, "chain:3") {
		if _, err := LoadTopology(n); err != nil {
			t.Errorf("%s: %v", n, err)
		}
	}
	if _, err := LoadTopology("ring"); err == nil || !strings.Contains(err.Error(), DefaultTopology) {
		t.Errorf("unknown topology: %v, want an error listing the built-ins", err)
	}
}

// A topology is data: paper 000's file and a generated chain of one
// switch (other host names, the same shape) give the same summary, and a
// file written by a user runs like a built-in one.
func TestTopologyIsData(t *testing.T) {
	spec, err := LoadSpec("smoke")
	if err != nil {
		t.Fatal(err)
	}
	base := summaryBytes(t, execute(t, spec, Options{}))
	chain := *spec
	chain.Topology = "chain:1"
	if got := summaryBytes(t, execute(t, &chain, Options{})); !bytes.Equal(got, base) {
		t.Errorf("chain:1 differs from paper000:\n%s\n---\n%s", got, base)
	}
	src, err := builtinTopologies.ReadFile("topologies/paper000.yaml")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "mine.yaml")
	renamed := strings.NewReplacer("name: a\n", "name: left\n", "{a: a,", "{a: left,").Replace(string(src))
	if err := os.WriteFile(file, []byte(renamed), 0o644); err != nil {
		t.Fatal(err)
	}
	mine := *spec
	mine.Topology = file
	if got := summaryBytes(t, execute(t, &mine, Options{})); !bytes.Equal(got, base) {
		t.Errorf("a user's copy of paper000 differs:\n%s\n---\n%s", got, base)
	}
}

func TestTopologyInputErrors(t *testing.T) {
	spec, err := LoadSpec("smoke")
	if err != nil {
		t.Fatal(err)
	}
	bad := *spec
	bad.Topology = "nowhere"
	var se *SpecError
	if err := CheckInputs(&bad, Options{}); !errors.As(err, &se) || !strings.Contains(err.Error(), `unknown topology "nowhere"`) {
		t.Errorf("unknown topology: %v, want a *SpecError", err)
	}
	file := filepath.Join(t.TempDir(), "prof.yaml")
	if err := os.WriteFile(file, []byte("switches: [{name: s1, profile: pica9}]\nhosts: [{name: a, address: 10.0.0.1}, {name: b, address: 10.0.0.2}]\nlinks: [{a: a, b: s1}, {a: b, b: s1}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bad.Topology = file
	if err := CheckInputs(&bad, Options{}); !errors.As(err, &se) || !strings.Contains(err.Error(), "switch s1") {
		t.Errorf("unknown switch profile: %v, want a *SpecError naming the switch", err)
	}
	e := spec.Runs[0]
	e.Chain, e.Topology = []int{1, 2}, "paper000"
	if err := e.validate(); err == nil || !strings.Contains(err.Error(), "chain and topology") {
		t.Errorf("chain with topology: %v", err)
	}
	e = spec.Runs[0]
	e.Metrics = []string{"median_rtt_s"}
	if err := e.validate(); err == nil || !strings.Contains(err.Error(), `metric "median_rtt_s"`) {
		t.Errorf("a handshake metric on packet_in: %v", err)
	}
	e = spec.Runs[0]
	e.Chain = []int{0}
	if err := e.validate(); err == nil || !strings.Contains(err.Error(), "chain: 0 switches") {
		t.Errorf("chain 0: %v", err)
	}
}
