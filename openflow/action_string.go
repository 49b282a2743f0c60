package openflow

import (
	"fmt"
	"strconv"
	"strings"
)

// Actions are formatted in ovs-ofctl syntax so that log lines and
// `dump-flows`-like output read the same as Open vSwitch's.

func (a ActionOutput) String() string {
	switch {
	case a.Port == PortController:
		return "CONTROLLER:" + strconv.Itoa(int(a.MaxLen))
	case a.Port <= PortMax:
		return "output:" + strconv.Itoa(int(a.Port))
	}
	return PortName(a.Port)
}

func (a ActionSetVlanVID) String() string { return "mod_vlan_vid:" + strconv.Itoa(int(a.VlanVID)) }
func (a ActionSetVlanPCP) String() string { return "mod_vlan_pcp:" + strconv.Itoa(int(a.VlanPCP)) }
func (ActionStripVlan) String() string    { return "strip_vlan" }
func (a ActionSetDlSrc) String() string   { return "mod_dl_src:" + FormatMAC(a.Addr) }
func (a ActionSetDlDst) String() string   { return "mod_dl_dst:" + FormatMAC(a.Addr) }
func (a ActionSetNwSrc) String() string   { return "mod_nw_src:" + FormatIPv4(a.Addr) }
func (a ActionSetNwDst) String() string   { return "mod_nw_dst:" + FormatIPv4(a.Addr) }
func (a ActionSetNwTos) String() string   { return "mod_nw_tos:" + strconv.Itoa(int(a.Tos)) }
func (a ActionSetTpSrc) String() string   { return "mod_tp_src:" + strconv.Itoa(int(a.Port)) }
func (a ActionSetTpDst) String() string   { return "mod_tp_dst:" + strconv.Itoa(int(a.Port)) }

func (a ActionEnqueue) String() string {
	return "enqueue:" + PortName(a.Port) + ":" + strconv.FormatUint(uint64(a.QueueID), 10)
}

func (a ActionVendor) String() string {
	return fmt.Sprintf("vendor:0x%x,data:0x%x", a.Vendor, a.Data)
}

// FormatActions formats an action list as ovs-ofctl does: comma separated,
// "drop" for the empty list.
func FormatActions(actions []Action) string {
	if len(actions) == 0 {
		return "drop"
	}
	var sb strings.Builder
	for i, a := range actions {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(a.String())
	}
	return sb.String()
}

// FormatMAC formats an Ethernet address as aa:bb:cc:dd:ee:ff.
func FormatMAC(m [6]byte) string {
	const hex = "0123456789abcdef"
	var buf [17]byte
	for i, v := range m {
		if i > 0 {
			buf[i*3-1] = ':'
		}
		buf[i*3] = hex[v>>4]
		buf[i*3+1] = hex[v&0xf]
	}
	return string(buf[:])
}

// FormatIPv4 formats a host-order IPv4 address as dotted decimal.
func FormatIPv4(a uint32) string {
	return strconv.Itoa(int(a>>24)) + "." + strconv.Itoa(int(a>>16&0xff)) + "." +
		strconv.Itoa(int(a>>8&0xff)) + "." + strconv.Itoa(int(a&0xff))
}
