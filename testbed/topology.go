package testbed

import (
	"net"
	"net/netip"
)

// Config describes the wanted testbed.
type Config struct {
	// Name prefixes every object; default DefaultName ("pc").
	Name string
	// Hosts is the number of namespace hosts, 1..MaxHosts; default 2.
	Hosts int
	// Chain, if 2 or more, is the number of switches in a chain joined by
	// veth pairs (see ChainLink); it needs exactly 2 hosts, one at each
	// end. 0 or 1: one switch, no links.
	Chain int
	// StateDir receives <name>.json after Up; default DefaultStateDir.
	// Empty string after defaults means no state file.
	StateDir string
}

// DefaultStateDir holds the state files Up writes.
const DefaultStateDir = "/run/pseudocong/testbed"

func (c Config) withDefaults() Config {
	if c.Name == "" {
		c.Name = DefaultName
	}
	if c.Hosts == 0 {
		c.Hosts = 2
	}
	if c.StateDir == "" {
		c.StateDir = DefaultStateDir
	}
	return c
}

// Host is one namespace host of a testbed.
type Host struct {
	// Index is N: the host is 10.0.0.N and the switch's port N.
	Index int `json:"index"`
	// Netns is the namespace name (ip netns exec Netns ...).
	Netns string `json:"netns"`
	// Iface is the interface inside the namespace.
	Iface string `json:"iface"`
	// SwitchPort is the root-namespace veth end, to pass as --port.
	SwitchPort string `json:"switch_port"`
	// Addr is the host's address with prefix length.
	Addr netip.Prefix `json:"addr"`
	// MAC is the host interface's MAC.
	MAC string `json:"mac"`
}

// HardwareAddr parses MAC.
func (h Host) HardwareAddr() net.HardwareAddr {
	m, _ := net.ParseMAC(h.MAC)
	return m
}

// Topology is a testbed as built by Up.
type Topology struct {
	Name  string `json:"name"`
	Hosts []Host `json:"hosts"`
	// Chain are the links between the switches of a chain, in order.
	Chain []ChainLink `json:"chain,omitempty"`
}

// SwitchPorts lists the switch-side interfaces in host order: the
// --port flags for the software switch, in which order port N is host N.
func (t *Topology) SwitchPorts() []string {
	out := make([]string, len(t.Hosts))
	for i, h := range t.Hosts {
		out[i] = h.SwitchPort
	}
	return out
}

func hostSpec(name string, n int) Host {
	return Host{
		Index:      n,
		Netns:      NamespaceName(name, n),
		Iface:      HostIfName,
		SwitchPort: SwitchPortName(name, n),
		Addr:       HostAddr(n),
		MAC:        HostMAC(n).String(),
	}
}
