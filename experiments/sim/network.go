package sim

import (
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/pseudocong/pseudocong/controller"
	"github.com/pseudocong/pseudocong/internal/clock"
	"github.com/pseudocong/pseudocong/netsim"
	"github.com/pseudocong/pseudocong/openflow"
	"github.com/pseudocong/pseudocong/packet"
	"github.com/pseudocong/pseudocong/probes"
	"github.com/pseudocong/pseudocong/profile"
	"github.com/pseudocong/pseudocong/softswitch/dataplane"
)

// network is one run's simulated network: the topology's plan, the switch
// models (made first, so that their handshakes and preloads precede the
// links), then the netsim hosts and links around them.
type network struct {
	clk      *clock.Sim
	sc       Scenario
	plan     *netsim.Plan
	ctrl     *controllerHost
	switches []*simSwitch
	net      *netsim.Network
	rec      *netsim.Recorder
	// client and server are the probe hosts; path is the switches between
	// them with their ports toward each.
	clientIdx, serverIdx int
	client, server       netsim.PlanIface
	path                 []hop
	onPath               map[int]int // switch index -> index in path
	errs                 []error     // probe conversion and send errors
	// bulkEnd is when a Bulk run ends (its flows send until then); covers
	// counts its wildcard cover rules (bulk.go).
	bulkEnd time.Time
	covers  int
}

// hop is one switch on the client–server path: in faces the client, out
// the server.
type hop struct {
	idx     int
	sw      *simSwitch
	in, out uint16
}

// defaultTopology is used when the scenario names none: paper 000's Fig.
// 3 has the shape of a chain of one switch.
func defaultTopology() *netsim.Topology {
	t, err := netsim.Chain(1)
	if err != nil {
		panic(err) // a constant argument
	}
	return t
}

func newNetwork(clk *clock.Sim, sc Scenario, pattern controller.PriorityStrategy) (*network, error) {
	top := sc.Topology
	if top == nil {
		top = defaultTopology()
	}
	plan, err := top.Compile()
	if err != nil {
		return nil, fmt.Errorf("sim: topology %s: %w", top.Name, err)
	}
	n := &network{clk: clk, sc: sc, plan: plan, onPath: map[int]int{}}
	if err := n.pickHosts(); err != nil {
		return nil, err
	}
	n.ctrl = newControllerHost(clk, pattern, sc.ControllerService, sc.Reorder)
	profiles := map[string]*profile.Profile{"": sc.Profile}
	for _, ps := range plan.Switches {
		prof, ok := profiles[ps.Profile]
		if !ok {
			if prof, err = profile.Load(ps.Profile); err != nil {
				return nil, fmt.Errorf("sim: switch %s: %w", ps.Name, err)
			}
			profiles[ps.Profile] = prof
		}
		lat := prof.ControllerChannel.Latency
		if plan.HasCtrlLatency {
			lat = plan.ControllerLatency
		}
		s, err := newSimSwitch(n.ctrl, ps.Name, ps.DPID, prof, lat)
		if err != nil {
			return nil, err
		}
		n.switches = append(n.switches, s)
	}
	if err := n.findPath(); err != nil {
		return nil, err
	}
	return n, nil
}

// pickHosts finds the client and server (by name, else the first two
// hosts) and their first interfaces.
func (n *network) pickHosts() error {
	p := n.plan
	pick := func(name string, def int, role string) (int, error) {
		if name == "" {
			if def >= len(p.Hosts) {
				return 0, fmt.Errorf("sim: topology %s: %d hosts; a run needs a client and a server", p.Name, len(p.Hosts))
			}
			return def, nil
		}
		i, ok := p.Host(name)
		if !ok {
			return 0, fmt.Errorf("sim: topology %s: %s %q is not a host", p.Name, role, name)
		}
		return i, nil
	}
	var err1, err2 error
	n.clientIdx, err1 = pick(n.sc.Client, 0, "client")
	n.serverIdx, err2 = pick(n.sc.Server, 1, "server")
	if err := errors.Join(err1, err2); err != nil {
		return err
	}
	if n.clientIdx == n.serverIdx {
		return fmt.Errorf("sim: topology %s: client and server are both %s", p.Name, p.Hosts[n.clientIdx].Name)
	}
	n.client, n.server = p.Hosts[n.clientIdx].Ifaces[0], p.Hosts[n.serverIdx].Ifaces[0]
	return nil
}

// findPath is a breadth-first search from the client's first interface
// to the server's through switches (hosts do not forward); on several
// shortest paths the first found (ports in link order) wins.
func (n *network) findPath() error {
	p := n.plan
	noPath := fmt.Errorf("sim: topology %s: no path from %s to %s through switches", p.Name,
		p.Hosts[n.clientIdx].Name, p.Hosts[n.serverIdx].Name)
	// far is the other end of link li seen from end (kind, node, port/iface).
	far := func(li int, self netsim.End) netsim.End {
		l := p.Links[li]
		if l.A == self {
			return l.B
		}
		return l.A
	}
	ownEnd := func(li int, sw int, port uint16) netsim.End {
		l := p.Links[li]
		if l.A.Kind == netsim.NodeSwitch && l.A.Node == sw && l.A.Port == port {
			return l.A
		}
		return l.B
	}
	if n.client.Link < 0 || n.server.Link < 0 {
		return noPath
	}
	entry := p.Links[n.client.Link].A
	if entry.Kind == netsim.NodeHost {
		entry = p.Links[n.client.Link].B
	}
	if entry.Kind != netsim.NodeSwitch {
		return noPath
	}
	type via struct {
		parent    int    // -1 for the entry switch
		in        uint16 // the port the path enters by
		parentOut uint16 // the parent's port toward this switch
	}
	seen := map[int]*via{entry.Node: {parent: -1, in: entry.Port}}
	queue := []int{entry.Node}
	last, lastOut := -1, uint16(0)
	for len(queue) > 0 && last < 0 {
		cur := queue[0]
		queue = queue[1:]
		for _, port := range p.Switches[cur].Ports {
			e := far(port.Link, ownEnd(port.Link, cur, port.No))
			if e.Kind == netsim.NodeHost {
				if e.Node == n.serverIdx && port.Link == n.server.Link {
					last, lastOut = cur, port.No
					break
				}
				continue
			}
			if _, ok := seen[e.Node]; ok {
				continue
			}
			seen[e.Node] = &via{parent: cur, in: e.Port, parentOut: port.No}
			queue = append(queue, e.Node)
		}
	}
	if last < 0 {
		return noPath
	}
	// Walk back: a switch's out port is the one toward its child.
	var rev []hop
	out := lastOut
	for cur := last; cur >= 0; {
		v := seen[cur]
		rev = append(rev, hop{idx: cur, in: v.in, out: out})
		out = v.parentOut
		cur = v.parent
	}
	for i := len(rev) - 1; i >= 0; i-- {
		h := rev[i]
		h.sw = n.switches[h.idx]
		n.onPath[h.idx] = len(n.path)
		n.path = append(n.path, h)
	}
	return nil
}

// build makes the hosts and links around the switches.
func (n *network) build() error {
	opts := netsim.BuildOptions{
		Switch:       func(i int, _ netsim.PlanSwitch) (netsim.SwitchNode, error) { return n.switches[i], nil },
		DefaultDelay: n.sc.LinkLatency,
	}
	if n.sc.SeriesInterval > 0 {
		rec, err := netsim.NewRecorder(n.sc.SeriesInterval, 0)
		if err != nil {
			return fmt.Errorf("sim: %w", err)
		}
		n.rec, opts.Recorder = rec, rec
	}
	nw, err := netsim.Build(n.clk, n.plan, opts)
	if err != nil {
		return fmt.Errorf("sim: %w", err)
	}
	n.net = nw
	return nil
}

func (n *network) misses() uint64 {
	var m uint64
	for _, s := range n.switches {
		m += s.pl.Agent().Stats().Misses
	}
	return m
}

func (n *network) hostErrors() error {
	errs := n.errs
	for _, h := range n.net.Hosts {
		if err := h.Err(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (s *simSwitch) outcome() SwitchOutcome {
	inTCAM, inBacking := s.pl.Occupancy()
	return SwitchOutcome{Name: s.name, Pipeline: s.pl.Stats(), Table: s.pl.TableStats(), Agent: s.pl.Agent().Stats(),
		ToCtrl: s.toCtrl.Stats(), ToSwitch: s.toSwitch.Stats(), InTCAM: inTCAM, InBacking: inBacking}
}

// macOf is the MAC of the topology interface holding a, or the default
// MAC of the address (for the base load's foreign traffic).
func (n *network) macOf(a netip.Addr) packet.MAC {
	for _, h := range n.plan.Hosts {
		for _, f := range h.Ifaces {
			if f.Prefix.Addr() == a {
				return f.MAC
			}
		}
	}
	return netsim.DefaultMAC(a)
}

// ruleMatch is the match the reactive app installs for frames of tuple t
// entering on inPort: controller.FlowMatch of such a frame, so the rules
// the experiment puts in the table rank and match exactly like the app's.
func (n *network) ruleMatch(t probes.FiveTuple, inPort uint16) (openflow.Match, error) {
	var p packet.Packet
	if err := fillTCP(&p, probes.ProbePacket{Type: probes.PacketSYN, Tuple: t}); err != nil {
		return openflow.Match{}, err
	}
	p.Layers |= packet.LayerEthernet
	p.Ethernet.Src, p.Ethernet.Dst = n.macOf(t.SrcIP), n.macOf(t.DstIP)
	frame, err := p.AppendBinary(make([]byte, 0, 64))
	if err != nil {
		return openflow.Match{}, fmt.Errorf("rule for %v: %w", t, err)
	}
	m, ok := controller.FlowMatch(frame, inPort)
	if !ok {
		return m, fmt.Errorf("rule for %v: no match", t)
	}
	return m, nil
}

func (n *network) ruleFlowMod(t probes.FiveTuple, inPort, outPort, prio uint16) (*openflow.FlowMod, error) {
	m, err := n.ruleMatch(t, inPort)
	if err != nil {
		return nil, err
	}
	return &openflow.FlowMod{
		Header:  openflow.Header{Version: openflow.Version, Type: openflow.TypeFlowMod},
		Match:   m,
		Command: openflow.FlowModAdd, Priority: prio,
		BufferID: openflow.NoBuffer, OutPort: openflow.PortNone,
		Actions: []openflow.Action{openflow.ActionOutput{Port: outPort}},
	}, nil
}

// preloadBase puts the base load in every switch's TCAM: L rules for
// traffic that is not the experiment's (10.1.0.0/16 → 10.2.0.1), entering
// where the client's traffic enters (a switch off the path: its first
// port).
func preloadBase(n *network, pattern controller.PriorityStrategy, count int) error {
	prio := basePriority(pattern)
	for si, s := range n.switches {
		in, out := uint16(1), uint16(1)
		if i, ok := n.onPath[si]; ok {
			in, out = n.path[i].in, n.path[i].out
		} else if ports := n.plan.Switches[si].Ports; len(ports) > 0 {
			in, out = ports[0].No, ports[0].No
		}
		next, err := n.baseRules(in)
		if err != nil {
			return fmt.Errorf("sim: switch %s: base rules: %w", s.name, err)
		}
		for i := range count {
			fm := &openflow.FlowMod{
				Header:  openflow.Header{Version: openflow.Version, Type: openflow.TypeFlowMod},
				Match:   next(i),
				Command: openflow.FlowModAdd, Priority: prio,
				BufferID: openflow.NoBuffer, OutPort: openflow.PortNone,
				Actions: []openflow.Action{openflow.ActionOutput{Port: out}},
			}
			if _, err := s.pl.Preload(fm, dataplane.InTCAM); err != nil {
				return fmt.Errorf("sim: switch %s: base rule %d: %w", s.name, i, err)
			}
		}
	}
	return nil
}

// baseTuple is the i-th flow of the base load's foreign traffic.
func baseTuple(i int) probes.FiveTuple {
	return probes.FiveTuple{SrcIP: netip.AddrFrom4([4]byte{10, 1, byte(i >> 8), byte(i)}),
		DstIP: netip.AddrFrom4([4]byte{10, 2, 0, 1}), SrcPort: 40000, DstPort: 80, Proto: probes.ProtoTCP}
}

// baseRules returns the match of the i-th base rule entering on inPort:
// ruleMatch of the first, with the source address and MAC of the i-th
// (the only fields in which the base flows differ, and fields
// controller.FlowMatch copies from the frame as they are), so the
// thousands of base rules of a run are not each built as a frame and
// parsed. TestBaseRulesAreRuleMatch holds the two equal.
func (n *network) baseRules(inPort uint16) (func(i int) openflow.Match, error) {
	tmpl, err := n.ruleMatch(baseTuple(0), inPort)
	if err != nil {
		return nil, err
	}
	return func(i int) openflow.Match {
		m := tmpl
		src := baseTuple(i).SrcIP
		a := src.As4()
		m.NwSrc = uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3])
		m.DlSrc = n.macOf(src)
		return m
	}, nil
}

// preloadData puts both directions' rules of every data flow in the
// backing table only of every switch on the path: they must be swapped
// into the TCAM (paper §3.2).
func preloadData(n *network, pattern controller.PriorityStrategy, tuples []probes.FiveTuple) error {
	for _, h := range n.path {
		for i, t := range tuples {
			fwd, err1 := pattern.Nth(2 * i)
			rev, err2 := pattern.Nth(2*i + 1)
			if err := errors.Join(err1, err2); err != nil {
				return fmt.Errorf("sim: data rule %d: %w", i, err)
			}
			f, err1 := n.ruleFlowMod(t, h.in, h.out, fwd)
			r, err2 := n.ruleFlowMod(t.Reverse(), h.out, h.in, rev)
			if err := errors.Join(err1, err2); err != nil {
				return fmt.Errorf("sim: data rule %d: %w", i, err)
			}
			if _, err := h.sw.pl.Preload(f, dataplane.InBacking); err != nil {
				return fmt.Errorf("sim: switch %s: data rule %d: %w", h.sw.name, i, err)
			}
			if _, err := h.sw.pl.Preload(r, dataplane.InBacking); err != nil {
				return fmt.Errorf("sim: switch %s: data rule %d: %w", h.sw.name, i, err)
			}
		}
	}
	return nil
}
