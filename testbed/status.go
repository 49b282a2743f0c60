package testbed

import (
	"fmt"
	"net/netip"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// HostStatus is what Status finds for one host.
type HostStatus struct {
	Host
	NetnsExists    bool   `json:"netns_exists"`
	SwitchPortUp   bool   `json:"switch_port_up"`
	SwitchPortOper string `json:"switch_port_oper"`
	IfaceUp        bool   `json:"iface_up"`
	HasAddr        bool   `json:"has_addr"`
	TxChecksumOff  bool   `json:"tx_checksum_off"`
	IPv6Off        bool   `json:"ipv6_off"`
	// Problems lists what differs from what Up builds; empty when healthy.
	Problems []string `json:"problems,omitempty"`
}

// Status describes the testbed name as found on the host (by prefix).
type Status struct {
	Name  string       `json:"name"`
	Hosts []HostStatus `json:"hosts"`
}

// Healthy reports whether the testbed exists and every host is as Up
// builds it.
func (s *Status) Healthy() bool {
	if len(s.Hosts) == 0 {
		return false
	}
	for _, h := range s.Hosts {
		if len(h.Problems) > 0 {
			return false
		}
	}
	return true
}

// GetStatus inspects testbed name.
func GetStatus(name string) (*Status, error) {
	if err := ValidateName(name); err != nil {
		return nil, err
	}
	f, err := discover(name)
	if err != nil {
		return nil, err
	}
	st := &Status{Name: name}
	for _, n := range f.indices() {
		st.Hosts = append(st.Hosts, hostStatus(hostSpec(name, n), f))
	}
	return st, nil
}

func hostStatus(h Host, f found) HostStatus {
	hs := HostStatus{Host: h}
	problem := func(format string, a ...any) { hs.Problems = append(hs.Problems, fmt.Sprintf(format, a...)) }
	if sw, ok := f.ports[h.Index]; ok {
		hs.SwitchPortUp = sw.Attrs().Flags&netFlagUp != 0
		hs.SwitchPortOper = sw.Attrs().OperState.String()
		if !hs.SwitchPortUp {
			problem("switch port %s is down", h.SwitchPort)
		}
	} else {
		problem("switch port %s missing", h.SwitchPort)
	}
	_, hs.NetnsExists = f.namespaces[h.Index]
	if !hs.NetnsExists {
		problem("netns %s missing", h.Netns)
		return hs
	}
	nsh, err := netns.GetFromName(h.Netns)
	if err != nil {
		problem("open netns: %v", err)
		return hs
	}
	defer nsh.Close()
	nl, err := netlink.NewHandleAt(nsh)
	if err != nil {
		problem("netlink in netns: %v", err)
		return hs
	}
	defer nl.Close()
	link, err := nl.LinkByName(h.Iface)
	if err != nil {
		problem("%s missing in %s", h.Iface, h.Netns)
		return hs
	}
	hs.IfaceUp = link.Attrs().Flags&netFlagUp != 0
	if !hs.IfaceUp {
		problem("%s is down", h.Iface)
	}
	if addrs, err := nl.AddrList(link, netlink.FAMILY_V4); err == nil {
		for _, a := range addrs {
			if p, ok := netip.AddrFromSlice(a.IP); ok {
				ones, _ := a.Mask.Size()
				if netip.PrefixFrom(p.Unmap(), ones) == h.Addr {
					hs.HasAddr = true
				}
			}
		}
	}
	if !hs.HasAddr {
		problem("%s lacks %s", h.Iface, h.Addr)
	}
	_ = DoHandle(nsh, func() error {
		on, err := TxChecksum(h.Iface)
		if err != nil {
			problem("read tx checksum offload: %v", err)
		}
		hs.TxChecksumOff = err == nil && !on
		hs.IPv6Off = ipv6Disabled(h.Iface)
		return nil
	})
	if !hs.TxChecksumOff {
		problem("tx checksum offload is on at %s", h.Iface)
	}
	if !hs.IPv6Off {
		problem("IPv6 is enabled at %s", h.Iface)
	}
	return hs
}
