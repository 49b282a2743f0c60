package dumbbell

import (
	"reflect"
	"testing"
	"time"
)

func base() Config {
	return Config{Flows: 1, CC: []string{"reno"}, Bottleneck: 10_000_000, RTT: 40 * time.Millisecond,
		Queue: 34, Duration: 30 * time.Second, DelAck: true, Seed: 1}
}

// TestOneRenoFlowFillsTheBottleneck: one Reno flow with a BDP of buffer
// keeps a 10 Mbit/s, 40 ms path more than 90 % busy.
func TestOneRenoFlowFillsTheBottleneck(t *testing.T) {
	r, err := Run(base())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", r.Flows[0])
	if r.Utilisation < 0.9 || r.Utilisation > 1 {
		t.Errorf("utilisation %.3f, want in (0.9, 1]", r.Utilisation)
	}
	if r.Flows[0].Retransmits == 0 {
		t.Error("no retransmissions: the queue never overflowed, so the test says nothing about recovery")
	}
}

// TestTwoFlowsShareFairly: two NewReno flows converge to a fair share.
func TestTwoFlowsShareFairly(t *testing.T) {
	c := base()
	c.Flows, c.CC = 2, []string{"newreno"}
	c.Duration = 60 * time.Second
	r, err := Run(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v jain %.3f util %.3f", r.Flows, r.Jain, r.Utilisation)
	if r.Jain < 0.9 {
		t.Errorf("Jain %.3f, want > 0.9", r.Jain)
	}
	if r.Utilisation < 0.9 {
		t.Errorf("utilisation %.3f, want > 0.9", r.Utilisation)
	}
}

// TestDeterministic: the same seed gives the same run, event for event.
func TestDeterministic(t *testing.T) {
	c := base()
	c.Flows, c.CC, c.Qdisc, c.ECN = 3, []string{"newreno", "reno"}, "red,ecn", true
	c.Duration = 10 * time.Second
	a, err := Run(c)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Run(c)
	if err != nil {
		t.Fatal(err)
	}
	a.WallS, b.WallS = 0, 0
	if !reflect.DeepEqual(a, b) {
		t.Errorf("two runs differ:\n%+v\n%+v", a, b)
	}
}

func TestQdiscSpec(t *testing.T) {
	c := base()
	c.Qdisc = "red,ecn"
	if err := c.defaults(); err != nil {
		t.Fatal(err)
	}
	want := "red,ecn,limit=51000,min=12750,max=38250,avpkt=1500,bandwidth=10000000bit,probability=0.1,seed=2"
	if got := c.QdiscSpec(); got != want {
		t.Errorf("spec %q, want %q", got, want)
	}
	c.Qdisc = "droptail"
	if got := c.QdiscSpec(); got != "droptail,limit=34" {
		t.Errorf("spec %q", got)
	}
}
