package sim

import (
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/netsim"
	"github.com/pseudocong/pseudocong/profile"
	"github.com/pseudocong/pseudocong/tcp"
)

func tcpTopology(t testing.TB) *netsim.Topology {
	t.Helper()
	data, err := os.ReadFile("../topologies/paper000-tcp.yaml")
	if err != nil {
		t.Fatal(err)
	}
	top, err := netsim.ParseTopology(data, "paper000-tcp")
	if err != nil {
		t.Fatal(err)
	}
	return top
}

func bulkScenario(t testing.TB, prof *profile.Profile, flows, capacity, base int, timers tcp.Profile, d time.Duration) Scenario {
	return Scenario{Kind: Bulk, Flows: flows, Rate: 10, BaseLoad: base, Priority: "ascending",
		Profile: prof, Topology: tcpTopology(t), ControllerService: 2 * time.Millisecond,
		Seed: 3, TCP: &BulkTCP{Timers: timers, Duration: d, TCAMCapacity: capacity}}
}

// Bulk flows on a TCAM that holds fewer rules than the flows need: every
// flow connects and delivers data, the rules are swapped in and out all
// run long (more swap-ins and evictions than rules), nothing goes to the
// controller (Run's checkDataPremise), and the trace and counters are
// there for every flow.
func TestBulkFlowsThroughACache(t *testing.T) {
	if testing.Short() {
		t.Skip("long single-goroutine simulation: the race phase (-short) leaves it to the integration phase")
	}
	prof := loadProfile(t, "pica8-p3297")
	const flows, capacity = 4, 4
	o, err := Run(bulkScenario(t, prof, flows, capacity, 0, tcp.Linux(), 3*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if len(o.TCP.Flows) != flows || len(o.TCP.Traces) != flows {
		t.Fatalf("%d flows, %d traces; want %d", len(o.TCP.Flows), len(o.TCP.Traces), flows)
	}
	for i, f := range o.TCP.Flows {
		if !f.Established || f.Received == 0 || f.Active <= 0 {
			t.Errorf("flow %d: established %v, %d bytes received, active %v", i, f.Established, f.Received, f.Active)
		}
	}
	if o.Table.SwapIns <= 2*flows || o.Table.Evictions == 0 {
		t.Errorf("swap-ins %d, evictions %d: want rules swapped in and out (more than the %d rules)", o.Table.SwapIns, o.Table.Evictions, 2*flows)
	}
	if o.InTCAM > capacity {
		t.Errorf("%d rules in a TCAM of %d", o.InTCAM, capacity)
	}
	if o.ProbeMisses != 0 || o.Controller.FlowMods != 0 {
		t.Errorf("%d misses and %d FLOW_MODs in a proactive run", o.ProbeMisses, o.Controller.FlowMods)
	}
}

// The same bulk run twice gives the same outcome (the endpoints and the
// switch are on the one virtual clock).
func TestBulkRunIsDeterministic(t *testing.T) {
	if testing.Short() {
		t.Skip("long single-goroutine simulation: the race phase (-short) leaves it to the integration phase")
	}
	prof := loadProfile(t, "pica8-p3297")
	sc := bulkScenario(t, prof, 3, 4, 0, tcp.Berkeley(), 2*time.Second)
	a, err := Run(sc)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Run(sc)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a.TCP, b.TCP) || a.Events != b.Events {
		t.Error("two runs of one bulk scenario differ")
	}
}

// Cover rules replace the per-flow rules: two wildcard entries per
// switch, no swap-in, and the flows still get through.
func TestBulkCoverRules(t *testing.T) {
	if testing.Short() {
		t.Skip("long single-goroutine simulation: the race phase (-short) leaves it to the integration phase")
	}
	prof := loadProfile(t, "pica8-p3297")
	sc := bulkScenario(t, prof, 4, 4, 0, tcp.Linux(), 2*time.Second)
	sc.TCP.SDN.CoverRules = true
	o, err := Run(sc)
	if err != nil {
		t.Fatal(err)
	}
	if o.TCP.CoverRules != 2 || o.Table.SwapIns != 0 || o.InTCAM != 2 || o.InBacking != 0 {
		t.Errorf("cover rules %d, swap-ins %d, TCAM %d, backing %d: want 2, 0, 2, 0", o.TCP.CoverRules, o.Table.SwapIns, o.InTCAM, o.InBacking)
	}
	for i, f := range o.TCP.Flows {
		if f.Received == 0 {
			t.Errorf("flow %d received nothing", i)
		}
	}
}

func TestBulkScenarioErrors(t *testing.T) {
	prof := loadProfile(t, "pica8-p3297")
	for name, mod := range map[string]func(*Scenario){
		"no tcp":       func(s *Scenario) { s.TCP = nil },
		"no duration":  func(s *Scenario) { s.TCP.Duration = 0 },
		"bad capacity": func(s *Scenario) { s.TCP.TCAMCapacity = -1 },
		"late start":   func(s *Scenario) { s.Rate = 0.5 },
	} {
		sc := bulkScenario(t, prof, 4, 4, 0, tcp.Linux(), 2*time.Second)
		mod(&sc)
		if _, err := Run(sc); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// Each SDN-aware option changes the endpoint configuration it names and
// nothing else.
func TestSDNOptionsApply(t *testing.T) {
	base := func(p tcp.Profile) tcp.Config { c := tcp.DefaultConfig(); c.Profile = p; c.FRTO = false; return c }
	cfg := base(tcp.Linux())
	SDNOptions{FirstPacketAllowance: 3 * time.Second}.apply(&cfg)
	if d, _ := cfg.Profile.SYN.Interval(0); d != 3*time.Second {
		t.Errorf("allowance: first SYN timeout %v, want 3s", d)
	}
	if d, _ := cfg.Profile.SYN.Interval(1); d != 2*time.Second {
		t.Errorf("allowance: second SYN timeout %v, want Linux's 2s", d)
	}
	if cfg.Profile.RTO.Initial != 3*time.Second || cfg.Profile.RTO.Min != 200*time.Millisecond {
		t.Errorf("allowance: RTO initial %v min %v", cfg.Profile.RTO.Initial, cfg.Profile.RTO.Min)
	}
	cfg = base(tcp.Berkeley())
	SDNOptions{LinearSYN: 4}.apply(&cfg)
	re, giveUp := cfg.Profile.SYN.Schedule()
	if want := []time.Duration{5800 * time.Millisecond, 11600 * time.Millisecond}; !reflect.DeepEqual(re, want) || giveUp != 17400*time.Millisecond {
		t.Errorf("linear Berkeley SYN: retransmits %v give up %v", re, giveUp)
	}
	cfg = base(tcp.Linux())
	SDNOptions{KeepIW: true, FRTO: true}.apply(&cfg)
	if cfg.Profile.IW1AfterSYNLoss || !cfg.FRTO || !cfg.Eifel {
		t.Errorf("keep_iw+frto: IW1 %v FRTO %v Eifel %v", cfg.Profile.IW1AfterSYNLoss, cfg.FRTO, cfg.Eifel)
	}
	if n := (SDNOptions{FRTO: true, CoverRules: true}).Name(); n != "frto+cover_rules" {
		t.Errorf("name %q", n)
	}
}

// BenchmarkBulk is paper-tcp's cache cell shortened to 5 s (8 Linux
// flows, 16 rules on 8 TCAM entries, 100 Mbit/s): the simulator's cost
// per bulk run and its events per wall second.
func BenchmarkBulk(b *testing.B) {
	prof, err := profile.Load("pica8-p3297")
	if err != nil {
		b.Fatal(err)
	}
	sc := bulkScenario(b, prof, 8, 8, 0, tcp.Linux(), 5*time.Second)
	var events uint64
	began := time.Now()
	for b.Loop() {
		o, err := Run(sc)
		if err != nil {
			b.Fatal(err)
		}
		events += o.Events
	}
	b.ReportMetric(float64(events)/time.Since(began).Seconds(), "events/s")
}
