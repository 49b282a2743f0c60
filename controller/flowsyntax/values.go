package flowsyntax

import (
	"errors"
	"fmt"
	"math/bits"
	"net/netip"
	"strconv"
	"strings"

	"github.com/pseudocong/pseudocong/openflow"
)

// parseUint parses a decimal or 0x-hex number that fits in bitSize bits.
func parseUint(s string, bitSize int) (uint64, error) {
	v, err := strconv.ParseUint(s, 0, bitSize)
	if err != nil {
		var ne *strconv.NumError
		if errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange) {
			return 0, fmt.Errorf("value out of range (max %d)", uint64(1)<<bitSize-1)
		}
		return 0, fmt.Errorf("not a number")
	}
	return v, nil
}

// portNames are the reserved port names ovs-ofctl accepts (and prints).
var portNames = map[string]uint16{
	"in_port":    openflow.PortInPort,
	"table":      openflow.PortTable,
	"normal":     openflow.PortNormal,
	"flood":      openflow.PortFlood,
	"all":        openflow.PortAll,
	"controller": openflow.PortController,
	"local":      openflow.PortLocal,
	"none":       openflow.PortNone,
}

// parsePort parses a port number (1..0xff00) or a reserved port name.
func parsePort(s string) (uint16, error) {
	if p, ok := portNames[strings.ToLower(s)]; ok {
		return p, nil
	}
	v, err := parseUint(s, 16)
	if err != nil {
		return 0, fmt.Errorf("bad port (want a number or in_port, normal, flood, all, controller, local, none)")
	}
	if v > uint64(openflow.PortMax) {
		return 0, fmt.Errorf("port %d is above the largest physical port %d; use a port name", v, openflow.PortMax)
	}
	return uint16(v), nil
}

// parseMAC parses aa:bb:cc:dd:ee:ff (OpenFlow 1.0 cannot mask Ethernet
// addresses).
func parseMAC(s string) ([6]byte, error) {
	var mac [6]byte
	if strings.Contains(s, "/") {
		return mac, errors.New("masks on Ethernet addresses are not supported by OpenFlow 1.0")
	}
	parts := strings.Split(s, ":")
	if len(parts) != 6 {
		return mac, fmt.Errorf("bad Ethernet address (want xx:xx:xx:xx:xx:xx)")
	}
	for i, p := range parts {
		if len(p) == 0 || len(p) > 2 {
			return mac, fmt.Errorf("bad Ethernet address (want xx:xx:xx:xx:xx:xx)")
		}
		v, err := strconv.ParseUint(p, 16, 8)
		if err != nil {
			return mac, fmt.Errorf("bad Ethernet address (want xx:xx:xx:xx:xx:xx)")
		}
		mac[i] = byte(v)
	}
	return mac, nil
}

// parseIPv4 parses a dotted-quad address into host order.
func parseIPv4(s string) (uint32, error) {
	a, err := netip.ParseAddr(s)
	if err != nil || !a.Is4() {
		return 0, fmt.Errorf("bad IPv4 address")
	}
	b := a.As4()
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3]), nil
}

// parseIPv4Prefix parses ADDR, ADDR/LEN or ADDR/NETMASK. The address is
// masked to the prefix, as the switch would store it.
func parseIPv4Prefix(s string) (addr uint32, plen int, err error) {
	addrStr, maskStr, hasMask := strings.Cut(s, "/")
	if addr, err = parseIPv4(addrStr); err != nil {
		return 0, 0, err
	}
	plen = 32
	if hasMask {
		if strings.Contains(maskStr, ".") {
			mask, err := parseIPv4(maskStr)
			if err != nil {
				return 0, 0, fmt.Errorf("bad netmask")
			}
			plen = bits.LeadingZeros32(^mask)
			if mask != prefixMask(plen) {
				return 0, 0, fmt.Errorf("netmask %s is not a CIDR mask (OpenFlow 1.0 matches prefixes only)", maskStr)
			}
		} else {
			v, err := strconv.Atoi(maskStr)
			if err != nil || v < 0 || v > 32 {
				return 0, 0, fmt.Errorf("bad prefix length (want 0..32)")
			}
			plen = v
		}
	}
	return addr & prefixMask(plen), plen, nil
}

func prefixMask(n int) uint32 {
	if n <= 0 {
		return 0
	}
	return ^uint32(0) << (32 - n)
}
