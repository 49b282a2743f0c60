package netsim

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/pseudocong/pseudocong/internal/yamldoc"
	"github.com/pseudocong/pseudocong/packet"
)

// This file declares a network: switches, hosts and the links between
// them, with one controller attached to every switch. A Topology is what a
// YAML file holds (docs/experiments.md, "Topologies") or what Go code
// builds (Chain); Compile checks it and resolves names, ports, addresses
// and link parameters into a Plan, from which Build (network.go) makes the
// hosts and links on a clock. Which model runs a switch is the builder's
// business: the Plan names each switch's profile, netsim does not read it.

// Topology is a declared network.
type Topology struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	// StaticARP gives every host a permanent ARP entry for every other
	// host's addresses (ip neigh ... permanent), so no ARP resolution
	// precedes a host's first packet. Paper 000's hosts behave so: only
	// their gratuitous announcements are on the wire.
	StaticARP  bool           `yaml:"static_arp"`
	Controller ControllerDecl `yaml:"controller"`
	Switches   []SwitchDecl   `yaml:"switches"`
	Hosts      []HostDecl     `yaml:"hosts"`
	Links      []LinkDecl     `yaml:"links"`
}

// ControllerDecl is the one controller; every switch has its own control
// channel to it.
type ControllerDecl struct {
	// Latency is the one-way latency of each control channel (tc time
	// syntax, e.g. 100us). Empty: each switch profile's
	// controller_channel.latency.
	Latency string `yaml:"latency"`
}

// SwitchDecl is one switch.
type SwitchDecl struct {
	Name string `yaml:"name"`
	// DPID is the datapath id; 0 gives the switch's position (1, 2, ...).
	DPID uint64 `yaml:"dpid"`
	// Profile is a switch profile name (profiles/) or path; empty: the
	// run's profile.
	Profile string `yaml:"profile"`
}

// HostDecl is one host: Address is shorthand for a single interface eth0.
type HostDecl struct {
	Name       string      `yaml:"name"`
	Address    string      `yaml:"address"`
	MAC        string      `yaml:"mac"`
	Interfaces []IfaceDecl `yaml:"interfaces"`
}

// IfaceDecl is one host interface. Address is an IPv4 prefix
// (10.0.0.1/24; a bare address means /24). MAC defaults to DefaultMAC of
// the address.
type IfaceDecl struct {
	Name    string `yaml:"name"`
	Address string `yaml:"address"`
	MAC     string `yaml:"mac"`
}

// LinkDecl is one full-duplex link between two node ends. An end is
// "host" (its next unlinked interface), "host:iface", "switch:N" (port N)
// or "switch" (the switch's next free port number).
type LinkDecl struct {
	A string `yaml:"a"`
	B string `yaml:"b"`
	// Rate in tc syntax (e.g. 1gbit); empty: an ideal link (IdealRate, no
	// serialisation delay to speak of).
	Rate string `yaml:"rate"`
	// Delay, one way (e.g. 1us); empty: the run's default link delay.
	Delay string `yaml:"delay"`
	// MTU in bytes of the frame; 0: none.
	MTU int `yaml:"mtu"`
	// Qdisc is the queue at both sending ends (ParseQdisc syntax); QdiscA
	// and QdiscB override it at end A's and end B's. Default DefaultQdisc.
	Qdisc  string `yaml:"qdisc"`
	QdiscA string `yaml:"qdisc_a"`
	QdiscB string `yaml:"qdisc_b"`
	// Loss is a loss model for both directions (ParseLoss syntax).
	Loss string `yaml:"loss"`
}

// DefaultQdisc is a link end's queue when the topology names none: a FIFO
// of 1 000 packets, Linux's default txqueuelen.
const DefaultQdisc = "droptail,limit=1000"

// IdealRate is the rate of a link declared without one: 2^62 bit/s, so a
// frame's serialisation rounds to 0 ns (the link carries the remainder: one
// nanosecond per about ten million minimum-size frames). An exact pure
// delay line, as the simulator's host cables were before links had rates.
const IdealRate int64 = 1 << 62

// ParseTopology decodes and compiles one topology document strictly
// (unknown keys are errors).
func ParseTopology(data []byte, source string) (*Topology, error) {
	var t Topology
	if err := yamldoc.DecodeStrict(data, &t); err != nil {
		return nil, fmt.Errorf("topology %s: %w", source, err)
	}
	if _, err := t.Compile(); err != nil {
		return nil, fmt.Errorf("topology %s: %w", source, err)
	}
	return &t, nil
}

// Node kinds of a Plan.
type NodeKind uint8

const (
	NodeSwitch NodeKind = iota
	NodeHost
)

// End is one resolved end of a link: a switch port or a host interface.
type End struct {
	Kind  NodeKind
	Node  int    // index into Plan.Switches or Plan.Hosts
	Port  uint16 // switch port number
	Iface int    // host interface index
	Name  string // "s1:2", "a:eth0"
}

// PlanSwitch, PlanHost, PlanIface and PlanLink are a Plan's resolved nodes
// and links.
type PlanSwitch struct {
	Name    string
	DPID    uint64
	Profile string
	// Ports are the switch's port numbers in link order, with their links.
	Ports []PlanPort
}

type PlanPort struct {
	No   uint16
	Link int // index into Plan.Links
}

type PlanHost struct {
	Name   string
	Ifaces []PlanIface
}

type PlanIface struct {
	Name   string
	MAC    packet.MAC
	Prefix netip.Prefix
	Link   int // index into Plan.Links; -1 when unlinked
}

type PlanLink struct {
	A, B     End
	Rate     int64
	Delay    time.Duration
	HasDelay bool // false: the run's default delay
	MTU      int
	QdiscA   string // at A's sending end (A → B)
	QdiscB   string
	Loss     string
}

// Name is "A - B".
func (l PlanLink) Name() string { return l.A.Name + " - " + l.B.Name }

// Plan is a compiled Topology.
type Plan struct {
	Name              string
	StaticARP         bool
	ControllerLatency time.Duration
	HasCtrlLatency    bool
	Switches          []PlanSwitch
	Hosts             []PlanHost
	Links             []PlanLink
}

// Switch returns the switch named name.
func (p *Plan) Switch(name string) (int, bool) {
	for i, s := range p.Switches {
		if s.Name == name {
			return i, true
		}
	}
	return 0, false
}

// Host returns the host named name.
func (p *Plan) Host(name string) (int, bool) {
	for i, h := range p.Hosts {
		if h.Name == name {
			return i, true
		}
	}
	return 0, false
}

// Compile checks the topology and resolves it. Every problem is reported,
// joined into one error: empty or duplicate names, unknown nodes, missing
// link ends, a port or interface on two links, duplicate addresses and
// MACs, bad rates, delays, qdiscs and loss models.
func (t *Topology) Compile() (*Plan, error) {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	p := &Plan{Name: t.Name, StaticARP: t.StaticARP}
	if t.Controller.Latency != "" {
		d, err := ParseTime(t.Controller.Latency)
		if err != nil {
			bad("controller.latency: %v", err)
		}
		p.ControllerLatency, p.HasCtrlLatency = d, true
	}
	names := map[string]string{} // node name -> what declared it
	declare := func(name, where string) bool {
		switch {
		case name == "":
			bad("%s: name must not be empty", where)
			return false
		case strings.ContainsAny(name, ": \t/"):
			bad("%s: name %q must not contain ':', '/' or spaces", where, name)
			return false
		}
		if prev, dup := names[name]; dup {
			bad("%s: duplicate node name %q (also %s)", where, name, prev)
			return false
		}
		names[name] = where
		return true
	}
	if len(t.Switches) == 0 {
		bad("switches: at least one switch is needed")
	}
	dpids := map[uint64]string{}
	for i, s := range t.Switches {
		where := fmt.Sprintf("switches[%d]", i)
		declare(s.Name, where)
		dpid := s.DPID
		if dpid == 0 {
			dpid = uint64(i + 1)
		}
		if prev, dup := dpids[dpid]; dup {
			bad("%s (%s): duplicate dpid %d (also %s)", where, s.Name, dpid, prev)
		}
		dpids[dpid] = s.Name
		p.Switches = append(p.Switches, PlanSwitch{Name: s.Name, DPID: dpid, Profile: s.Profile})
	}
	addrs := map[netip.Addr]string{}
	macs := map[packet.MAC]string{}
	for i, h := range t.Hosts {
		where := fmt.Sprintf("hosts[%d]", i)
		declare(h.Name, where)
		ifs := h.Interfaces
		if h.Address != "" {
			if len(ifs) > 0 {
				bad("%s (%s): give address or interfaces, not both", where, h.Name)
			}
			ifs = []IfaceDecl{{Name: "eth0", Address: h.Address, MAC: h.MAC}}
		} else if h.MAC != "" {
			bad("%s (%s): mac without address (a host-level mac goes with the address shorthand)", where, h.Name)
		}
		if len(ifs) == 0 {
			bad("%s (%s): no address and no interfaces", where, h.Name)
		}
		ph := PlanHost{Name: h.Name}
		seen := map[string]bool{}
		for _, d := range ifs {
			iw := fmt.Sprintf("%s (%s) interface %q", where, h.Name, d.Name)
			if d.Name == "" || strings.ContainsAny(d.Name, ": \t/") {
				bad("%s: interface name must be non-empty, without ':', '/' or spaces", iw)
			} else if seen[d.Name] {
				bad("%s: duplicate interface", iw)
			}
			seen[d.Name] = true
			pref, err := parsePrefix(d.Address)
			if err != nil {
				bad("%s: %v", iw, err)
				continue
			}
			owner := fmt.Sprintf("%s:%s", h.Name, d.Name)
			if prev, dup := addrs[pref.Addr()]; dup {
				bad("%s: duplicate address %v (also %s)", iw, pref.Addr(), prev)
			}
			addrs[pref.Addr()] = owner
			mac := DefaultMAC(pref.Addr())
			if d.MAC != "" {
				if mac, err = parseMAC(d.MAC); err != nil {
					bad("%s: %v", iw, err)
				}
			}
			if prev, dup := macs[mac]; dup {
				bad("%s: duplicate mac %v (also %s)", iw, mac, prev)
			}
			macs[mac] = owner
			ph.Ifaces = append(ph.Ifaces, PlanIface{Name: d.Name, MAC: mac, Prefix: pref, Link: -1})
		}
		p.Hosts = append(p.Hosts, ph)
	}
	p.compileLinks(t.Links, bad)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return p, nil
}

// compileLinks resolves link ends in two passes: explicit ports first, so
// that an automatic "switch" end takes a number no explicit end uses.
func (p *Plan) compileLinks(links []LinkDecl, bad func(string, ...any)) {
	type pending struct {
		link int
		a    bool
	}
	used := make([]map[uint16]int, len(p.Switches)) // port -> link
	for i := range used {
		used[i] = map[uint16]int{}
	}
	var auto []pending
	p.Links = make([]PlanLink, len(links))
	resolve := func(li int, spec string, isA bool) (End, bool) {
		where := fmt.Sprintf("links[%d] (%s - %s)", li, links[li].A, links[li].B)
		side := "b"
		if isA {
			side = "a"
		}
		if strings.TrimSpace(spec) == "" {
			bad("%s: missing link end %s", where, side)
			return End{}, false
		}
		node, sub, hasSub := strings.Cut(spec, ":")
		if si, ok := p.Switch(node); ok {
			e := End{Kind: NodeSwitch, Node: si}
			if !hasSub {
				auto = append(auto, pending{li, isA})
				return e, true
			}
			n, err := strconv.ParseUint(sub, 10, 16)
			if err != nil || n < 1 || n > 0xff00 {
				bad("%s: end %s %q: port must be a number in 1..65280", where, side, spec)
				return End{}, false
			}
			e.Port = uint16(n)
			if prev, dup := used[si][e.Port]; dup {
				bad("%s: duplicate port %s (also on links[%d])", where, spec, prev)
				return End{}, false
			}
			used[si][e.Port] = li
			e.Name = fmt.Sprintf("%s:%d", node, e.Port)
			return e, true
		}
		if hi, ok := p.Host(node); ok {
			h := &p.Hosts[hi]
			idx := -1
			for j, f := range h.Ifaces {
				if hasSub && f.Name == sub || !hasSub && f.Link < 0 {
					idx = j
					break
				}
			}
			switch {
			case idx < 0 && hasSub:
				bad("%s: end %s %q: host %s has no interface %q", where, side, spec, node, sub)
				return End{}, false
			case idx < 0:
				bad("%s: end %s %q: every interface of host %s is already linked", where, side, spec, node)
				return End{}, false
			case h.Ifaces[idx].Link >= 0:
				bad("%s: duplicate port %s:%s (also on links[%d])", where, node, h.Ifaces[idx].Name, h.Ifaces[idx].Link)
				return End{}, false
			}
			h.Ifaces[idx].Link = li
			return End{Kind: NodeHost, Node: hi, Iface: idx, Name: node + ":" + h.Ifaces[idx].Name}, true
		}
		bad("%s: end %s: unknown node %q (switches and hosts are declared above the links)", where, side, node)
		return End{}, false
	}
	for i, d := range links {
		l := &p.Links[i]
		where := fmt.Sprintf("links[%d] (%s - %s)", i, d.A, d.B)
		okA, okB := false, false
		l.A, okA = resolve(i, d.A, true)
		l.B, okB = resolve(i, d.B, false)
		if okA && okB && l.A.Kind == l.B.Kind && l.A.Node == l.B.Node && l.A.Kind == NodeHost {
			bad("%s: a host linked to itself", where)
		}
		l.Rate = IdealRate
		if d.Rate != "" {
			r, err := ParseRate(d.Rate)
			if err != nil {
				bad("%s: %v", where, err)
			}
			l.Rate = r
		}
		if d.Delay != "" {
			v, err := ParseTime(d.Delay)
			if err != nil {
				bad("%s: %v", where, err)
			}
			l.Delay, l.HasDelay = v, true
		}
		if d.MTU < 0 {
			bad("%s: mtu %d: want ≥ 0 (0 for none)", where, d.MTU)
		}
		l.MTU = d.MTU
		l.QdiscA, l.QdiscB = firstNonEmpty(d.QdiscA, d.Qdisc, DefaultQdisc), firstNonEmpty(d.QdiscB, d.Qdisc, DefaultQdisc)
		for _, q := range []string{l.QdiscA, l.QdiscB} {
			if _, err := ParseQdisc(q); err != nil {
				bad("%s: %v", where, err)
			}
		}
		if d.Loss != "" {
			if _, err := ParseLoss(d.Loss); err != nil {
				bad("%s: %v", where, err)
			}
		}
		l.Loss = d.Loss
	}
	for _, a := range auto {
		l := &p.Links[a.link]
		e := &l.B
		if a.a {
			e = &l.A
		}
		si := e.Node
		n := uint16(1)
		for ; n <= 0xff00; n++ {
			if _, taken := used[si][n]; !taken {
				break
			}
		}
		if n > 0xff00 {
			bad("links[%d]: switch %s has no free port", a.link, p.Switches[si].Name)
			continue
		}
		used[si][n] = a.link
		e.Port = n
		e.Name = fmt.Sprintf("%s:%d", p.Switches[si].Name, n)
	}
	for i, l := range p.Links {
		for _, e := range []End{l.A, l.B} {
			if e.Kind == NodeSwitch && e.Name != "" {
				p.Switches[e.Node].Ports = append(p.Switches[e.Node].Ports, PlanPort{No: e.Port, Link: i})
			}
		}
	}
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

func parsePrefix(s string) (netip.Prefix, error) {
	if s == "" {
		return netip.Prefix{}, errors.New("no address (want an IPv4 address such as 10.0.0.1/24)")
	}
	if !strings.Contains(s, "/") {
		s += "/24"
	}
	p, err := netip.ParsePrefix(s)
	if err != nil || !p.Addr().Is4() {
		return netip.Prefix{}, fmt.Errorf("address %q: want an IPv4 address such as 10.0.0.1/24", s)
	}
	return p, nil
}

func parseMAC(s string) (packet.MAC, error) {
	var m packet.MAC
	parts := strings.Split(s, ":")
	if len(parts) != 6 {
		return m, fmt.Errorf("mac %q: want six hex bytes such as 02:00:0a:00:00:01", s)
	}
	for i, p := range parts {
		v, err := strconv.ParseUint(p, 16, 8)
		if err != nil || len(p) != 2 {
			return m, fmt.Errorf("mac %q: want six hex bytes such as 02:00:0a:00:00:01", s)
		}
		m[i] = byte(v)
	}
	if m[0]&1 != 0 {
		return m, fmt.Errorf("mac %q: a multicast address cannot be an interface's", s)
	}
	return m, nil
}

// Chain is k switches in a row between two hosts: h1 (10.0.0.1) — s1 — s2
// — … — sk — h2 (10.0.0.2), static ARP, ideal links with the run's
// default delay. On every switch port 1 faces h1 and port 2 faces h2.
func Chain(k int) (*Topology, error) {
	if k < 1 || k > maxChain {
		return nil, fmt.Errorf("netsim: chain of %d switches: want 1..%d", k, maxChain)
	}
	t := &Topology{Name: fmt.Sprintf("chain:%d", k), StaticARP: true,
		Description: fmt.Sprintf("%d switches in a row between two hosts", k),
		Hosts:       []HostDecl{{Name: "h1", Address: "10.0.0.1/24"}, {Name: "h2", Address: "10.0.0.2/24"}}}
	for i := 1; i <= k; i++ {
		t.Switches = append(t.Switches, SwitchDecl{Name: fmt.Sprintf("s%d", i)})
	}
	t.Links = append(t.Links, LinkDecl{A: "h1", B: "s1:1"})
	for i := 1; i < k; i++ {
		t.Links = append(t.Links, LinkDecl{A: fmt.Sprintf("s%d:2", i), B: fmt.Sprintf("s%d:1", i+1)})
	}
	t.Links = append(t.Links, LinkDecl{A: fmt.Sprintf("s%d:2", k), B: "h2"})
	return t, nil
}

// maxChain bounds Chain: each switch is a whole switch model.
const maxChain = 64

// Generated returns the topology a generator argument names ("chain:K"),
// or ok false when s is no generator.
func Generated(s string) (t *Topology, ok bool, err error) {
	kind, arg, found := strings.Cut(s, ":")
	if kind != "chain" || !found {
		return nil, false, nil
	}
	k, err := strconv.Atoi(arg)
	if err != nil {
		return nil, true, fmt.Errorf("topology %q: want chain:K with K a number of switches", s)
	}
	t, err = Chain(k)
	return t, true, err
}
