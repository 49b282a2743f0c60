package sim

import (
	"errors"
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/internal/clock"
	"github.com/pseudocong/pseudocong/probes"
	"github.com/pseudocong/pseudocong/profile"
)

func limitsScenario(t *testing.T) Scenario {
	t.Helper()
	prof, err := profile.Load("pica8-p3297")
	if err != nil {
		t.Fatal(err)
	}
	return Scenario{Kind: Handshake, Flows: 20, Rate: 100, BaseLoad: 100, Priority: "ascending", Profile: prof,
		ControllerService: time.Millisecond, LinkLatency: 50 * time.Microsecond, Timers: probes.Linux(), Seed: 1}
}

// A run stopped by its limits returns the clock's error (it used to be a
// clk.Run that would loop forever, or with limits, panic in the worker).
func TestRunStoppedByItsLimitsReturnsTheError(t *testing.T) {
	sc := limitsScenario(t)
	sc.Limits = clock.Limits{MaxEvents: 100}
	_, err := Run(sc)
	var le *clock.LimitError
	if !errors.As(err, &le) || le.Limit != clock.LimitEvents {
		t.Fatalf("Run with a 100-event budget: err = %v, want a MaxEvents *clock.LimitError", err)
	}
	sc.Limits = clock.Limits{}
	out, err := Run(sc)
	if err != nil {
		t.Fatal(err)
	}
	sc.Limits = clock.Limits{Horizon: out.VirtualTime / 2}
	if _, err := Run(sc); !errors.As(err, &le) || le.Limit != clock.LimitHorizon {
		t.Fatalf("Run with a horizon of half its %v: err = %v, want a Horizon *clock.LimitError", out.VirtualTime, err)
	}
}

// The derived limits leave a real run far more room than it uses, and
// limits never change the outcome.
func TestDerivedLimitsLeaveRoom(t *testing.T) {
	sc := limitsScenario(t)
	l := sc.limits()
	out, err := Run(sc)
	if err != nil {
		t.Fatal(err)
	}
	if out.Events*50 > l.MaxEvents || out.VirtualTime*20 > l.Horizon {
		t.Errorf("run used %d events and %v of virtual time; limits %d and %v leave too little room",
			out.Events, out.VirtualTime, l.MaxEvents, l.Horizon)
	}
	sc.Limits = clock.Limits{MaxEvents: 1 << 62, Horizon: 1 << 62}
	loose, err := Run(sc)
	if err != nil {
		t.Fatal(err)
	}
	if loose.Events != out.Events || loose.VirtualTime != out.VirtualTime {
		t.Errorf("limits changed the run: %d events %v, then %d events %v",
			out.Events, out.VirtualTime, loose.Events, loose.VirtualTime)
	}
	if slow := (Scenario{Flows: 10, Rate: 1e-300}).limits(); slow.Horizon != 0 {
		t.Errorf("a near-zero rate gave horizon %v, want none rather than an overflow", slow.Horizon)
	}
}
