package openflow

import "encoding/binary"

// FeaturesReply is OFPT_FEATURES_REPLY (ofp_switch_features).
type FeaturesReply struct {
	Header
	DatapathID   uint64
	NBuffers     uint32
	NTables      uint8
	Capabilities uint32 // Cap* bits
	Actions      uint32 // bitmap of supported ActionType (1 << type)
	Ports        []PhyPort
}

const featuresReplyLen = 32

func (m *FeaturesReply) MsgType() Type { return TypeFeaturesReply }
func (m *FeaturesReply) Len() int      { return featuresReplyLen + PhyPortLen*len(m.Ports) }

func (m *FeaturesReply) AppendBinary(b []byte) ([]byte, error) {
	b, err := beginMsg(b, TypeFeaturesReply, m.Len(), m.Xid)
	if err != nil {
		return b, err
	}
	b = binary.BigEndian.AppendUint64(b, m.DatapathID)
	b = binary.BigEndian.AppendUint32(b, m.NBuffers)
	b = append(b, m.NTables, 0, 0, 0)
	b = binary.BigEndian.AppendUint32(b, m.Capabilities)
	b = binary.BigEndian.AppendUint32(b, m.Actions)
	for i := range m.Ports {
		b = m.Ports[i].AppendBinary(b)
	}
	return b, nil
}

func (m *FeaturesReply) DecodeFromBytes(b []byte) error {
	if err := decodeMsgHeader(&m.Header, b, TypeFeaturesReply, featuresReplyLen, MaxMessageLen); err != nil {
		return err
	}
	if rest := len(b) - featuresReplyLen; rest%PhyPortLen != 0 {
		return lengthErr("FEATURES_REPLY ports (multiple of 48)", rest-rest%PhyPortLen, rest)
	}
	m.DatapathID = binary.BigEndian.Uint64(b[8:16])
	m.NBuffers = binary.BigEndian.Uint32(b[16:20])
	m.NTables = b[20]
	m.Capabilities = binary.BigEndian.Uint32(b[24:28])
	m.Actions = binary.BigEndian.Uint32(b[28:32])
	m.Ports = nil
	if n := (len(b) - featuresReplyLen) / PhyPortLen; n > 0 {
		m.Ports = make([]PhyPort, n)
		for i := range m.Ports {
			off := featuresReplyLen + i*PhyPortLen
			if err := m.Ports[i].DecodeFromBytes(b[off : off+PhyPortLen]); err != nil {
				return err
			}
		}
	}
	return nil
}

// GetConfigReply is OFPT_GET_CONFIG_REPLY (ofp_switch_config).
type GetConfigReply struct {
	Header
	Flags       uint16 // ConfigFrag*
	MissSendLen uint16
}

// SetConfig is OFPT_SET_CONFIG (ofp_switch_config).
type SetConfig struct {
	Header
	Flags       uint16 // ConfigFrag*
	MissSendLen uint16
}

const switchConfigLen = 12

func (m *GetConfigReply) MsgType() Type { return TypeGetConfigReply }
func (m *GetConfigReply) Len() int      { return switchConfigLen }
func (m *SetConfig) MsgType() Type      { return TypeSetConfig }
func (m *SetConfig) Len() int           { return switchConfigLen }

func (m *GetConfigReply) AppendBinary(b []byte) ([]byte, error) {
	return appendSwitchConfig(b, TypeGetConfigReply, m.Xid, m.Flags, m.MissSendLen), nil
}

func (m *SetConfig) AppendBinary(b []byte) ([]byte, error) {
	return appendSwitchConfig(b, TypeSetConfig, m.Xid, m.Flags, m.MissSendLen), nil
}

func (m *GetConfigReply) DecodeFromBytes(b []byte) error {
	return decodeSwitchConfig(&m.Header, &m.Flags, &m.MissSendLen, b, TypeGetConfigReply)
}

func (m *SetConfig) DecodeFromBytes(b []byte) error {
	return decodeSwitchConfig(&m.Header, &m.Flags, &m.MissSendLen, b, TypeSetConfig)
}

func appendSwitchConfig(b []byte, t Type, xid uint32, flags, missSendLen uint16) []byte {
	b = appendHeader(b, t, switchConfigLen, xid)
	return append(b, byte(flags>>8), byte(flags), byte(missSendLen>>8), byte(missSendLen))
}

func decodeSwitchConfig(h *Header, flags, missSendLen *uint16, b []byte, t Type) error {
	if err := decodeMsgHeader(h, b, t, switchConfigLen, switchConfigLen); err != nil {
		return err
	}
	*flags = binary.BigEndian.Uint16(b[8:10])
	*missSendLen = binary.BigEndian.Uint16(b[10:12])
	return nil
}
