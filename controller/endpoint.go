package controller

import (
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/pseudocong/pseudocong/openflow"
)

// Transport carries an Endpoint's messages to the switch. Send must encode
// m before it returns (the caller reuses m): the TCP shell appends to its
// write buffer, the simulator encodes onto its modelled channel.
type Transport interface {
	Send(m openflow.Message) error
}

// EndpointConfig configures an Endpoint.
type EndpointConfig struct {
	// Core receives the switch once the handshake is done. Required.
	Core *Core
	// Transport sends to the switch. Required.
	Transport Transport
	// MissSendLen is sent in SET_CONFIG (default 128).
	MissSendLen uint16
	// Logger defaults to the discarding logger.
	Logger *slog.Logger
}

// Endpoint is the controller side of one switch connection at the level
// of whole messages, without I/O: the owner hands it every frame the switch
// sends (HandleFrame) and it answers through the Transport. It runs the
// handshake (HELLO, FEATURES_REQUEST/REPLY, SET_CONFIG), then connects the
// switch to the Core and feeds it; it answers undecodable messages with an
// OpenFlow ERROR and tells the owner (by an error) when the peer is beyond
// repair. The TCP shell and the simulator drive the same Endpoint, so the
// handshake and the handling of hostile input are the same code in both.
//
// Timeouts (handshake, keepalive) are the owner's, who knows its clock.
// An Endpoint is used from one goroutine at a time.
type Endpoint struct {
	core      *Core
	transport Transport
	log       *slog.Logger
	metrics   *Metrics
	missSend  uint16

	state    endpointState
	features openflow.FeaturesReply
	session  *Session
	xid      uint32
	pin      openflow.PacketIn // reused for every PACKET_IN (hot path)
	badRun   int               // consecutive undecodable frames
	lastWarn time.Time
	quiet    int // warnings suppressed since lastWarn
}

type endpointState int

const (
	stateNew          endpointState = iota // Start not called yet
	stateWaitHello                         // HELLO sent, waiting for the peer's
	stateWaitFeatures                      // FEATURES_REQUEST sent
	stateConnected                         // the core has the switch
	stateClosed
)

// maxConsecutiveBadFrames: a peer that sends this many undecodable messages
// in a row is not a switch; give up on it instead of answering on.
const maxConsecutiveBadFrames = 64

// helloElemVersionBitmap is OFPHET_VERSIONBITMAP (OpenFlow 1.3.1+ HELLOs).
const helloElemVersionBitmap = 1

// NewEndpoint returns an endpoint; call Start to send our HELLO.
func NewEndpoint(cfg EndpointConfig) *Endpoint {
	if cfg.Core == nil || cfg.Transport == nil {
		panic("controller: EndpointConfig needs Core and Transport")
	}
	if cfg.MissSendLen == 0 {
		cfg.MissSendLen = openflow.DefaultMissSendLen
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Endpoint{
		core: cfg.Core, transport: cfg.Transport, log: cfg.Logger,
		metrics: cfg.Core.Metrics(), missSend: cfg.MissSendLen,
	}
}

// DPID is the datapath id (0 before the FEATURES_REPLY).
func (e *Endpoint) DPID() uint64 { return e.features.DatapathID }

// Features is the switch's FEATURES_REPLY.
func (e *Endpoint) Features() *openflow.FeaturesReply { return &e.features }

// Send sends m to the switch through the transport.
func (e *Endpoint) Send(m openflow.Message) error { return e.transport.Send(m) }

// Connected reports whether the handshake is done and the core has the
// switch.
func (e *Endpoint) Connected() bool { return e.state == stateConnected }

// Session is the core's session for this switch (nil before Connected).
func (e *Endpoint) Session() *Session { return e.session }

// Start sends our HELLO.
func (e *Endpoint) Start() error {
	if e.state != stateNew {
		return errors.New("controller: endpoint already started")
	}
	e.state = stateWaitHello
	return e.sendCounted(&openflow.Hello{Header: openflow.Header{Xid: e.nextXid()}})
}

// Close ends the connection: the core and the app forget the switch.
func (e *Endpoint) Close() {
	if e.state == stateConnected {
		e.session.Disconnect()
	}
	e.state = stateClosed
}

func (e *Endpoint) nextXid() uint32 {
	e.xid++
	if e.xid == 0 {
		e.xid = 1
	}
	return e.xid
}

// HandleFrame processes one whole message from the switch: frame holds
// exactly the bytes of one message as framed by its length field (at least
// the 8-byte header). frame is only borrowed. A non-nil error means the
// connection must be closed (a failed handshake, a peer that sends nothing
// decodable); everything else is answered and survived.
func (e *Endpoint) HandleFrame(frame []byte) error {
	if len(frame) < openflow.HeaderLen || int(binary.BigEndian.Uint16(frame[2:4])) != len(frame) {
		e.metrics.ProtocolError()
		e.sendError(frame, openflow.ErrorTypeBadRequest, uint16(openflow.BadRequestBadLen))
		return fmt.Errorf("framing: a frame of %d bytes does not match its header", len(frame))
	}
	switch e.state {
	case stateConnected:
		return e.handleMessage(frame)
	case stateWaitHello:
		return e.handleHello(frame)
	case stateWaitFeatures:
		return e.handleBeforeFeatures(frame)
	case stateNew:
		return errors.New("controller: HandleFrame before Start")
	}
	return errors.New("controller: endpoint closed")
}

// handleHello checks the peer's HELLO and asks for its features.
func (e *Endpoint) handleHello(frame []byte) error {
	t := openflow.Type(frame[1])
	e.metrics.MessageIn(t)
	if t != openflow.TypeHello {
		e.helloFailed(frame, "expected HELLO first")
		return fmt.Errorf("handshake: first message is %v, not HELLO", t)
	}
	if !offersVersion10(frame) {
		e.helloFailed(frame, "this controller speaks OpenFlow 1.0 (wire version 0x01) only")
		return fmt.Errorf("handshake: %w", &openflow.VersionError{Got: frame[0]})
	}
	e.state = stateWaitFeatures
	return e.sendCounted(&openflow.FeaturesRequest{Header: openflow.Header{Xid: e.nextXid()}})
}

// handleBeforeFeatures waits for the FEATURES_REPLY, answering echoes; other
// messages are dropped (no app is attached yet).
func (e *Endpoint) handleBeforeFeatures(frame []byte) error {
	t := openflow.Type(frame[1])
	e.metrics.MessageIn(t)
	if frame[0] != openflow.Version {
		e.metrics.ProtocolError()
		e.sendError(frame, openflow.ErrorTypeBadRequest, uint16(openflow.BadRequestBadVersion))
		return nil
	}
	switch t {
	case openflow.TypeFeaturesReply:
		if err := e.features.DecodeFromBytes(frame); err != nil {
			e.metrics.ProtocolError()
			et, code := openflow.ErrorCodeFor(err)
			e.sendError(frame, et, code)
			return fmt.Errorf("handshake: bad FEATURES_REPLY: %w", err)
		}
		// Nothing in the decoded reply aliases frame (ports are values).
		if err := e.sendCounted(&openflow.SetConfig{
			Header: openflow.Header{Xid: e.nextXid()}, Flags: openflow.ConfigFragNormal, MissSendLen: e.missSend,
		}); err != nil {
			return err
		}
		e.log = e.log.With("dpid", dpidString(e.features.DatapathID))
		e.state = stateConnected
		e.session = e.core.Connect(e)
	case openflow.TypeEchoRequest:
		var req openflow.EchoRequest
		if req.DecodeFromBytes(frame) == nil {
			return e.sendCounted(&openflow.EchoReply{Header: openflow.Header{Xid: req.Xid}, Data: req.Data})
		}
	case openflow.TypeError:
		var em openflow.ErrorMsg
		if err := em.DecodeFromBytes(frame); err != nil {
			return fmt.Errorf("handshake: undecodable ERROR from the switch: %w", err)
		}
		return fmt.Errorf("switch refused the handshake: %w", &em)
	default:
		e.log.Debug("message before FEATURES_REPLY dropped", "type", t.String())
	}
	return nil
}

// handleMessage decodes a message of a connected switch and hands it to
// the session.
func (e *Endpoint) handleMessage(frame []byte) error {
	t := openflow.Type(frame[1])
	if frame[0] != openflow.Version {
		if t == openflow.TypeHello {
			return nil // a repeated HELLO is harmless
		}
		return e.badFrame(frame, openflow.ErrorTypeBadRequest, uint16(openflow.BadRequestBadVersion),
			&openflow.VersionError{Got: frame[0]})
	}
	var m openflow.Message
	if t == openflow.TypePacketIn {
		// Hot path: decode into the reused struct, no allocation.
		if err := e.pin.DecodeFromBytes(frame); err != nil {
			et, code := openflow.ErrorCodeFor(err)
			return e.badFrame(frame, et, code, err)
		}
		m = &e.pin
	} else {
		var err error
		if m, err = openflow.Unmarshal(frame); err != nil {
			if t == openflow.TypeError {
				// Never answer an ERROR with an ERROR: two broken peers
				// would ping-pong forever.
				e.metrics.ProtocolError()
				e.warn("undecodable ERROR from switch", "err", err)
				return nil
			}
			et, code := openflow.ErrorCodeFor(err)
			return e.badFrame(frame, et, code, err)
		}
	}
	e.badRun = 0
	e.session.Handle(m)
	return nil
}

// BadFrame reports a frame the owner's framing had to skip (longer than it
// accepts): it is answered with BAD_REQUEST/BAD_LEN carrying prefix, the
// frame's first bytes. It returns an error when the peer sends nothing else.
func (e *Endpoint) BadFrame(prefix []byte, length int) error {
	return e.badFrame(prefix, openflow.ErrorTypeBadRequest, uint16(openflow.BadRequestBadLen),
		fmt.Errorf("message length %d above the limit", length))
}

// badFrame answers an undecodable message with an ERROR, and gives up on a
// peer that sends nothing else.
func (e *Endpoint) badFrame(frame []byte, t openflow.ErrorType, code uint16, cause error) error {
	e.metrics.ProtocolError()
	e.sendError(frame, t, code)
	e.warn("bad message from switch", "type", openflow.Type(frame[1]).String(), "len", len(frame), "err", cause)
	e.badRun++
	if e.badRun >= maxConsecutiveBadFrames {
		return fmt.Errorf("%d undecodable messages in a row (last: %w)", e.badRun, cause)
	}
	return nil
}

// SendError answers a bad message (or the start of one, at least the
// header if present) with an OpenFlow ERROR carrying its first 64 bytes.
func (e *Endpoint) SendError(req []byte, t openflow.ErrorType, code uint16) {
	e.sendError(req, t, code)
}

func (e *Endpoint) sendError(req []byte, t openflow.ErrorType, code uint16) {
	_ = e.sendCounted(openflow.NewErrorFor(req, t, code))
}

// sendCounted sends and counts a message the endpoint itself originates
// (the session counts what the app sends).
func (e *Endpoint) sendCounted(m openflow.Message) error {
	if err := e.transport.Send(m); err != nil {
		return err
	}
	e.metrics.MessageOut(m.MsgType())
	return nil
}

// warn logs a misbehaving peer at most once per second of the core's
// clock.
func (e *Endpoint) warn(msg string, args ...any) {
	now := e.core.clock.Now()
	if now.Sub(e.lastWarn) < time.Second {
		e.quiet++
		return
	}
	if e.quiet > 0 {
		args = append(args, "suppressed", e.quiet)
	}
	e.lastWarn, e.quiet = now, 0
	e.log.Warn(msg, args...)
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
func (e *Endpoint) helloFailed(hello []byte, why string) {
	_ = e.sendCounted(&openflow.ErrorMsg{
		Header: openflow.Header{Xid: binary.BigEndian.Uint32(hello[4:8])},
		Type:   openflow.ErrorTypeHelloFailed,
		Code:   uint16(openflow.HelloFailedIncompatible),
		Data:   []byte(why),
	})
}
