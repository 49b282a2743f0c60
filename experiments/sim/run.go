// Package sim is the sim backend of the experiments: one run of paper 000's
// testbed (Fig. 3: NIC A — switch — NIC B, controller on its own link) on
// the virtual clock. Hosts put real Ethernet/IPv4/TCP frames on modelled
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
	"github.com/pseudocong/pseudocong/internal/clock"
	"github.com/pseudocong/pseudocong/openflow"
	"github.com/pseudocong/pseudocong/probes"
	"github.com/pseudocong/pseudocong/profile"
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
	Install           InstallModel
	Timers            probes.TimerProfile
	Seed              uint64
}

// Outcome is what one run measured.
type Outcome struct {
	// Delays holds per flow the one-way delay (OneWay) or the RTT; valid
	// where Delivered is true.
	Delays    []time.Duration
	Delivered []bool
	// ControllerTimes holds Tc per Packet-In, in arrival order.
	ControllerTimes []time.Duration

	Switch      SwitchStats
	Agent       agent.Stats
	Controller  ControllerStats
	ToCtrl      ChannelStats
	ToSwitch    ChannelStats
	Events      uint64
	VirtualTime time.Duration
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

// Priority numbering: a base load is the first BaseLoad rules of the same
// priority sequence the run continues (see priorityPlan).
const (
	ascendingFrom  = 1000
	descendingFrom = 60000
	constantValue  = 32768 // OFP_DEFAULT_PRIORITY
)

// priorityPlan is the priority sequence of a pattern: the base load takes
// rules 0..L-1, the run's new rules continue from L. The base load is
// thereby what the same pattern left in the table: with ascending
// priorities every new rule outranks (and shifts) all of it, with constant
// or descending ones none of it — the contrast of paper Fig. 6–8.
func priorityPlan(pattern string) (Priorities, error) {
	switch pattern {
	case "ascending":
		return Priorities{pattern, ascendingFrom}, nil
	case "descending":
		return Priorities{pattern, descendingFrom}, nil
	case "constant":
		return Priorities{pattern, constantValue}, nil
	}
	return Priorities{}, fmt.Errorf("unknown priority pattern %q", pattern)
}

var simStart = time.Date(2016, 1, 1, 0, 0, 0, 0, time.UTC)

// Run simulates one scenario to the end.
func Run(sc Scenario) (*Outcome, error) {
	if sc.Profile == nil {
		return nil, errors.New("sim: nil profile")
	}
	if sc.Flows < 1 || !(sc.Rate > 0) {
		return nil, fmt.Errorf("sim: %d flows at %g pps", sc.Flows, sc.Rate)
	}
	plan, err := priorityPlan(sc.Priority)
	if err != nil {
		return nil, err
	}
	clk := clock.NewSim(simStart)
	lat := sc.Profile.ControllerChannel.Latency
	var decodeErr error
	onErr := func(err error) { decodeErr = errors.Join(decodeErr, err) }
	toCtrl := NewChannel(clk, lat, nil, onErr)
	toSwitch := NewChannel(clk, lat, nil, onErr)

	sw, err := newSimSwitch(clk, sc.Profile, sc.Install, toCtrl)
	if err != nil {
		return nil, fmt.Errorf("sim: switch: %w", err)
	}
	hostPorts := map[[6]byte]uint16{MACFor(HostA): portA, MACFor(HostB): portB}
	ctrlPrio := Priorities{plan.Pattern, 0}
	if ctrlPrio.Start, err = plan.Of(sc.BaseLoad); err != nil {
		return nil, fmt.Errorf("sim: base load %d: %w", sc.BaseLoad, err)
	}
	ctrl := newSimController(clk, toSwitch, sc.ControllerService, ctrlPrio, hostPorts)
	toCtrl.SetReceiver(ctrl.fromSwitch)
	toSwitch.SetReceiver(sw.fromController)

	if err := preloadBase(sw, plan, sc.BaseLoad); err != nil {
		return nil, err
	}
	tuples, err := probes.GenerateTuples(sc.Flows, probes.TupleSpec{Src: HostA, Dst: HostB}, sc.Seed)
	if err != nil {
		return nil, err
	}
	if sc.Kind == Data {
		if err := preloadData(sw, plan, sc.BaseLoad, tuples); err != nil {
			return nil, err
		}
	}

	h := &hosts{clk: clk, sw: sw, latency: sc.LinkLatency}
	var finish func(*Outcome)
	switch sc.Kind {
	case OneWay:
		finish, err = h.oneWay(sc, tuples)
	case Handshake, Data:
		finish, err = h.probe(sc, tuples)
	default:
		err = fmt.Errorf("sim: unknown kind %q", sc.Kind)
	}
	if err != nil {
		return nil, err
	}
	clk.Run()
	if decodeErr != nil {
		return nil, fmt.Errorf("sim: control channel: %w", decodeErr)
	}
	if h.frameErr != nil {
		return nil, fmt.Errorf("sim: host: %w", h.frameErr)
	}
	out := &Outcome{
		ControllerTimes: ctrl.Times,
		Switch:          sw.stats,
		Agent:           sw.cpu.Stats(),
		Controller:      ctrl.stats,
		ToCtrl:          toCtrl.Stats(),
		ToSwitch:        toSwitch.Stats(),
		Events:          clk.Fired(),
		VirtualTime:     clk.Elapsed(),
	}
	finish(out)
	return out, nil
}

// preloadBase installs the base load: L exact-match rules for traffic that
// is not the experiment's (10.1.0.0/16 → 10.2.0.1), in the TCAM and the
// backing table, with the first L priorities of the run's pattern.
func preloadBase(sw *simSwitch, plan Priorities, n int) error {
	for i := range n {
		prio, err := plan.Of(i)
		if err != nil {
			return fmt.Errorf("sim: base rule %d: %w", i, err)
		}
		src := netip.AddrFrom4([4]byte{10, 1, byte(i >> 8), byte(i)})
		t := probes.FiveTuple{SrcIP: src, DstIP: netip.AddrFrom4([4]byte{10, 2, 0, 1}),
			SrcPort: 40000, DstPort: 80, Proto: probes.ProtoTCP}
		if err := sw.preinstall(flowModFor(t, portA, portB, prio), true); err != nil {
			return fmt.Errorf("sim: base rule %d: %w", i, err)
		}
	}
	return nil
}

// preloadData puts the data experiment's rules (both directions of every
// flow) in the backing table only: they must be swapped into the TCAM
// (paper §3.2). They are rules L, L+1, ... of the priority sequence, in the
// order the flows will use them.
func preloadData(sw *simSwitch, plan Priorities, base int, tuples []probes.FiveTuple) error {
	for i, t := range tuples {
		fwd, err1 := plan.Of(base + 2*i)
		rev, err2 := plan.Of(base + 2*i + 1)
		if err := errors.Join(err1, err2); err != nil {
			return fmt.Errorf("sim: data rule %d: %w", i, err)
		}
		if err := sw.preinstall(flowModFor(t, portA, portB, fwd), false); err != nil {
			return err
		}
		if err := sw.preinstall(flowModFor(t.Reverse(), portB, portA, rev), false); err != nil {
			return err
		}
	}
	return nil
}

// flowModFor is the exact-match rule the reactive app would install for
// frames of tuple t entering on inPort, output to outPort.
func flowModFor(t probes.FiveTuple, inPort, outPort uint16, prio uint16) *openflow.FlowMod {
	frame, _ := EncodeFrame(probes.ProbePacket{Type: probes.PacketACK, Tuple: t})
	m := matchOf(frame, inPort)
	return &openflow.FlowMod{
		Match: m, Command: openflow.FlowModAdd, Priority: prio,
		BufferID: openflow.NoBuffer, OutPort: openflow.PortNone,
		Actions: []openflow.Action{openflow.ActionOutput{Port: outPort}},
	}
}
