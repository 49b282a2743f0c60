package testenv

import (
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/vishvananda/netlink"
)

// VethOptions describes a veth pair with one end in a namespace and the
// other ("host" end) in the root namespace, where a switch attaches to it.
type VethOptions struct {
	// NS receives the namespace end. Required.
	NS *Netns
	// NSIfName names the namespace end; default "eth0". Names inside a
	// namespace cannot collide with other tests.
	NSIfName string
	// HostName is the host end's name after the random tag (at most 9
	// bytes); default "v".
	HostName string
	// Addr is an optional CIDR for the namespace end, e.g. "10.0.0.1/24".
	Addr string
	// MAC is an optional MAC for the namespace end, e.g. "02:00:00:00:00:01".
	MAC string
	// MTU of both ends; 0 keeps the kernel default (1500).
	MTU int
	// KeepIPv6 leaves IPv6 enabled. By default it is disabled on both ends
	// so router solicitations and DAD do not add unsolicited traffic (and
	// Packet-Ins, and stale drop flows) to experiments.
	KeepIPv6 bool
	// KeepTxOffload leaves TX checksum offload on at the namespace end. By
	// default it is turned off: with partial checksums, TCP through a
	// userspace datapath (OVS netdev, our AF_PACKET switch) fails.
	KeepTxOffload bool
}

// VethPair is a created pair; both ends are up.
type VethPair struct {
	// Host is the root-namespace end's full name.
	Host string
	// NSIf is the namespace end's name inside NS.
	NSIf string
	NS   *Netns
	// MAC of the namespace end.
	MAC net.HardwareAddr
	// IP of the namespace end (nil without Addr).
	IP net.IP
}

// Veth creates a veth pair per opts. Cleanup deletes it.
func Veth(t testing.TB, opts VethOptions) *VethPair {
	t.Helper()
	RequireRoot(t)
	if opts.NS == nil {
		t.Fatalf("veth: VethOptions.NS is required")
	}
	if opts.NSIfName == "" {
		opts.NSIfName = "eth0"
	}
	if opts.HostName == "" {
		opts.HostName = "v"
	}
	if len(opts.NSIfName) > maxIfNameLen {
		t.Fatalf("veth: namespace interface name %q longer than %d bytes", opts.NSIfName, maxIfNameLen)
	}
	var mac net.HardwareAddr
	if opts.MAC != "" {
		var err error
		if mac, err = net.ParseMAC(opts.MAC); err != nil {
			t.Fatalf("veth: %v", err)
		}
	}
	var addr *netlink.Addr
	if opts.Addr != "" {
		var err error
		if addr, err = netlink.ParseAddr(opts.Addr); err != nil {
			t.Fatalf("veth: address %q: %v", opts.Addr, err)
		}
	}

	nsh, err := opts.NS.Handle()
	if err != nil {
		t.Fatalf("veth: %v", err)
	}
	defer nsh.Close()

	// Create the pair with the peer directly inside the namespace, so the
	// namespace-side name never exists (and never collides) in the root.
	var host string
	for attempt := 0; ; attempt++ {
		host = tagged(t, NewTag(), opts.HostName)
		veth := &netlink.Veth{
			LinkAttrs:        netlink.LinkAttrs{Name: host, MTU: opts.MTU},
			PeerName:         opts.NSIfName,
			PeerNamespace:    netlink.NsFd(int(nsh)),
			PeerHardwareAddr: mac,
			PeerMTU:          uint32(opts.MTU),
		}
		err = netlink.LinkAdd(veth)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EEXIST) || attempt >= 5 {
			t.Fatalf("veth %s <-> %s/%s: %v", host, opts.NS.Name, opts.NSIfName, err)
		}
	}
	t.Cleanup(func() {
		if l, err := netlink.LinkByName(host); err == nil {
			if err := netlink.LinkDel(l); err != nil {
				t.Logf("veth cleanup %s: %v", host, err)
			}
		}
	})

	p := &VethPair{Host: host, NSIf: opts.NSIfName, NS: opts.NS}
	if err := p.configure(opts, addr); err != nil {
		t.Fatalf("veth %s: %v", host, err)
	}
	return p
}

func (p *VethPair) configure(opts VethOptions, addr *netlink.Addr) error {
	if !opts.KeepIPv6 {
		if err := os.WriteFile("/proc/sys/net/ipv6/conf/"+p.Host+"/disable_ipv6", []byte("1"), 0o644); err != nil {
			return fmt.Errorf("disable ipv6 on host end: %w", err)
		}
		if _, err := p.NS.Exec("sysctl", "-qw", "net.ipv6.conf."+p.NSIf+".disable_ipv6=1"); err != nil {
			return fmt.Errorf("disable ipv6 on namespace end: %w", err)
		}
	}
	if !opts.KeepTxOffload {
		if _, err := p.NS.Exec("ethtool", "-K", p.NSIf, "tx", "off"); err != nil {
			return fmt.Errorf("tx offload off: %w", err)
		}
	}
	hostLink, err := netlink.LinkByName(p.Host)
	if err != nil {
		return err
	}
	if err := netlink.LinkSetUp(hostLink); err != nil {
		return fmt.Errorf("host end up: %w", err)
	}

	h, err := p.NS.Handle()
	if err != nil {
		return err
	}
	defer h.Close()
	nl, err := netlink.NewHandleAt(h)
	if err != nil {
		return fmt.Errorf("netlink in %s: %w", p.NS.Name, err)
	}
	defer nl.Close()
	nsLink, err := nl.LinkByName(p.NSIf)
	if err != nil {
		return fmt.Errorf("%s in %s: %w", p.NSIf, p.NS.Name, err)
	}
	if addr != nil {
		if err := nl.AddrAdd(nsLink, addr); err != nil {
			return fmt.Errorf("address %s: %w", addr, err)
		}
		p.IP = addr.IP
	}
	if err := nl.LinkSetUp(nsLink); err != nil {
		return fmt.Errorf("namespace end up: %w", err)
	}
	p.MAC = nsLink.Attrs().HardwareAddr
	return nil
}
