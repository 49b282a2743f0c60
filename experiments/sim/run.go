// Package sim is the sim backend of the experiments: one run of paper 000's
// testbed on the virtual clock (the paper's figure 3: NIC A — switch — NIC B,
// controller on its own link). Hosts put real Ethernet/IPv4/TCP frames on modelled
// links; the switch and controller exchange encoded OpenFlow 1.0 bytes over
// an in-memory channel with a modelled latency; the switch's local CPU,
// TCAM and flow table are the project's agent, tcam and flowtable packages.
// A run is a pure function of its Scenario: same input, same Outcome.
package sim

import (
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/pseudocong/pseudocong/agent"
	"github.com/pseudocong/pseudocong/controller"
	"github.com/pseudocong/pseudocong/internal/clock"
	"github.com/pseudocong/pseudocong/openflow"
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
	Profile  *profile.Profile
	// ControllerService is t_c, the controller's time per Packet-In.
	ControllerService time.Duration
	LinkLatency       time.Duration
	Timers            probes.TimerProfile
	Seed              uint64
	// Limits stop a run that cannot finish (limits.go); the zero value
	// takes limits derived from the scenario.
	Limits clock.Limits
}

// Outcome is what one run measured.
type Outcome struct {
	// Delays holds per flow the one-way delay (OneWay) or the RTT; valid
	// where Delivered is true.
	Delays    []time.Duration
	Delivered []bool
	// ControllerTimes holds Tc per Packet-In, in arrival order.
	ControllerTimes []time.Duration

	Pipeline   pipeline.Stats
	Table      dataplane.Stats
	Agent      agent.Stats
	Controller ControllerStats
	ToCtrl     ChannelStats
	ToSwitch   ChannelStats
	// ProbeMisses counts the table misses (each one a Packet-In to build)
	// from the experiment's first packet on, i.e. without the warm-up's
	// ARP announcements. A Data run has none (checkDataPremise).
	ProbeMisses uint64
	// InTCAM and InBacking are the rules placed at the end of the run.
	InTCAM, InBacking int
	Events            uint64
	VirtualTime       time.Duration
}

// Host addresses and switch ports of Fig. 3.
var (
	HostA = netip.AddrFrom4([4]byte{10, 0, 0, 1})
	HostB = netip.AddrFrom4([4]byte{10, 0, 0, 2})
)

const (
	portA uint16 = 1
	portB uint16 = 2
)

// basePriority and dataPriority number the rules the experiment puts in
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

// dataPriority is the priority of the k-th rule of the data experiment's
// flows (held in the backing table): the k-th priority the reactive app's
// pattern would give.
func dataPriority(pattern controller.PriorityStrategy, k int) (uint16, error) {
	var v int
	switch pattern {
	case controller.PriorityAscending:
		v = 1 + k
	case controller.PriorityDescending:
		v = 0xffff - k
	default:
		v = int(controller.DefaultConstantPriority)
	}
	if v < 1 || v > 0xffff {
		return 0, fmt.Errorf("rule %d of the %s pattern falls outside 1..65535", k, pattern)
	}
	return uint16(v), nil
}

var simStart = time.Date(2016, 1, 1, 0, 0, 0, 0, time.UTC)

// warmUp is how long the hosts announce themselves (one gratuitous ARP
// each, so the reactive app learns both MACs as Floodlight's device
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
	clk := clock.NewSim(simStart)
	tb, err := newTestbed(clk, sc.Profile, pattern, sc.ControllerService)
	if err != nil {
		return nil, err
	}
	if err := preloadBase(tb, pattern, sc.BaseLoad); err != nil {
		return nil, err
	}
	tuples, err := probes.GenerateTuples(sc.Flows, probes.TupleSpec{Src: HostA, Dst: HostB}, sc.Seed)
	if err != nil {
		return nil, err
	}
	if sc.Kind == Data {
		if err := preloadData(tb, pattern, tuples); err != nil {
			return nil, err
		}
	}

	h := &hosts{clk: clk, sw: tb.sw, latency: sc.LinkLatency}
	if err := h.addPorts(); err != nil {
		return nil, err
	}
	// The hosts announce themselves once the controller is connected, as
	// they would on a network whose controller is up.
	tb.ctrl.onConnect = h.announce
	var finish func(*Outcome)
	var warmUpMisses uint64
	clk.AfterFunc(warmUp, func() {
		warmUpMisses = tb.pl.Agent().Stats().Misses
		switch sc.Kind {
		case OneWay:
			finish, err = h.oneWay(sc, tuples)
		case Handshake, Data:
			finish, err = h.probe(sc, tuples)
		default:
			err = fmt.Errorf("sim: unknown kind %q", sc.Kind)
		}
	})
	clk.SetLimits(sc.limits())
	if runErr := clk.TryRun(); runErr != nil {
		return nil, fmt.Errorf("sim: %w", runErr)
	}
	if err != nil {
		return nil, err
	}
	if tb.err != nil {
		return nil, fmt.Errorf("sim: control channel: %w", tb.err)
	}
	if h.frameErr != nil {
		return nil, fmt.Errorf("sim: host: %w", h.frameErr)
	}
	inTCAM, inBacking := tb.pl.Occupancy()
	out := &Outcome{
		ControllerTimes: tb.ctrl.times,
		Pipeline:        tb.pl.Stats(),
		Table:           tb.pl.TableStats(),
		Agent:           tb.pl.Agent().Stats(),
		Controller:      tb.ctrl.stats,
		ToCtrl:          tb.toCtrl.Stats(),
		ToSwitch:        tb.toSwitch.Stats(),
		InTCAM:          inTCAM,
		InBacking:       inBacking,
		Events:          clk.Fired(),
		VirtualTime:     clk.Elapsed(),
	}
	out.ProbeMisses = out.Agent.Misses - warmUpMisses
	finish(out)
	if sc.Kind == Data {
		if err := checkDataPremise(out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// checkDataPremise holds a Data run to paper 000 Fig. 19's premise: every
// rule the data packets need is in the backing table, so each packet is
// served by a swap-in and none goes to the controller. A miss means the
// preloaded rules do not match the frames (ruleMatch drifted from the
// controller's match): the run would then measure Packet-Ins and installs,
// not swap-ins, and must not be reported as Fig. 19.
func checkDataPremise(o *Outcome) error {
	if o.ProbeMisses != 0 || o.Controller.FlowMods != 0 {
		return fmt.Errorf("sim: data run: %d data packets missed the table and the controller installed %d rules; "+
			"every data packet must be served by a swap-in (the preloaded rules do not match the frames?)",
			o.ProbeMisses, o.Controller.FlowMods)
	}
	return nil
}

// ruleMatch is the match the reactive app installs for frames of tuple t
// entering on inPort (controller.flowMatch: in_port, MACs, dl_type, IPv4
// addresses, protocol and ports; VLAN and ToS wildcarded), so rules the
// experiment puts in the table rank exactly like the app's.
func ruleMatch(t probes.FiveTuple, inPort uint16) openflow.Match {
	s, d := t.SrcIP.As4(), t.DstIP.As4()
	return openflow.Match{
		Wildcards: openflow.WildcardDlVlan | openflow.WildcardDlVlanPcp | openflow.WildcardNwTos,
		InPort:    inPort,
		DlSrc:     MACFor(t.SrcIP), DlDst: MACFor(t.DstIP),
		DlType:  etherTypeIPv4,
		NwProto: t.Proto,
		NwSrc:   uint32(s[0])<<24 | uint32(s[1])<<16 | uint32(s[2])<<8 | uint32(s[3]),
		NwDst:   uint32(d[0])<<24 | uint32(d[1])<<16 | uint32(d[2])<<8 | uint32(d[3]),
		TpSrc:   t.SrcPort, TpDst: t.DstPort,
	}
}

func ruleFlowMod(t probes.FiveTuple, inPort, outPort, prio uint16) *openflow.FlowMod {
	return &openflow.FlowMod{
		Header:  openflow.Header{Version: openflow.Version, Type: openflow.TypeFlowMod},
		Match:   ruleMatch(t, inPort),
		Command: openflow.FlowModAdd, Priority: prio,
		BufferID: openflow.NoBuffer, OutPort: openflow.PortNone,
		Actions: []openflow.Action{openflow.ActionOutput{Port: outPort}},
	}
}

// preloadBase puts the base load in the TCAM: L rules for traffic that is
// not the experiment's (10.1.0.0/16 → 10.2.0.1).
func preloadBase(tb *testbed, pattern controller.PriorityStrategy, n int) error {
	prio := basePriority(pattern)
	for i := range n {
		src := netip.AddrFrom4([4]byte{10, 1, byte(i >> 8), byte(i)})
		t := probes.FiveTuple{SrcIP: src, DstIP: netip.AddrFrom4([4]byte{10, 2, 0, 1}),
			SrcPort: 40000, DstPort: 80, Proto: probes.ProtoTCP}
		if _, err := tb.pl.Preload(ruleFlowMod(t, portA, portB, prio), dataplane.InTCAM); err != nil {
			return fmt.Errorf("sim: base rule %d: %w", i, err)
		}
	}
	return nil
}

// preloadData puts both directions' rules of every data flow in the
// backing table only: they must be swapped into the TCAM (paper §3.2).
func preloadData(tb *testbed, pattern controller.PriorityStrategy, tuples []probes.FiveTuple) error {
	for i, t := range tuples {
		fwd, err1 := dataPriority(pattern, 2*i)
		rev, err2 := dataPriority(pattern, 2*i+1)
		if err := errors.Join(err1, err2); err != nil {
			return fmt.Errorf("sim: data rule %d: %w", i, err)
		}
		if _, err := tb.pl.Preload(ruleFlowMod(t, portA, portB, fwd), dataplane.InBacking); err != nil {
			return fmt.Errorf("sim: data rule %d: %w", i, err)
		}
		if _, err := tb.pl.Preload(ruleFlowMod(t.Reverse(), portB, portA, rev), dataplane.InBacking); err != nil {
			return fmt.Errorf("sim: data rule %d: %w", i, err)
		}
	}
	return nil
}
