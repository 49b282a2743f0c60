package openflow

import "strconv"

// Port numbers (ofp_port). Physical ports are 1..PortMax.
const (
	PortMax        uint16 = 0xff00 // OFPP_MAX: largest physical port number
	PortInPort     uint16 = 0xfff8 // OFPP_IN_PORT: send back out the input port
	PortTable      uint16 = 0xfff9 // OFPP_TABLE: run through the flow table (PACKET_OUT only)
	PortNormal     uint16 = 0xfffa // OFPP_NORMAL: traditional L2/L3 processing
	PortFlood      uint16 = 0xfffb // OFPP_FLOOD: all ports except input and those with flooding disabled
	PortAll        uint16 = 0xfffc // OFPP_ALL: all ports except input
	PortController uint16 = 0xfffd // OFPP_CONTROLLER: to the controller
	PortLocal      uint16 = 0xfffe // OFPP_LOCAL: the local openflow "port"
	PortNone       uint16 = 0xffff // OFPP_NONE: no port (wildcard out_port in FLOW_MOD delete)
)

// PortName formats a port number as ovs-ofctl does: a decimal number for
// physical ports and the OFPP_ name for reserved ones (IN_PORT, LOCAL, ...).
func PortName(p uint16) string {
	switch p {
	case PortInPort:
		return "IN_PORT"
	case PortTable:
		return "TABLE"
	case PortNormal:
		return "NORMAL"
	case PortFlood:
		return "FLOOD"
	case PortAll:
		return "ALL"
	case PortController:
		return "CONTROLLER"
	case PortLocal:
		return "LOCAL"
	case PortNone:
		return "NONE"
	}
	return strconv.Itoa(int(p))
}

// NoBuffer is OFP_NO_BUFFER: the buffer_id of a message that carries the
// whole packet instead of referring to a switch buffer.
const NoBuffer uint32 = 0xffffffff

// Default values from openflow.h.
const (
	DefaultMissSendLen uint16 = 128 // OFP_DEFAULT_MISS_SEND_LEN
	FlowPermanent      uint16 = 0   // OFP_FLOW_PERMANENT: idle/hard timeout that never expires
	DefaultPriority    uint16 = 0x8000
	DefaultTCPPort            = 6653 // IANA OpenFlow port (OpenFlow 1.0 used 6633)
)

// FLOW_MOD commands (ofp_flow_mod_command).
const (
	FlowModAdd          uint16 = 0 // OFPFC_ADD
	FlowModModify       uint16 = 1 // OFPFC_MODIFY
	FlowModModifyStrict uint16 = 2 // OFPFC_MODIFY_STRICT
	FlowModDelete       uint16 = 3 // OFPFC_DELETE
	FlowModDeleteStrict uint16 = 4 // OFPFC_DELETE_STRICT
)

// FlowModCommandName names a FLOW_MOD command ("ADD", "DELETE_STRICT", ...).
func FlowModCommandName(c uint16) string {
	return enumName([]string{"ADD", "MODIFY", "MODIFY_STRICT", "DELETE", "DELETE_STRICT"}, c, "COMMAND")
}

// FLOW_MOD flags (ofp_flow_mod_flags).
const (
	FlowModFlagSendFlowRem  uint16 = 1 << 0 // OFPFF_SEND_FLOW_REM
	FlowModFlagCheckOverlap uint16 = 1 << 1 // OFPFF_CHECK_OVERLAP
	FlowModFlagEmerg        uint16 = 1 << 2 // OFPFF_EMERG
)

// PACKET_IN reasons (ofp_packet_in_reason).
const (
	PacketInReasonNoMatch uint8 = 0 // OFPR_NO_MATCH
	PacketInReasonAction  uint8 = 1 // OFPR_ACTION
)

// FLOW_REMOVED reasons (ofp_flow_removed_reason).
const (
	FlowRemovedIdleTimeout uint8 = 0 // OFPRR_IDLE_TIMEOUT
	FlowRemovedHardTimeout uint8 = 1 // OFPRR_HARD_TIMEOUT
	FlowRemovedDelete      uint8 = 2 // OFPRR_DELETE
)

// PORT_STATUS reasons (ofp_port_reason).
const (
	PortReasonAdd    uint8 = 0 // OFPPR_ADD
	PortReasonDelete uint8 = 1 // OFPPR_DELETE
	PortReasonModify uint8 = 2 // OFPPR_MODIFY
)

// Port config bits (ofp_port_config).
const (
	PortConfigPortDown   uint32 = 1 << 0 // OFPPC_PORT_DOWN
	PortConfigNoSTP      uint32 = 1 << 1 // OFPPC_NO_STP
	PortConfigNoRecv     uint32 = 1 << 2 // OFPPC_NO_RECV
	PortConfigNoRecvSTP  uint32 = 1 << 3 // OFPPC_NO_RECV_STP
	PortConfigNoFlood    uint32 = 1 << 4 // OFPPC_NO_FLOOD
	PortConfigNoFwd      uint32 = 1 << 5 // OFPPC_NO_FWD
	PortConfigNoPacketIn uint32 = 1 << 6 // OFPPC_NO_PACKET_IN
)

// Port state bits (ofp_port_state). The STP state is a 2-bit field.
const (
	PortStateLinkDown   uint32 = 1 << 0 // OFPPS_LINK_DOWN
	PortStateSTPListen  uint32 = 0 << 8 // OFPPS_STP_LISTEN
	PortStateSTPLearn   uint32 = 1 << 8 // OFPPS_STP_LEARN
	PortStateSTPForward uint32 = 2 << 8 // OFPPS_STP_FORWARD
	PortStateSTPBlock   uint32 = 3 << 8 // OFPPS_STP_BLOCK
	PortStateSTPMask    uint32 = 3 << 8 // OFPPS_STP_MASK
)

// Port feature bits (ofp_port_features).
const (
	PortFeature10MbHD    uint32 = 1 << 0  // OFPPF_10MB_HD
	PortFeature10MbFD    uint32 = 1 << 1  // OFPPF_10MB_FD
	PortFeature100MbHD   uint32 = 1 << 2  // OFPPF_100MB_HD
	PortFeature100MbFD   uint32 = 1 << 3  // OFPPF_100MB_FD
	PortFeature1GbHD     uint32 = 1 << 4  // OFPPF_1GB_HD
	PortFeature1GbFD     uint32 = 1 << 5  // OFPPF_1GB_FD
	PortFeature10GbFD    uint32 = 1 << 6  // OFPPF_10GB_FD
	PortFeatureCopper    uint32 = 1 << 7  // OFPPF_COPPER
	PortFeatureFiber     uint32 = 1 << 8  // OFPPF_FIBER
	PortFeatureAutoneg   uint32 = 1 << 9  // OFPPF_AUTONEG
	PortFeaturePause     uint32 = 1 << 10 // OFPPF_PAUSE
	PortFeaturePauseAsym uint32 = 1 << 11 // OFPPF_PAUSE_ASYM
)

// Switch capability bits (ofp_capabilities).
const (
	CapFlowStats  uint32 = 1 << 0 // OFPC_FLOW_STATS
	CapTableStats uint32 = 1 << 1 // OFPC_TABLE_STATS
	CapPortStats  uint32 = 1 << 2 // OFPC_PORT_STATS
	CapSTP        uint32 = 1 << 3 // OFPC_STP
	CapReserved   uint32 = 1 << 4 // OFPC_RESERVED
	CapIPReasm    uint32 = 1 << 5 // OFPC_IP_REASM
	CapQueueStats uint32 = 1 << 6 // OFPC_QUEUE_STATS
	CapARPMatchIP uint32 = 1 << 7 // OFPC_ARP_MATCH_IP
)

// SET_CONFIG / GET_CONFIG_REPLY flags (ofp_config_flags).
const (
	ConfigFragNormal uint16 = 0 // OFPC_FRAG_NORMAL
	ConfigFragDrop   uint16 = 1 // OFPC_FRAG_DROP
	ConfigFragReasm  uint16 = 2 // OFPC_FRAG_REASM
	ConfigFragMask   uint16 = 3 // OFPC_FRAG_MASK
)

// Table ids.
const (
	TableAll       uint8 = 0xff // all tables (flow/aggregate stats request)
	TableEmergency uint8 = 0xfe // emergency flow table (flow stats)
)

// Queue ids and properties.
const (
	QueueAll         uint32 = 0xffffffff // OFPQ_ALL
	QueuePropNone    uint16 = 0          // OFPQT_NONE
	QueuePropMinRate uint16 = 1          // OFPQT_MIN_RATE (rate in 1/10 of a percent; >1000 = disabled)
)

// Sizes of fixed wire structures.
const (
	MatchLen   = 40
	PhyPortLen = 48
)
