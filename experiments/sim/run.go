// Package sim is the sim backend of the experiments: one run of an
// experiment on a simulated network on the virtual clock. The network is a
// netsim Topology (paper 000's figure 3 — NIC A, switch, NIC B, controller
// on its own link — is one such file, experiments/topologies/paper000.yaml;
// a chain of k switches is another): its hosts are netsim Hosts that put
// real Ethernet/IPv4/TCP frames (package packet) on netsim Links; each
// switch is softswitch.Switch with the modelled pipeline (the project's
// agent, tcam and flowtable packages) and its own control channel, which
// carries encoded OpenFlow 1.0 bytes with a modelled latency to the one
// controller. A run is a pure function of its Scenario: same input, same
// Outcome.
package sim

import (
	"errors"
	"fmt"
	"time"

	"github.com/pseudocong/pseudocong/agent"
	"github.com/pseudocong/pseudocong/controller"
	"github.com/pseudocong/pseudocong/internal/clock"
	"github.com/pseudocong/pseudocong/netsim"
	"github.com/pseudocong/pseudocong/probes"
	"github.com/pseudocong/pseudocong/profile"
	"github.com/pseudocong/pseudocong/softswitch/dataplane"
	"github.com/pseudocong/pseudocong/softswitch/pipeline"
)

// Kind of run; the names match the experiment kinds of a spec.
type Kind string

const (
	OneWay    Kind = "packet_in" // one-packet new flows A → B, one-way delay
	Handshake Kind = "handshake" // SYN → SYN-ACK RTT, both directions new flows
	Data      Kind = "data"      // data → ACK RTT, rules swapped in from the backing table
)

// Scenario is everything one run depends on.
type Scenario struct {
	Kind     Kind
	Flows    int
	Rate     float64 // packets per second
	BaseLoad int     // rules in the TCAM before the run
	Priority string  // constant, ascending, descending
	// Profile is the switches' profile (a topology switch may name its
	// own).
	Profile *profile.Profile
	// Topology is the network; nil is a chain of one switch between two
	// hosts (paper 000's Fig. 3). The first host (or Client) sends, the
	// second (or Server) answers.
	Topology       *netsim.Topology
	Client, Server string
	// ControllerService is t_c, the controller's time per Packet-In.
	ControllerService time.Duration
	// Reorder turns on the controller's Tango-style FLOW_MOD reorderer
	// (controller.ReorderConfig); the zero value is off.
	Reorder controller.ReorderConfig
	// LinkLatency is the delay of every link the topology gives none.
	LinkLatency time.Duration
	Timers      probes.TimerProfile
	Seed        uint64
	// Limits stop a run that cannot finish (limits.go); the zero value
	// takes limits derived from the scenario.
	Limits clock.Limits
	// SeriesInterval, if positive, records time series of every link,
	// queue and flow at that interval (Outcome.Series).
	SeriesInterval time.Duration
	// TCP configures a Bulk run (bulk.go); nil for the probe kinds.
	TCP *BulkTCP
}

// Outcome is what one run measured.
type Outcome struct {
	// Delays holds per flow the one-way delay (OneWay) or the RTT; valid
	// where Delivered is true.
	Delays    []time.Duration
	Delivered []bool
	// ControllerTimes holds Tc per Packet-In, in arrival order.
	ControllerTimes []time.Duration

	// Pipeline, Table, Agent, ToCtrl, ToSwitch, InTCAM and InBacking are
	// the first switch's on the client's path (paper 000's only switch);
	// Switches has every switch's.
	SwitchOutcome
	Switches   []SwitchOutcome `json:",omitempty"`
	Controller ControllerStats
	// ProbeMisses counts the table misses (each one a Packet-In to build)
	// of all switches from the experiment's first packet on, i.e. without
	// the warm-up's ARP announcements. A Data run has none
	// (checkDataPremise).
	ProbeMisses uint64
	Events      uint64
	VirtualTime time.Duration
	// Series holds the time series, if the scenario asked for them.
	Series *Series `json:",omitempty"`
	// TCP is a Bulk run's outcome (bulk.go).
	TCP *BulkOutcome `json:",omitempty"`
}

// SwitchOutcome is what one switch did.
type SwitchOutcome struct {
	Name     string `json:",omitempty"`
	Pipeline pipeline.Stats
	Table    dataplane.Stats
	Agent    agent.Stats
	ToCtrl   ChannelStats
	ToSwitch ChannelStats
	// InTCAM and InBacking are the rules placed at the end of the run.
	InTCAM, InBacking int
}

// Series are the time series of a run (netsim.Recorder's samples).
type Series struct {
	Interval  time.Duration
	Links     []netsim.LinkSample
	Flows     []netsim.FlowSample
	Truncated uint64 `json:",omitempty"`
}

// basePriority and PriorityStrategy.Nth number the rules the experiment puts in
// the table itself, so that they sit where the controller's strategy would
// have put earlier rules of the same pattern: the reactive app numbers its
// rules ascending from 1, descending from 65535, or constant 100. A base
// load is what the same pattern left in the table: below every new rule
// (ascending: each new rule outranks and shifts all of it), equal
// (constant) or above (descending): then new rules go after it and shift
// nothing — the contrast of paper Fig. 6–8.
func basePriority(pattern controller.PriorityStrategy) uint16 {
	switch pattern {
	case controller.PriorityAscending:
		return 0
	case controller.PriorityDescending:
		return 0xffff
	}
	return controller.DefaultConstantPriority
}

var simStart = time.Date(2016, 1, 1, 0, 0, 0, 0, time.UTC)

// warmUp is how long the hosts announce themselves (one gratuitous ARP
// each, so the reactive app learns every MAC as Floodlight's device
// manager had) before the experiment's first packet.
const warmUp = time.Second

// Run simulates one scenario to the end.
func Run(sc Scenario) (*Outcome, error) {
	if sc.Profile == nil {
		return nil, errors.New("sim: nil profile")
	}
	if sc.Flows < 1 || !(sc.Rate > 0) {
		return nil, fmt.Errorf("sim: %d flows at %g pps", sc.Flows, sc.Rate)
	}
	pattern, err := controller.ParsePriorityStrategy(sc.Priority)
	if err != nil {
		return nil, fmt.Errorf("sim: %w", err)
	}
	if err := sc.Reorder.Validate(); err != nil {
		return nil, fmt.Errorf("sim: %w", err)
	}
	if sc.Kind == Bulk {
		if sc, err = sc.bulkCheck(); err != nil {
			return nil, err
		}
	}
	clk := clock.NewSim(simStart)
	nw, err := newNetwork(clk, sc, pattern)
	if err != nil {
		return nil, err
	}
	if err := preloadBase(nw, pattern, sc.BaseLoad); err != nil {
		return nil, err
	}
	tuples, err := probes.GenerateTuples(sc.Flows, probes.TupleSpec{Src: nw.client.Prefix.Addr(), Dst: nw.server.Prefix.Addr()}, sc.Seed)
	if err != nil {
		return nil, err
	}
	if sc.Kind == Data {
		if err := preloadData(nw, pattern, tuples); err != nil {
			return nil, err
		}
	}
	if sc.Kind == Bulk {
		if nw.covers, err = preloadBulk(nw, pattern, tuples); err != nil {
			return nil, err
		}
	}
	if err := nw.build(); err != nil {
		return nil, err
	}
	// The hosts announce themselves once every switch is connected, as
	// they would on a network whose controller is up.
	nw.ctrl.onConnect = func() {
		for _, h := range nw.net.Hosts {
			h.Announce()
		}
	}
	var finish func(*Outcome)
	var warmUpMisses uint64
	clk.AfterFunc(warmUp, func() {
		warmUpMisses = nw.misses()
		switch sc.Kind {
		case OneWay:
			finish, err = nw.oneWay(sc, tuples)
		case Handshake, Data:
			finish, err = nw.probe(sc, tuples)
		case Bulk:
			finish, err = nw.bulk(sc, tuples)
		default:
			err = fmt.Errorf("sim: unknown kind %q", sc.Kind)
		}
	})
	clk.SetLimits(sc.limits())
	run := clk.TryRun
	if sc.Kind == Bulk {
		// Bulk flows send for ever: the run ends at the flows' end.
		run = func() error { return clk.TryRunUntil(simStart.Add(warmUp + sc.TCP.Duration)) }
	}
	if runErr := run(); runErr != nil {
		return nil, fmt.Errorf("sim: %w", runErr)
	}
	if err != nil {
		return nil, err
	}
	if nw.ctrl.err != nil {
		return nil, fmt.Errorf("sim: control channel: %w", nw.ctrl.err)
	}
	if err := nw.hostErrors(); err != nil {
		return nil, fmt.Errorf("sim: host: %w", err)
	}
	out := &Outcome{
		Controller:      nw.ctrl.stats,
		ControllerTimes: nw.ctrl.times,
		Events:          clk.Fired(),
		VirtualTime:     clk.Elapsed(),
	}
	for _, s := range nw.switches {
		out.Switches = append(out.Switches, s.outcome())
	}
	out.SwitchOutcome = nw.path[0].sw.outcome()
	out.ProbeMisses = nw.misses() - warmUpMisses
	if r := nw.rec; r != nil {
		r.Stop()
		out.Series = &Series{Interval: r.Interval(), Links: r.Links, Flows: r.Flows, Truncated: r.Truncated}
	}
	finish(out)
	if sc.Kind == Data || sc.Kind == Bulk {
		if err := checkDataPremise(out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// checkDataPremise holds a Data run to paper 000 Fig. 19's premise: every
// rule the data packets need is in the backing table, so each packet is
// served by a swap-in and none goes to the controller. A miss means the
// preloaded rules do not match the frames: the run would then measure
// Packet-Ins and installs, not swap-ins, and must not be reported as
// Fig. 19.
func checkDataPremise(o *Outcome) error {
	if o.ProbeMisses != 0 || o.Controller.FlowMods != 0 {
		return fmt.Errorf("sim: data run: %d data packets missed the table and the controller installed %d rules; "+
			"every data packet must be served by a swap-in (the preloaded rules do not match the frames?)",
			o.ProbeMisses, o.Controller.FlowMods)
	}
	return nil
}
