package packet

// EtherType is the 16-bit type field of an Ethernet II header (or of an
// 802.1Q tag). Values below EtherTypeMin are 802.3 lengths, not types.
type EtherType uint16

// EtherTypes this package (or the project) names.
const (
	EtherTypeMin  EtherType = 0x0600 // below: an 802.3 length field
	EtherTypeIPv4 EtherType = 0x0800
	EtherTypeARP  EtherType = 0x0806
	EtherTypeVLAN EtherType = 0x8100 // 802.1Q tag protocol identifier
	EtherTypeIPv6 EtherType = 0x86dd
	EtherTypeLLDP EtherType = 0x88cc
)

// IPProtocol is the IPv4 protocol field.
type IPProtocol uint8

// IP protocol numbers.
const (
	IPProtocolICMP IPProtocol = 1
	IPProtocolTCP  IPProtocol = 6
	IPProtocolUDP  IPProtocol = 17
)

// TCPFlags holds the nine TCP control bits: the eight of header byte 13 in
// their wire positions, and NS (RFC 3540, the low bit of byte 12) as bit 8.
type TCPFlags uint16

// TCP control bits.
const (
	TCPFlagFIN TCPFlags = 0x001
	TCPFlagSYN TCPFlags = 0x002
	TCPFlagRST TCPFlags = 0x004
	TCPFlagPSH TCPFlags = 0x008
	TCPFlagACK TCPFlags = 0x010
	TCPFlagURG TCPFlags = 0x020
	TCPFlagECE TCPFlags = 0x040 // ECN-Echo (RFC 3168)
	TCPFlagCWR TCPFlags = 0x080 // Congestion Window Reduced (RFC 3168)
	TCPFlagNS  TCPFlags = 0x100 // ECN nonce sum (RFC 3540, historic)
)

// Has reports whether all bits of x are set in f.
func (f TCPFlags) Has(x TCPFlags) bool { return f&x == x }

// ECN is the two-bit ECN field of the IPv4 TOS byte (RFC 3168).
type ECN uint8

// ECN codepoints. Note ECT(0) is 0b10 and ECT(1) is 0b01.
const (
	ECNNotECT ECN = 0 // not ECN-capable transport
	ECNECT1   ECN = 1 // ECN-capable transport, ECT(1)
	ECNECT0   ECN = 2 // ECN-capable transport, ECT(0)
	ECNCE     ECN = 3 // congestion experienced
)

func (e ECN) String() string {
	switch e & 3 {
	case ECNNotECT:
		return "Not-ECT"
	case ECNECT1:
		return "ECT(1)"
	case ECNECT0:
		return "ECT(0)"
	default:
		return "CE"
	}
}

// ARP operations.
const (
	ARPRequest uint16 = 1
	ARPReply   uint16 = 2
)

// ICMP types of the echo exchange.
const (
	ICMPEchoReply   uint8 = 0
	ICMPEchoRequest uint8 = 8
)

// IPv4 flag bits, in the 3-bit flags field (the top bits of bytes 6-7).
const (
	IPv4EvilBit       uint8 = 4 // reserved (RFC 3514)
	IPv4DontFragment  uint8 = 2
	IPv4MoreFragments uint8 = 1
)

// TCP option kinds.
const (
	TCPOptionEnd           uint8 = 0
	TCPOptionNOP           uint8 = 1
	TCPOptionMSS           uint8 = 2
	TCPOptionWindowScale   uint8 = 3
	TCPOptionSACKPermitted uint8 = 4
	TCPOptionSACK          uint8 = 5
	TCPOptionTimestamps    uint8 = 8
)

// Header sizes.
const (
	EthernetLen    = 14
	Dot1QLen       = 4
	ARPLen         = 28 // Ethernet/IPv4 ARP
	IPv4MinLen     = 20
	TCPMinLen      = 20
	UDPLen         = 8
	ICMPLen        = 8
	MinFrameLen    = 60 // minimum Ethernet frame without FCS; shorter ones are zero-padded
	maxIPv4Options = 40
	maxTCPOptions  = 40
)
