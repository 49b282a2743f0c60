package agent_test

import (
	"testing"

	"github.com/pseudocong/pseudocong/agent"
	"github.com/pseudocong/pseudocong/profile"
)

// The tests of package agent use a copy of the calibrated agent (pica8 in
// harness_test.go): they cannot load the profile, which imports agent.
// This external test can, and keeps the copy equal to the built-in
// profile, so a recalibration cannot leave the tests on stale numbers.
func TestPica8CopyMatchesProfile(t *testing.T) {
	p, err := profile.Load("pica8-p3297")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := agent.Pica8ForTest(), p.Agent; got != want {
		t.Errorf("agent tests' pica8() = %+v\nprofile pica8-p3297 agent = %+v\n(update pica8 in agent/harness_test.go)", got, want)
	}
}
