package testbed

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/vishvananda/netlink"
)

// A chain of switches (Config.Chain = K ≥ 2) joins switch i's port 2 to
// switch i+1's port 1 by a veth pair in the root namespace, both ends up,
// no address, IPv6 off:
//
//	<name>-l<i>a   switch i's port 2
//	<name>-l<i>b   switch i+1's port 1
//
// Host 1 is on switch 1's port 1, host 2 on switch K's port 2 (the chain
// has exactly two hosts, one at each end). Frames on these links were
// written by a switch's AF_PACKET socket with their checksums complete,
// so no offload setting matters on them.

// MaxChain bounds a chain: "<name>-l<i>a" stays within IFNAMSIZ-1 = 15
// bytes for a name of the longest allowed length.
const MaxChain = 16

// ChainLink is the veth pair from switch Index (its end A) to switch
// Index+1 (its end B).
type ChainLink struct {
	Index int    `json:"index"`
	A     string `json:"a"`
	B     string `json:"b"`
}

// ChainLinkNames are the two ends of link i.
func ChainLinkNames(name string, i int) (a, b string) {
	p := name + "-l" + strconv.Itoa(i)
	return p + "a", p + "b"
}

// ChainSwitchPorts is the --port list of each switch of the chain, in
// chain order: port 1 towards host 1, port 2 towards host 2. Without a
// chain it is one switch with every host's port.
func (t *Topology) ChainSwitchPorts() [][]string {
	if len(t.Chain) == 0 {
		return [][]string{t.SwitchPorts()}
	}
	k := len(t.Chain) + 1
	out := make([][]string, k)
	for i := range k {
		left := t.Hosts[0].SwitchPort
		if i > 0 {
			left = t.Chain[i-1].B
		}
		right := t.Hosts[len(t.Hosts)-1].SwitchPort
		if i < k-1 {
			right = t.Chain[i].A
		}
		out[i] = []string{left, right}
	}
	return out
}

func upChain(name string, k int) ([]ChainLink, error) {
	var links []ChainLink
	for i := 1; i < k; i++ {
		a, b := ChainLinkNames(name, i)
		if err := ensureLinkVeth(a, b, i); err != nil {
			return nil, fmt.Errorf("testbed %s chain link %d: %w", name, i, err)
		}
		links = append(links, ChainLink{Index: i, A: a, B: b})
	}
	if err := removeChainLinks(name, k); err != nil {
		return nil, err
	}
	return links, nil
}

// ensureLinkVeth creates (or keeps) the root-namespace pair a <-> b and
// brings both ends up with IPv6 off.
func ensureLinkVeth(a, b string, i int) error {
	la, errA := netlink.LinkByName(a)
	_, errB := netlink.LinkByName(b)
	if errA == nil && (errB != nil || !isVeth(la)) {
		if err := netlink.LinkDel(la); err != nil {
			return fmt.Errorf("remove stale %s: %w", a, err)
		}
		errA = errors.New("removed")
	}
	if errA != nil {
		if l, err := netlink.LinkByName(b); err == nil {
			if err := netlink.LinkDel(l); err != nil {
				return fmt.Errorf("remove stale %s: %w", b, err)
			}
		}
		veth := &netlink.Veth{
			LinkAttrs:        netlink.LinkAttrs{Name: a, HardwareAddr: chainMAC(i, 0xa)},
			PeerName:         b,
			PeerHardwareAddr: chainMAC(i, 0xb),
		}
		if err := netlink.LinkAdd(veth); err != nil {
			return fmt.Errorf("veth %s <-> %s: %w", a, b, err)
		}
	}
	for _, n := range []string{a, b} {
		if err := disableIPv6(n); err != nil {
			return err
		}
		l, err := netlink.LinkByName(n)
		if err != nil {
			return fmt.Errorf("%s: %w", n, err)
		}
		if err := netlink.LinkSetUp(l); err != nil {
			return fmt.Errorf("%s up: %w", n, err)
		}
	}
	return nil
}

func isVeth(l netlink.Link) bool {
	_, ok := l.(*netlink.Veth)
	return ok
}

// chainMAC is a link end's MAC: 02:70:63:fe:<i>:<end>.
func chainMAC(i int, end byte) net.HardwareAddr {
	return net.HardwareAddr{0x02, 0x70, 0x63, 0xfe, byte(i), end}
}

// removeChainLinks deletes the chain links numbered keep and above
// (keep 1: all of them): first the A ends, which takes their peers with
// them, then any B end left without one.
func removeChainLinks(name string, keep int) error {
	var errs []error
	for _, end := range []byte{'a', 'b'} {
		all, err := linkList()
		if err != nil {
			return fmt.Errorf("list links: %w", err)
		}
		for _, l := range all {
			n := l.Attrs().Name
			if i, e, ok := parseChainLink(n, name); ok && e == end && i >= keep {
				if err := netlink.LinkDel(l); err != nil {
					errs = append(errs, fmt.Errorf("delete %s: %w", n, err))
				}
			}
		}
	}
	return errors.Join(errs...)
}

// parseChainLink returns i and the end ('a' or 'b') of "<name>-l<i>a|b".
func parseChainLink(s, name string) (int, byte, bool) {
	rest, ok := strings.CutPrefix(s, name+"-l")
	if !ok || len(rest) < 2 {
		return 0, 0, false
	}
	end := rest[len(rest)-1]
	num := rest[:len(rest)-1]
	if end != 'a' && end != 'b' || num[0] == '0' {
		return 0, 0, false
	}
	i, err := strconv.Atoi(num)
	if err != nil || i < 1 || i >= MaxChain {
		return 0, 0, false
	}
	return i, end, true
}
