package experiments

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
)

// A spec with kinds the live backend cannot measure is bad input, refused
// before anything is started (no root needed to see it).
func TestLiveBackendRefusesUnsupportedKinds(t *testing.T) {
	spec, err := LoadSpec("smoke")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Execute(context.Background(), spec, Options{Backend: BackendLive})
	var se *SpecError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "kind data") {
		t.Fatalf("err = %v, want a SpecError naming kind data", err)
	}
	if !slices.Contains(Backends, BackendLive) {
		t.Errorf("Backends %v lacks %q", Backends, BackendLive)
	}
}

// live-check is a handshake-only spec (all the live backend measures),
// sized to stay a test: few flows, one base load, ascending priorities.
func TestLiveCheckSpecShape(t *testing.T) {
	spec, err := LoadSpec("live-check")
	if err != nil {
		t.Fatal(err)
	}
	if spec.Profile != "pica8-p3297" {
		t.Errorf("profile %s", spec.Profile)
	}
	flows := 0
	for _, e := range spec.Runs {
		if e.Kind != KindHandshake || !slices.Contains(e.Priorities, PriorityAscending) {
			t.Errorf("experiment %s: kind %s priorities %v", e.ID, e.Kind, e.Priorities)
		}
		flows += e.Flows * len(e.Rates) * len(e.BaseLoads) * len(e.Priorities)
	}
	if flows == 0 || flows > 500 {
		t.Errorf("%d probes in total: not test-sized", flows)
	}
}
