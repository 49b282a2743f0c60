package controller

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/pseudocong/pseudocong/openflow"
)

// helloElemVersionBitmap is OFPHET_VERSIONBITMAP (OpenFlow 1.3.1+ HELLOs).
const helloElemVersionBitmap = 1

// handshake runs HELLO, FEATURES_REQUEST/REPLY and SET_CONFIG, within
// HandshakeTimeout. Echo requests meanwhile are answered; other messages
// before the FEATURES_REPLY are dropped (the app is not attached yet).
func (c *switchConn) handshake() error {
	_ = c.nc.SetReadDeadline(time.Now().Add(c.srv.cfg.HandshakeTimeout))
	defer c.nc.SetReadDeadline(time.Time{})

	if err := c.sendCounted(&openflow.Hello{Header: openflow.Header{Xid: c.nextXid()}}); err != nil {
		return err
	}
	frame, err := c.readFrame()
	if err != nil {
		return fmt.Errorf("waiting for HELLO: %w", err)
	}
	c.metrics.MessageIn(openflow.Type(frame[1]))
	if openflow.Type(frame[1]) != openflow.TypeHello {
		c.helloFailed(frame, "expected HELLO first")
		return fmt.Errorf("first message is %v, not HELLO", openflow.Type(frame[1]))
	}
	if !offersVersion10(frame) {
		c.helloFailed(frame, "this controller speaks OpenFlow 1.0 (wire version 0x01) only")
		return &openflow.VersionError{Got: frame[0]}
	}

	if err := c.sendCounted(&openflow.FeaturesRequest{Header: openflow.Header{Xid: c.nextXid()}}); err != nil {
		return err
	}
	for {
		frame, err := c.readFrame()
		if err != nil {
			return fmt.Errorf("waiting for FEATURES_REPLY: %w", err)
		}
		t := openflow.Type(frame[1])
		c.metrics.MessageIn(t)
		if frame[0] != openflow.Version {
			c.metrics.ProtocolError()
			c.sendError(frame, openflow.ErrorTypeBadRequest, uint16(openflow.BadRequestBadVersion))
			continue
		}
		switch t {
		case openflow.TypeFeaturesReply:
			if err := c.features.DecodeFromBytes(frame); err != nil {
				c.metrics.ProtocolError()
				et, code := openflow.ErrorCodeFor(err)
				c.sendError(frame, et, code)
				return fmt.Errorf("bad FEATURES_REPLY: %w", err)
			}
			// Decoded ports must outlive the read buffer: they are strings
			// and values already, nothing aliases frame.
			return c.sendCounted(&openflow.SetConfig{
				Header:      openflow.Header{Xid: c.nextXid()},
				Flags:       openflow.ConfigFragNormal,
				MissSendLen: c.srv.cfg.MissSendLen,
			})
		case openflow.TypeEchoRequest:
			var req openflow.EchoRequest
			if req.DecodeFromBytes(frame) == nil {
				_ = c.sendCounted(&openflow.EchoReply{Header: openflow.Header{Xid: req.Xid}, Data: req.Data})
			}
		case openflow.TypeError:
			var e openflow.ErrorMsg
			if err := e.DecodeFromBytes(frame); err != nil {
				return fmt.Errorf("switch sent an undecodable ERROR during the handshake: %w", err)
			}
			return fmt.Errorf("switch refused the handshake: %w", &e)
		default:
			c.log.Debug("message before FEATURES_REPLY dropped", "type", t.String())
		}
	}
}

// sendCounted sends and counts a message the shell itself originates.
func (c *switchConn) sendCounted(m openflow.Message) error {
	if err := c.Send(m); err != nil {
		return err
	}
	c.metrics.MessageOut(m.MsgType())
	return nil
}

// readFrame reads one whole message into a fresh slice (handshake only).
// Over-long and under-long frames are errors here: a peer that cannot
// frame a HELLO is not worth resynchronising with.
func (c *switchConn) readFrame() ([]byte, error) {
	hdr, err := c.br.Peek(openflow.HeaderLen)
	if err != nil {
		return nil, readErr(err, len(hdr))
	}
	n := int(binary.BigEndian.Uint16(hdr[2:4]))
	if n < openflow.HeaderLen || n > c.srv.cfg.MaxMessageLen {
		c.metrics.ProtocolError()
		c.sendError(hdr, openflow.ErrorTypeBadRequest, uint16(openflow.BadRequestBadLen))
		return nil, fmt.Errorf("framing: message length %d", n)
	}
	b, err := c.br.Peek(n)
	if err != nil {
		return nil, readErr(err, len(b))
	}
	frame := append([]byte(nil), b...)
	_, _ = c.br.Discard(n)
	return frame, nil
}

// offersVersion10 reports whether a peer's HELLO allows OpenFlow 1.0: its
// header version is 1, or higher with no version bitmap (the spec then
// negotiates the lower version, ours), or a bitmap with bit 1 set.
func offersVersion10(hello []byte) bool {
	switch v := hello[0]; {
	case v == openflow.Version:
		return true
	case v < openflow.Version:
		return false
	}
	for b := hello[openflow.HeaderLen:]; len(b) >= 4; {
		typ := binary.BigEndian.Uint16(b[0:2])
		n := int(binary.BigEndian.Uint16(b[2:4]))
		if n < 4 || n > len(b) {
			return true // unreadable elements: fall back to the header version
		}
		if typ == helloElemVersionBitmap && n >= 8 {
			return binary.BigEndian.Uint32(b[4:8])&(1<<openflow.Version) != 0
		}
		padded := (n + 7) &^ 7 // elements are padded to 8 bytes
		if padded >= len(b) {
			break
		}
		b = b[padded:]
	}
	return true
}

// helloFailed tells the peer why we give up (HELLO_FAILED/INCOMPATIBLE with
// an ASCII explanation, as the spec asks).
func (c *switchConn) helloFailed(hello []byte, why string) {
	e := &openflow.ErrorMsg{
		Header: openflow.Header{Xid: binary.BigEndian.Uint32(hello[4:8])},
		Type:   openflow.ErrorTypeHelloFailed,
		Code:   uint16(openflow.HelloFailedIncompatible),
		Data:   []byte(why),
	}
	_ = c.sendCounted(e)
}
