package openflow

import "encoding/binary"

// ActionType is ofp_action_type.
type ActionType uint16

// OpenFlow 1.0 action types.
const (
	ActionTypeOutput     ActionType = 0      // OFPAT_OUTPUT
	ActionTypeSetVlanVID ActionType = 1      // OFPAT_SET_VLAN_VID
	ActionTypeSetVlanPCP ActionType = 2      // OFPAT_SET_VLAN_PCP
	ActionTypeStripVlan  ActionType = 3      // OFPAT_STRIP_VLAN
	ActionTypeSetDlSrc   ActionType = 4      // OFPAT_SET_DL_SRC
	ActionTypeSetDlDst   ActionType = 5      // OFPAT_SET_DL_DST
	ActionTypeSetNwSrc   ActionType = 6      // OFPAT_SET_NW_SRC
	ActionTypeSetNwDst   ActionType = 7      // OFPAT_SET_NW_DST
	ActionTypeSetNwTos   ActionType = 8      // OFPAT_SET_NW_TOS
	ActionTypeSetTpSrc   ActionType = 9      // OFPAT_SET_TP_SRC
	ActionTypeSetTpDst   ActionType = 10     // OFPAT_SET_TP_DST
	ActionTypeEnqueue    ActionType = 11     // OFPAT_ENQUEUE
	ActionTypeVendor     ActionType = 0xffff // OFPAT_VENDOR
)

func (t ActionType) String() string {
	if t == ActionTypeVendor {
		return "VENDOR"
	}
	return enumName([]string{"OUTPUT", "SET_VLAN_VID", "SET_VLAN_PCP", "STRIP_VLAN", "SET_DL_SRC", "SET_DL_DST",
		"SET_NW_SRC", "SET_NW_DST", "SET_NW_TOS", "SET_TP_SRC", "SET_TP_DST", "ENQUEUE"}, uint16(t), "ACTION")
}

// Action is one OpenFlow 1.0 action. The concrete types are value types
// (ActionOutput, ActionSetVlanVID, ..., ActionVendor); switch on them with a
// type switch.
type Action interface {
	// Type is the ofp_action_type.
	Type() ActionType
	// Len is the encoded length (a multiple of 8).
	Len() int
	// AppendAction appends the encoding (type, len, body, zero padding).
	AppendAction(b []byte) []byte
	// String formats the action as ovs-ofctl does ("output:2").
	String() string
}

// ActionOutput sends the packet out of Port; MaxLen caps the bytes sent to
// the controller when Port is PortController.
type ActionOutput struct {
	Port   uint16
	MaxLen uint16
}

// ActionSetVlanVID sets the 802.1Q VLAN id (12 bits).
type ActionSetVlanVID struct{ VlanVID uint16 }

// ActionSetVlanPCP sets the 802.1Q priority (3 bits).
type ActionSetVlanPCP struct{ VlanPCP uint8 }

// ActionStripVlan removes the 802.1Q header.
type ActionStripVlan struct{}

// ActionSetDlSrc sets the Ethernet source address.
type ActionSetDlSrc struct{ Addr [6]byte }

// ActionSetDlDst sets the Ethernet destination address.
type ActionSetDlDst struct{ Addr [6]byte }

// ActionSetNwSrc sets the IPv4 source address.
type ActionSetNwSrc struct{ Addr uint32 }

// ActionSetNwDst sets the IPv4 destination address.
type ActionSetNwDst struct{ Addr uint32 }

// ActionSetNwTos sets the IP ToS (DSCP in the upper 6 bits).
type ActionSetNwTos struct{ Tos uint8 }

// ActionSetTpSrc sets the TCP/UDP source port.
type ActionSetTpSrc struct{ Port uint16 }

// ActionSetTpDst sets the TCP/UDP destination port.
type ActionSetTpDst struct{ Port uint16 }

// ActionEnqueue sends the packet to queue QueueID of Port.
type ActionEnqueue struct {
	Port    uint16
	QueueID uint32
}

// ActionVendor is a vendor (experimenter) action kept as raw bytes. Data is
// the body after the 8-byte ofp_action_vendor_header; the encoder pads it
// with zeros to a multiple of 8.
type ActionVendor struct {
	Vendor uint32
	Data   []byte
}

func (ActionOutput) Type() ActionType     { return ActionTypeOutput }
func (ActionSetVlanVID) Type() ActionType { return ActionTypeSetVlanVID }
func (ActionSetVlanPCP) Type() ActionType { return ActionTypeSetVlanPCP }
func (ActionStripVlan) Type() ActionType  { return ActionTypeStripVlan }
func (ActionSetDlSrc) Type() ActionType   { return ActionTypeSetDlSrc }
func (ActionSetDlDst) Type() ActionType   { return ActionTypeSetDlDst }
func (ActionSetNwSrc) Type() ActionType   { return ActionTypeSetNwSrc }
func (ActionSetNwDst) Type() ActionType   { return ActionTypeSetNwDst }
func (ActionSetNwTos) Type() ActionType   { return ActionTypeSetNwTos }
func (ActionSetTpSrc) Type() ActionType   { return ActionTypeSetTpSrc }
func (ActionSetTpDst) Type() ActionType   { return ActionTypeSetTpDst }
func (ActionEnqueue) Type() ActionType    { return ActionTypeEnqueue }
func (ActionVendor) Type() ActionType     { return ActionTypeVendor }

func (ActionOutput) Len() int     { return 8 }
func (ActionSetVlanVID) Len() int { return 8 }
func (ActionSetVlanPCP) Len() int { return 8 }
func (ActionStripVlan) Len() int  { return 8 }
func (ActionSetDlSrc) Len() int   { return 16 }
func (ActionSetDlDst) Len() int   { return 16 }
func (ActionSetNwSrc) Len() int   { return 8 }
func (ActionSetNwDst) Len() int   { return 8 }
func (ActionSetNwTos) Len() int   { return 8 }
func (ActionSetTpSrc) Len() int   { return 8 }
func (ActionSetTpDst) Len() int   { return 8 }
func (ActionEnqueue) Len() int    { return 16 }
func (a ActionVendor) Len() int   { return 8 + pad8(len(a.Data)) }

// pad8 rounds n up to a multiple of 8.
func pad8(n int) int { return (n + 7) &^ 7 }

func appendActionHeader(b []byte, t ActionType, n int) []byte {
	return append(b, byte(t>>8), byte(t), byte(n>>8), byte(n))
}

func (a ActionOutput) AppendAction(b []byte) []byte {
	b = appendActionHeader(b, ActionTypeOutput, 8)
	return append(b, byte(a.Port>>8), byte(a.Port), byte(a.MaxLen>>8), byte(a.MaxLen))
}

func (a ActionSetVlanVID) AppendAction(b []byte) []byte {
	b = appendActionHeader(b, ActionTypeSetVlanVID, 8)
	return append(b, byte(a.VlanVID>>8), byte(a.VlanVID), 0, 0)
}

func (a ActionSetVlanPCP) AppendAction(b []byte) []byte {
	b = appendActionHeader(b, ActionTypeSetVlanPCP, 8)
	return append(b, a.VlanPCP, 0, 0, 0)
}

func (a ActionStripVlan) AppendAction(b []byte) []byte {
	b = appendActionHeader(b, ActionTypeStripVlan, 8)
	return append(b, 0, 0, 0, 0)
}

func appendDlAddrAction(b []byte, t ActionType, addr *[6]byte) []byte {
	b = appendActionHeader(b, t, 16)
	b = append(b, addr[:]...)
	return append(b, 0, 0, 0, 0, 0, 0)
}

func (a ActionSetDlSrc) AppendAction(b []byte) []byte {
	return appendDlAddrAction(b, ActionTypeSetDlSrc, &a.Addr)
}

func (a ActionSetDlDst) AppendAction(b []byte) []byte {
	return appendDlAddrAction(b, ActionTypeSetDlDst, &a.Addr)
}

func (a ActionSetNwSrc) AppendAction(b []byte) []byte {
	return binary.BigEndian.AppendUint32(appendActionHeader(b, ActionTypeSetNwSrc, 8), a.Addr)
}

func (a ActionSetNwDst) AppendAction(b []byte) []byte {
	return binary.BigEndian.AppendUint32(appendActionHeader(b, ActionTypeSetNwDst, 8), a.Addr)
}

func (a ActionSetNwTos) AppendAction(b []byte) []byte {
	return append(appendActionHeader(b, ActionTypeSetNwTos, 8), a.Tos, 0, 0, 0)
}

func (a ActionSetTpSrc) AppendAction(b []byte) []byte {
	return append(appendActionHeader(b, ActionTypeSetTpSrc, 8), byte(a.Port>>8), byte(a.Port), 0, 0)
}

func (a ActionSetTpDst) AppendAction(b []byte) []byte {
	return append(appendActionHeader(b, ActionTypeSetTpDst, 8), byte(a.Port>>8), byte(a.Port), 0, 0)
}

func (a ActionEnqueue) AppendAction(b []byte) []byte {
	b = appendActionHeader(b, ActionTypeEnqueue, 16)
	b = append(b, byte(a.Port>>8), byte(a.Port), 0, 0, 0, 0, 0, 0)
	return binary.BigEndian.AppendUint32(b, a.QueueID)
}

func (a ActionVendor) AppendAction(b []byte) []byte {
	b = appendActionHeader(b, ActionTypeVendor, a.Len())
	b = binary.BigEndian.AppendUint32(b, a.Vendor)
	b = append(b, a.Data...)
	for range pad8(len(a.Data)) - len(a.Data) {
		b = append(b, 0)
	}
	return b
}

// ActionsLen is the encoded length of an action list.
func ActionsLen(actions []Action) int {
	n := 0
	for _, a := range actions {
		n += a.Len()
	}
	return n
}

// AppendActions appends the encoding of every action in order.
func AppendActions(b []byte, actions []Action) []byte {
	for _, a := range actions {
		b = a.AppendAction(b)
	}
	return b
}

// actionFixedLen is the exact ofp_action length each fixed-size type must state.
func actionFixedLen(t ActionType) int {
	switch t {
	case ActionTypeSetDlSrc, ActionTypeSetDlDst, ActionTypeEnqueue:
		return 16
	case ActionTypeVendor:
		return 0
	}
	return 8
}

// DecodeActions decodes a whole action list. Every action length must be a
// multiple of 8, at least 8, inside b, and exactly the size its type
// defines; errors are *ActionError wrapping *LengthError or
// *UnknownActionError. ActionVendor.Data aliases b. An empty list decodes to
// nil.
func DecodeActions(b []byte) ([]Action, error) {
	if len(b) == 0 {
		return nil, nil
	}
	// Every action is at least 8 bytes, so this bounds the allocation by
	// the input size.
	actions := make([]Action, 0, min(len(b)/8, 16))
	for off := 0; off < len(b); {
		a, n, err := decodeAction(b[off:])
		if err != nil {
			return nil, &ActionError{Offset: off, Err: err}
		}
		actions = append(actions, a)
		off += n
	}
	return actions, nil
}

// decodeAction decodes the action at the start of b and returns its length.
func decodeAction(b []byte) (Action, int, error) {
	if len(b) < 8 {
		return nil, 0, lengthErr("ofp_action_header", 8, len(b))
	}
	t := ActionType(binary.BigEndian.Uint16(b[0:2]))
	n := int(binary.BigEndian.Uint16(b[2:4]))
	if n < 8 || n%8 != 0 {
		return nil, 0, lengthErr("ofp_action_header.len (multiple of 8, >= 8)", pad8(max(n, 8)), n)
	}
	if n > len(b) {
		return nil, 0, lengthErr("ofp_action_header.len (beyond action list)", len(b), n)
	}
	if t > ActionTypeEnqueue && t != ActionTypeVendor {
		return nil, 0, &UnknownActionError{Type: t}
	}
	if want := actionFixedLen(t); want != 0 && n != want {
		return nil, 0, lengthErr("ofp_action "+t.String(), want, n)
	}
	u16 := func(off int) uint16 { return binary.BigEndian.Uint16(b[off : off+2]) }
	u32 := func(off int) uint32 { return binary.BigEndian.Uint32(b[off : off+4]) }
	switch t {
	case ActionTypeOutput:
		return ActionOutput{Port: u16(4), MaxLen: u16(6)}, n, nil
	case ActionTypeSetVlanVID:
		return ActionSetVlanVID{VlanVID: u16(4)}, n, nil
	case ActionTypeSetVlanPCP:
		return ActionSetVlanPCP{VlanPCP: b[4]}, n, nil
	case ActionTypeStripVlan:
		return ActionStripVlan{}, n, nil
	case ActionTypeSetDlSrc:
		return ActionSetDlSrc{Addr: [6]byte(b[4:10])}, n, nil
	case ActionTypeSetDlDst:
		return ActionSetDlDst{Addr: [6]byte(b[4:10])}, n, nil
	case ActionTypeSetNwSrc:
		return ActionSetNwSrc{Addr: u32(4)}, n, nil
	case ActionTypeSetNwDst:
		return ActionSetNwDst{Addr: u32(4)}, n, nil
	case ActionTypeSetNwTos:
		return ActionSetNwTos{Tos: b[4]}, n, nil
	case ActionTypeSetTpSrc:
		return ActionSetTpSrc{Port: u16(4)}, n, nil
	case ActionTypeSetTpDst:
		return ActionSetTpDst{Port: u16(4)}, n, nil
	case ActionTypeEnqueue:
		return ActionEnqueue{Port: u16(4), QueueID: u32(12)}, n, nil
	default: // ActionTypeVendor
		return ActionVendor{Vendor: u32(4), Data: nilIfEmpty(b[8:n])}, n, nil
	}
}

// nilIfEmpty makes decoded empty byte fields nil, so that decoding and
// building by hand give equal structs.
func nilIfEmpty(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}
