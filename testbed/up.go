package testbed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// Up converges the host to the testbed cfg describes: it creates what is
// missing, repairs what is misconfigured, and removes hosts beyond
// cfg.Hosts. On any error it removes the whole testbed (Down) and returns
// the error, so a failed Up leaves nothing behind.
func Up(ctx context.Context, cfg Config) (*Topology, error) {
	cfg = cfg.withDefaults()
	if err := ValidateName(cfg.Name); err != nil {
		return nil, err
	}
	if cfg.Hosts < 1 || cfg.Hosts > MaxHosts {
		return nil, fmt.Errorf("testbed %s: %d hosts, want 1..%d", cfg.Name, cfg.Hosts, MaxHosts)
	}
	if cfg.Chain < 0 || cfg.Chain > MaxChain {
		return nil, fmt.Errorf("testbed %s: chain of %d switches, want 1..%d", cfg.Name, cfg.Chain, MaxChain)
	}
	if cfg.Chain >= 2 && cfg.Hosts != 2 {
		return nil, fmt.Errorf("testbed %s: a chain of switches has 2 hosts, one at each end (not %d)", cfg.Name, cfg.Hosts)
	}
	topo, err := up(ctx, cfg)
	if err != nil {
		if derr := Down(cfg.Name, DownOptions{StateDir: cfg.StateDir}); derr != nil {
			err = errors.Join(err, fmt.Errorf("cleanup after failed up: %w", derr))
		}
		return nil, err
	}
	return topo, nil
}

func up(ctx context.Context, cfg Config) (*Topology, error) {
	topo := &Topology{Name: cfg.Name}
	for n := 1; n <= cfg.Hosts; n++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		h := hostSpec(cfg.Name, n)
		if err := upHost(h); err != nil {
			return nil, fmt.Errorf("testbed %s host %d: %w", cfg.Name, n, err)
		}
		topo.Hosts = append(topo.Hosts, h)
	}
	if err := removeSurplus(cfg.Name, cfg.Hosts); err != nil {
		return nil, err
	}
	links, err := upChain(cfg.Name, max(cfg.Chain, 1))
	if err != nil {
		return nil, err
	}
	topo.Chain = links
	if err := waitReady(topo); err != nil {
		return nil, err
	}
	if err := writeState(cfg.StateDir, topo); err != nil {
		return nil, err
	}
	return topo, nil
}

// upHost creates or repairs one host: namespace, veth pair, addresses,
// offload, IPv6.
func upHost(h Host) error {
	if err := createNamespace(h.Netns); err != nil {
		return err
	}
	nsh, err := netns.GetFromName(h.Netns)
	if err != nil {
		return fmt.Errorf("open netns %s: %w", h.Netns, err)
	}
	defer nsh.Close()
	nl, err := netlink.NewHandleAt(nsh)
	if err != nil {
		return fmt.Errorf("netlink in %s: %w", h.Netns, err)
	}
	defer nl.Close()

	if err := ensureVeth(h, nsh, nl); err != nil {
		return err
	}

	// Root end: IPv6 off, up, no address.
	sw, err := netlink.LinkByName(h.SwitchPort)
	if err != nil {
		return fmt.Errorf("switch port %s: %w", h.SwitchPort, err)
	}
	if err := disableIPv6(h.SwitchPort); err != nil {
		return err
	}
	if err := netlink.LinkSetUp(sw); err != nil {
		return fmt.Errorf("switch port %s up: %w", h.SwitchPort, err)
	}

	// Namespace end: IPv6 off and TX checksum offload off (both need the
	// thread inside the namespace), then address and up.
	if err := DoHandle(nsh, func() error {
		if err := disableIPv6(h.Iface); err != nil {
			return err
		}
		return SetTxChecksum(h.Iface, false)
	}); err != nil {
		return fmt.Errorf("netns %s: %w", h.Netns, err)
	}
	lo, err := nl.LinkByName("lo")
	if err != nil {
		return fmt.Errorf("lo in %s: %w", h.Netns, err)
	}
	if err := nl.LinkSetUp(lo); err != nil {
		return fmt.Errorf("lo up in %s: %w", h.Netns, err)
	}
	link, err := nl.LinkByName(h.Iface)
	if err != nil {
		return fmt.Errorf("%s in %s: %w", h.Iface, h.Netns, err)
	}
	addr := &netlink.Addr{IPNet: &net.IPNet{IP: h.Addr.Addr().AsSlice(), Mask: net.CIDRMask(h.Addr.Bits(), 32)}}
	if err := nl.AddrReplace(link, addr); err != nil {
		return fmt.Errorf("address %s on %s in %s: %w", h.Addr, h.Iface, h.Netns, err)
	}
	if err := nl.LinkSetUp(link); err != nil {
		return fmt.Errorf("%s up in %s: %w", h.Iface, h.Netns, err)
	}
	return nil
}

// ensureVeth makes sure the pair exists with the right ends. A root end
// whose peer is missing (its namespace was deleted and recreated) is
// replaced.
func ensureVeth(h Host, nsh netns.NsHandle, nl *netlink.Handle) error {
	if sw, err := netlink.LinkByName(h.SwitchPort); err == nil {
		if _, err := nl.LinkByName(h.Iface); err == nil {
			if _, ok := sw.(*netlink.Veth); ok {
				return nil
			}
		}
		if err := netlink.LinkDel(sw); err != nil {
			return fmt.Errorf("remove stale %s: %w", h.SwitchPort, err)
		}
	}
	veth := &netlink.Veth{
		LinkAttrs: netlink.LinkAttrs{
			Name:         h.SwitchPort,
			HardwareAddr: SwitchPortMAC(h.Index),
		},
		PeerName:         h.Iface,
		PeerNamespace:    netlink.NsFd(int(nsh)),
		PeerHardwareAddr: h.HardwareAddr(),
	}
	// Create the peer directly inside the namespace, so "eth0" never
	// exists (and never collides) in the root namespace.
	if err := netlink.LinkAdd(veth); err != nil {
		return fmt.Errorf("veth %s <-> %s/%s: %w", h.SwitchPort, h.Netns, h.Iface, err)
	}
	return nil
}

// removeSurplus removes hosts numbered above keep.
func removeSurplus(name string, keep int) error {
	found, err := discover(name)
	if err != nil {
		return err
	}
	var errs []error
	for _, n := range found.indices() {
		if n > keep {
			errs = append(errs, removeHost(name, n))
		}
	}
	return errors.Join(errs...)
}

func statePath(dir, name string) string { return filepath.Join(dir, name+".json") }

func writeState(dir string, topo *Topology) error {
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("state dir: %w", err)
	}
	b, err := json.MarshalIndent(topo, "", "  ")
	if err != nil {
		return err
	}
	tmp := statePath(dir, topo.Name) + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("state file: %w", err)
	}
	return os.Rename(tmp, statePath(dir, topo.Name))
}

// ReadState reads the state file Up wrote for name.
func ReadState(dir, name string) (*Topology, error) {
	if dir == "" {
		dir = DefaultStateDir
	}
	b, err := os.ReadFile(statePath(dir, name))
	if err != nil {
		return nil, err
	}
	var t Topology
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, fmt.Errorf("state file %s: %w", statePath(dir, name), err)
	}
	return &t, nil
}
