package packet

import "encoding/binary"

// SACKBlock is one selective acknowledgement block (RFC 2018).
type SACKBlock struct{ Left, Right uint32 }

// TCPOptions are the TCP options this package understands. Decoding skips
// unknown options (counting them) and ignores known ones of the wrong
// length, as Linux does.
type TCPOptions struct {
	HasMSS         bool
	MSS            uint16
	HasWindowScale bool
	WindowScale    uint8
	SACKPermitted  bool
	NumSACK        int // blocks used in SACK; at most 4 fit in 40 bytes
	SACK           [4]SACKBlock
	HasTimestamps  bool
	TSVal, TSEcr   uint32
	Unknown        int // options of other kinds, skipped
}

// TCP is a TCP header.
type TCP struct {
	SrcPort, DstPort uint16
	Seq, Ack         uint32
	DataOffset       uint8 // header length in 32-bit words; filled by decoding
	Flags            TCPFlags
	Window           uint16
	Checksum         uint16 // filled by decoding; building computes it
	Urgent           uint16
	Options          TCPOptions
	// RawOptions are the option bytes. Decoding aliases the frame;
	// building writes them verbatim (zero-padded to 4 bytes) when non-nil,
	// and otherwise encodes Options.
	RawOptions []byte
}

// DecodeFromBytes decodes the header at the start of seg (the IP payload)
// and returns the segment's payload.
func (t *TCP) DecodeFromBytes(seg []byte) (payload []byte, err error) {
	if len(seg) < TCPMinLen {
		return nil, errTCPShort
	}
	t.SrcPort = binary.BigEndian.Uint16(seg[0:2])
	t.DstPort = binary.BigEndian.Uint16(seg[2:4])
	t.Seq = binary.BigEndian.Uint32(seg[4:8])
	t.Ack = binary.BigEndian.Uint32(seg[8:12])
	t.DataOffset = seg[12] >> 4
	t.Flags = TCPFlags(seg[13]) | TCPFlags(seg[12]&1)<<8
	t.Window = binary.BigEndian.Uint16(seg[14:16])
	t.Checksum = binary.BigEndian.Uint16(seg[16:18])
	t.Urgent = binary.BigEndian.Uint16(seg[18:20])
	hl := int(t.DataOffset) * 4
	if hl < TCPMinLen {
		return nil, errTCPDataOffset
	}
	if hl > len(seg) {
		return nil, errTCPHdrShort
	}
	t.RawOptions = nil
	if hl > TCPMinLen {
		t.RawOptions = seg[TCPMinLen:hl]
	}
	if err := t.Options.decode(t.RawOptions); err != nil {
		return nil, err
	}
	return seg[hl:], nil
}

func (o *TCPOptions) decode(b []byte) error {
	*o = TCPOptions{}
	for len(b) > 0 {
		kind := b[0]
		if kind == TCPOptionEnd {
			return nil // the rest is padding
		}
		if kind == TCPOptionNOP {
			b = b[1:]
			continue
		}
		if len(b) < 2 || b[1] < 2 || int(b[1]) > len(b) {
			return errTCPOption
		}
		body := b[2:b[1]]
		b = b[b[1]:]
		switch kind {
		case TCPOptionMSS:
			if len(body) == 2 {
				o.HasMSS, o.MSS = true, binary.BigEndian.Uint16(body)
			}
		case TCPOptionWindowScale:
			if len(body) == 1 {
				o.HasWindowScale, o.WindowScale = true, body[0]
			}
		case TCPOptionSACKPermitted:
			if len(body) == 0 {
				o.SACKPermitted = true
			}
		case TCPOptionSACK:
			if len(body) > 0 && len(body)%8 == 0 {
				o.NumSACK = min(len(body)/8, len(o.SACK))
				for i := range o.NumSACK {
					o.SACK[i] = SACKBlock{binary.BigEndian.Uint32(body[8*i:]), binary.BigEndian.Uint32(body[8*i+4:])}
				}
			}
		case TCPOptionTimestamps:
			if len(body) == 8 {
				o.HasTimestamps = true
				o.TSVal, o.TSEcr = binary.BigEndian.Uint32(body), binary.BigEndian.Uint32(body[4:])
			}
		default:
			o.Unknown++
		}
	}
	return nil
}

// appendTo appends the options in the layout Linux uses (so that 32-bit
// fields stay aligned), padded with End to a multiple of 4 bytes.
func (o *TCPOptions) appendTo(b []byte) []byte {
	if o.HasMSS {
		b = append(b, TCPOptionMSS, 4)
		b = binary.BigEndian.AppendUint16(b, o.MSS)
	}
	switch {
	case o.SACKPermitted && o.HasTimestamps:
		b = append(b, TCPOptionSACKPermitted, 2)
	case o.SACKPermitted:
		b = append(b, TCPOptionNOP, TCPOptionNOP, TCPOptionSACKPermitted, 2)
	case o.HasTimestamps:
		b = append(b, TCPOptionNOP, TCPOptionNOP)
	}
	if o.HasTimestamps {
		b = append(b, TCPOptionTimestamps, 10)
		b = binary.BigEndian.AppendUint32(b, o.TSVal)
		b = binary.BigEndian.AppendUint32(b, o.TSEcr)
	}
	if o.HasWindowScale {
		b = append(b, TCPOptionNOP, TCPOptionWindowScale, 3, o.WindowScale)
	}
	if n := min(max(o.NumSACK, 0), len(o.SACK)); n > 0 {
		b = append(b, TCPOptionNOP, TCPOptionNOP, TCPOptionSACK, byte(2+8*n))
		for _, s := range o.SACK[:n] {
			b = binary.BigEndian.AppendUint32(b, s.Left)
			b = binary.BigEndian.AppendUint32(b, s.Right)
		}
	}
	return b
}

// appendTo appends the header followed by payload, with the checksum over
// the pseudo-header of src and dst.
func (t *TCP) appendTo(b []byte, src, dst [4]byte, payload []byte) ([]byte, error) {
	start := len(b)
	b = append(b, make([]byte, TCPMinLen)...)
	if t.RawOptions != nil {
		b = append(b, t.RawOptions...)
	} else {
		b = t.Options.appendTo(b)
	}
	for (len(b)-start)%4 != 0 {
		b = append(b, TCPOptionEnd)
	}
	hl := len(b) - start
	if hl > TCPMinLen+maxTCPOptions {
		return b[:start], errBuildTCPOpts
	}
	h := b[start:]
	binary.BigEndian.PutUint16(h[0:], t.SrcPort)
	binary.BigEndian.PutUint16(h[2:], t.DstPort)
	binary.BigEndian.PutUint32(h[4:], t.Seq)
	binary.BigEndian.PutUint32(h[8:], t.Ack)
	h[12] = byte(hl/4)<<4 | byte(t.Flags>>8&1)
	h[13] = byte(t.Flags)
	binary.BigEndian.PutUint16(h[14:], t.Window)
	binary.BigEndian.PutUint16(h[18:], t.Urgent)
	b = append(b, payload...)
	seg := b[start:]
	binary.BigEndian.PutUint16(seg[16:], Checksum(seg, PseudoHeaderSum(src, dst, IPProtocolTCP, len(seg))))
	return b, nil
}

// UDP is a UDP header.
type UDP struct {
	SrcPort, DstPort uint16
	Length           uint16 // filled by decoding; building computes it
	Checksum         uint16 // filled by decoding (0: none); building computes it
}

// DecodeFromBytes decodes the header at the start of seg and returns the
// datagram's payload, up to Length (or the end of seg, if shorter).
func (u *UDP) DecodeFromBytes(seg []byte) (payload []byte, err error) {
	if len(seg) < UDPLen {
		return nil, errUDPShort
	}
	u.SrcPort = binary.BigEndian.Uint16(seg[0:2])
	u.DstPort = binary.BigEndian.Uint16(seg[2:4])
	u.Length = binary.BigEndian.Uint16(seg[4:6])
	u.Checksum = binary.BigEndian.Uint16(seg[6:8])
	if u.Length < UDPLen {
		return nil, errUDPLength
	}
	return seg[UDPLen:min(int(u.Length), len(seg))], nil
}

func (u *UDP) appendTo(b []byte, src, dst [4]byte, payload []byte) []byte {
	start := len(b)
	n := UDPLen + len(payload)
	b = binary.BigEndian.AppendUint16(b, u.SrcPort)
	b = binary.BigEndian.AppendUint16(b, u.DstPort)
	b = binary.BigEndian.AppendUint16(b, uint16(n))
	b = append(b, 0, 0)
	b = append(b, payload...)
	sum := Checksum(b[start:], PseudoHeaderSum(src, dst, IPProtocolUDP, n))
	if sum == 0 {
		sum = 0xffff // 0 means "no checksum" (RFC 768)
	}
	binary.BigEndian.PutUint16(b[start+6:], sum)
	return b
}

// ICMP is an ICMP header. ID and Seq are the echo identifier and sequence
// number (for other types: the two halves of the rest-of-header word).
type ICMP struct {
	Type, Code uint8
	Checksum   uint16 // filled by decoding; building computes it
	ID, Seq    uint16
}

// DecodeFromBytes decodes the 8-byte header at the start of m and returns
// the message body.
func (c *ICMP) DecodeFromBytes(m []byte) (payload []byte, err error) {
	if len(m) < ICMPLen {
		return nil, errICMPShort
	}
	c.Type, c.Code = m[0], m[1]
	c.Checksum = binary.BigEndian.Uint16(m[2:4])
	c.ID = binary.BigEndian.Uint16(m[4:6])
	c.Seq = binary.BigEndian.Uint16(m[6:8])
	return m[ICMPLen:], nil
}

func (c *ICMP) appendTo(b []byte, payload []byte) []byte {
	start := len(b)
	b = append(b, c.Type, c.Code, 0, 0)
	b = binary.BigEndian.AppendUint16(b, c.ID)
	b = binary.BigEndian.AppendUint16(b, c.Seq)
	b = append(b, payload...)
	binary.BigEndian.PutUint16(b[start+2:], Checksum(b[start:], 0))
	return b
}
