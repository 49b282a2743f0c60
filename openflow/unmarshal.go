package openflow

// NewMessage returns a zero message struct for type t, or nil if OpenFlow 1.0
// does not define t.
func NewMessage(t Type) Message {
	switch t {
	case TypeHello:
		return new(Hello)
	case TypeError:
		return new(ErrorMsg)
	case TypeEchoRequest:
		return new(EchoRequest)
	case TypeEchoReply:
		return new(EchoReply)
	case TypeVendor:
		return new(Vendor)
	case TypeFeaturesRequest:
		return new(FeaturesRequest)
	case TypeFeaturesReply:
		return new(FeaturesReply)
	case TypeGetConfigRequest:
		return new(GetConfigRequest)
	case TypeGetConfigReply:
		return new(GetConfigReply)
	case TypeSetConfig:
		return new(SetConfig)
	case TypePacketIn:
		return new(PacketIn)
	case TypeFlowRemoved:
		return new(FlowRemoved)
	case TypePortStatus:
		return new(PortStatus)
	case TypePacketOut:
		return new(PacketOut)
	case TypeFlowMod:
		return new(FlowMod)
	case TypePortMod:
		return new(PortMod)
	case TypeStatsRequest:
		return new(StatsRequest)
	case TypeStatsReply:
		return new(StatsReply)
	case TypeBarrierRequest:
		return new(BarrierRequest)
	case TypeBarrierReply:
		return new(BarrierReply)
	case TypeQueueGetConfigRequest:
		return new(QueueGetConfigRequest)
	case TypeQueueGetConfigReply:
		return new(QueueGetConfigReply)
	}
	return nil
}

// Unmarshal decodes exactly one whole message: b must be exactly the
// ofp_header.length bytes of it. Errors are typed: *LengthError (short
// buffer, length field disagreeing with len(b), bad body or action
// lengths), *VersionError (version other than 0x01; HELLO is exempt so that
// version negotiation can see it), *UnknownTypeError, *ActionError,
// *UnknownStatsTypeError, *BadValueError. ErrorCodeFor maps any of them to
// the ERROR a switch should send back.
//
// Byte-slice fields of the result alias b (see message.go): do not reuse b
// while the message is in use.
func Unmarshal(b []byte) (Message, error) {
	h, err := DecodeHeader(b)
	if err != nil {
		return nil, err
	}
	if int(h.Length) != len(b) {
		return nil, lengthErr("ofp_header.length vs bytes present", len(b), int(h.Length))
	}
	if h.Version != Version && h.Type != TypeHello {
		return nil, &VersionError{Got: h.Version}
	}
	m := NewMessage(h.Type)
	if m == nil {
		return nil, &UnknownTypeError{Type: h.Type}
	}
	if err := m.DecodeFromBytes(b); err != nil {
		return nil, err
	}
	return m, nil
}
