package openflow

import "encoding/binary"

// QueueGetConfigRequest is OFPT_QUEUE_GET_CONFIG_REQUEST.
type QueueGetConfigRequest struct {
	Header
	Port uint16
}

const queueGetConfigRequestLen = 12

func (m *QueueGetConfigRequest) MsgType() Type { return TypeQueueGetConfigRequest }
func (m *QueueGetConfigRequest) Len() int      { return queueGetConfigRequestLen }

func (m *QueueGetConfigRequest) AppendBinary(b []byte) ([]byte, error) {
	b, err := beginMsg(b, TypeQueueGetConfigRequest, queueGetConfigRequestLen, m.Xid)
	if err != nil {
		return b, err
	}
	return append(b, byte(m.Port>>8), byte(m.Port), 0, 0), nil
}

func (m *QueueGetConfigRequest) DecodeFromBytes(b []byte) error {
	if err := decodeMsgHeader(&m.Header, b, TypeQueueGetConfigRequest, queueGetConfigRequestLen, queueGetConfigRequestLen); err != nil {
		return err
	}
	m.Port = binary.BigEndian.Uint16(b[8:10])
	return nil
}

// QueueGetConfigReply is OFPT_QUEUE_GET_CONFIG_REPLY.
type QueueGetConfigReply struct {
	Header
	Port   uint16
	Queues []PacketQueue
}

// PacketQueue is ofp_packet_queue.
type PacketQueue struct {
	QueueID    uint32
	Properties []QueueProperty
}

// QueueProperty is one ofp_queue_prop_*: Property is QueuePropNone (8 bytes
// on the wire) or QueuePropMinRate (16 bytes, Rate in 1/10 %, >1000 =
// disabled).
type QueueProperty struct {
	Property uint16
	Rate     uint16
}

const (
	queueGetConfigReplyLen = 16
	packetQueueLen         = 8
	queuePropHeaderLen     = 8
	queuePropMinRateLen    = 16
)

// Len is the encoded length of the property.
func (p QueueProperty) Len() int {
	if p.Property == QueuePropMinRate {
		return queuePropMinRateLen
	}
	return queuePropHeaderLen
}

// Len is the encoded length of the queue with its properties.
func (q *PacketQueue) Len() int {
	n := packetQueueLen
	for _, p := range q.Properties {
		n += p.Len()
	}
	return n
}

func (m *QueueGetConfigReply) MsgType() Type { return TypeQueueGetConfigReply }

func (m *QueueGetConfigReply) Len() int {
	n := queueGetConfigReplyLen
	for i := range m.Queues {
		n += m.Queues[i].Len()
	}
	return n
}

func (m *QueueGetConfigReply) AppendBinary(b []byte) ([]byte, error) {
	b, err := beginMsg(b, TypeQueueGetConfigReply, m.Len(), m.Xid)
	if err != nil {
		return b, err
	}
	b = append(b, byte(m.Port>>8), byte(m.Port), 0, 0, 0, 0, 0, 0)
	for i := range m.Queues {
		q := &m.Queues[i]
		b = binary.BigEndian.AppendUint32(b, q.QueueID)
		b = binary.BigEndian.AppendUint16(b, uint16(q.Len()))
		b = append(b, 0, 0)
		for _, p := range q.Properties {
			b = binary.BigEndian.AppendUint16(b, p.Property)
			b = binary.BigEndian.AppendUint16(b, uint16(p.Len()))
			b = append(b, 0, 0, 0, 0)
			if p.Property == QueuePropMinRate {
				b = append(b, byte(p.Rate>>8), byte(p.Rate), 0, 0, 0, 0, 0, 0)
			}
		}
	}
	return b, nil
}

func (m *QueueGetConfigReply) DecodeFromBytes(b []byte) error {
	if err := decodeMsgHeader(&m.Header, b, TypeQueueGetConfigReply, queueGetConfigReplyLen, MaxMessageLen); err != nil {
		return err
	}
	m.Port = binary.BigEndian.Uint16(b[8:10])
	m.Queues = nil
	for rest := b[queueGetConfigReplyLen:]; len(rest) > 0; {
		if len(rest) < packetQueueLen {
			return lengthErr("ofp_packet_queue", packetQueueLen, len(rest))
		}
		n := int(binary.BigEndian.Uint16(rest[4:6]))
		if n < packetQueueLen || n > len(rest) {
			return lengthErr("ofp_packet_queue.len", len(rest), n)
		}
		q := PacketQueue{QueueID: binary.BigEndian.Uint32(rest[0:4])}
		props, err := decodeQueueProperties(rest[packetQueueLen:n])
		if err != nil {
			return err
		}
		q.Properties = props
		m.Queues = append(m.Queues, q)
		rest = rest[n:]
	}
	return nil
}

func decodeQueueProperties(b []byte) ([]QueueProperty, error) {
	var props []QueueProperty
	for len(b) > 0 {
		if len(b) < queuePropHeaderLen {
			return nil, lengthErr("ofp_queue_prop_header", queuePropHeaderLen, len(b))
		}
		p := QueueProperty{Property: binary.BigEndian.Uint16(b[0:2])}
		n := int(binary.BigEndian.Uint16(b[2:4]))
		switch p.Property {
		case QueuePropNone:
			if n != queuePropHeaderLen {
				return nil, lengthErr("ofp_queue_prop NONE", queuePropHeaderLen, n)
			}
		case QueuePropMinRate:
			if n != queuePropMinRateLen {
				return nil, lengthErr("ofp_queue_prop_min_rate", queuePropMinRateLen, n)
			}
		default:
			return nil, &BadValueError{What: "ofp_queue_prop_header.property", Value: uint64(p.Property)}
		}
		if n > len(b) {
			return nil, lengthErr("ofp_queue_prop_header.len", len(b), n)
		}
		if p.Property == QueuePropMinRate {
			p.Rate = binary.BigEndian.Uint16(b[8:10])
		}
		props = append(props, p)
		b = b[n:]
	}
	return props, nil
}
