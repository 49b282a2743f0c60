package testbed

import (
	"fmt"
	"net"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
)

// DefaultName is the prefix used when none is given.
const DefaultName = "pc"

// MaxHosts is the largest testbed: hosts are 10.0.0.1 … 10.0.0.254.
const MaxHosts = 254

// HostIfName is the interface name inside every host namespace.
const HostIfName = "eth0"

// maxNameLen keeps "<name>-s254" within IFNAMSIZ-1 = 15 bytes.
const maxNameLen = 15 - len("-s254")

var nameRE = regexp.MustCompile(`^[a-z][a-z0-9]*$`)

// ValidateName checks a testbed name: lower-case letters and digits,
// starting with a letter, at most 10 bytes, so every interface name built
// from it fits the kernel's 15-byte limit and no name is a prefix match of
// another testbed's objects (the separator '-' cannot occur in a name).
func ValidateName(name string) error {
	if len(name) > maxNameLen {
		return fmt.Errorf("testbed name %q: longer than %d bytes", name, maxNameLen)
	}
	if !nameRE.MatchString(name) {
		return fmt.Errorf("testbed name %q: want lower-case letters and digits, starting with a letter", name)
	}
	return nil
}

// NamespaceName is host n's network namespace.
func NamespaceName(name string, n int) string { return name + "-h" + strconv.Itoa(n) }

// SwitchPortName is the root-namespace end of host n's veth pair: the
// interface a switch attaches to.
func SwitchPortName(name string, n int) string { return name + "-s" + strconv.Itoa(n) }

// HostAddr is host n's address, 10.0.0.n/24.
func HostAddr(n int) netip.Prefix {
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 0, 0, byte(n)}), 24)
}

// HostMAC is host n's MAC: locally administered, 02:70:63 ("pc") then n.
// Deterministic, so probes and flow rules can be written in advance.
func HostMAC(n int) net.HardwareAddr {
	return net.HardwareAddr{0x02, 0x70, 0x63, 0x00, byte(n >> 8), byte(n)}
}

// SwitchPortMAC is the MAC of host n's switch-side veth end.
func SwitchPortMAC(n int) net.HardwareAddr {
	return net.HardwareAddr{0x02, 0x70, 0x63, 0xff, byte(n >> 8), byte(n)}
}

// parseIndexed returns n if s is prefix+"-"+kind+n (kind "h" or "s") with n
// in 1..MaxHosts and no leading zeros.
func parseIndexed(s, name, kind string) (int, bool) {
	rest, ok := strings.CutPrefix(s, name+"-"+kind)
	if !ok || rest == "" || rest[0] == '0' {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	if err != nil || n < 1 || n > MaxHosts {
		return 0, false
	}
	return n, true
}

// netFlagUp is IFF_UP as netlink reports it in LinkAttrs.Flags.
const netFlagUp = net.FlagUp
