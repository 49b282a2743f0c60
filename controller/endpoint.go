package controller

import (
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/pseudocong/pseudocong/internal/clock"
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
	// HandshakeTimeout, EchoInterval and EchoTimeout configure the
	// endpoint's openflow.Channel, whose timers run on the core's clock
	// (zero values take the Channel's defaults; negative disables). The
	// TCP shell bounds the handshake with socket deadlines instead and
	// passes a negative HandshakeTimeout.
	HandshakeTimeout time.Duration
	EchoInterval     time.Duration
	EchoTimeout      time.Duration
	// OnFailed, if set, is called when the channel fails on a timer (the
	// handshake timed out, the switch stopped answering echoes): the owner
	// closes the connection. Failures found while handling a frame are
	// returned by HandleFrame instead. It runs on the clock's goroutine.
	OnFailed func(error)
	// Logger defaults to the discarding logger.
	Logger *slog.Logger
}

// Endpoint is the controller side of one switch connection at the level
// of whole messages, without I/O: the owner hands it every frame the switch
// sends (HandleFrame) and it answers through the Transport. Its
// openflow.Channel (RoleController) runs the handshake (HELLO,
// FEATURES_REQUEST/REPLY, SET_CONFIG) and the echo keepalive; the endpoint
// then connects the switch to the Core and feeds it; it answers
// undecodable messages with an OpenFlow ERROR and tells the owner (by an
// error) when the peer is beyond repair. The TCP shell and the simulator
// drive the same Endpoint, so the handshake and the handling of hostile
// input are the same code in both.
//
// The owner calls Activity when bytes arrive (the keepalive's sign of
// life). HandleFrame is used from one goroutine at a time.
type Endpoint struct {
	core      *Core
	transport Transport
	log       *slog.Logger
	metrics   *Metrics
	ch        *openflow.Channel

	started  bool
	closed   bool
	features openflow.FeaturesReply
	session  *Session
	sess     atomic.Pointer[Session] // session, for Written on any goroutine
	xid      uint32
	readAt   int64             // clock reading (UnixNano) of the owner's last read; 0: none reported
	pin      openflow.PacketIn // reused for every PACKET_IN (hot path)
	badRun   int               // consecutive undecodable frames
	lastWarn time.Time
	quiet    int // warnings suppressed since lastWarn
}

// maxConsecutiveBadFrames: a peer that sends this many undecodable messages
// in a row is not a switch; give up on it instead of answering on.
const maxConsecutiveBadFrames = 64

// NewEndpoint returns an endpoint; call Start to send our HELLO.
func NewEndpoint(cfg EndpointConfig) *Endpoint {
	if cfg.Core == nil || cfg.Transport == nil {
		panic("controller: EndpointConfig needs Core and Transport")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	e := &Endpoint{
		core: cfg.Core, transport: cfg.Transport, log: cfg.Logger,
		metrics: cfg.Core.Metrics(),
	}
	e.ch = openflow.NewChannel(openflow.ChannelConfig{
		Role: openflow.RoleController, Clock: cfg.Core.clock, Out: endpointOut{e},
		HandshakeTimeout: cfg.HandshakeTimeout, EchoInterval: cfg.EchoInterval, EchoTimeout: cfg.EchoTimeout,
		MissSendLen: cfg.MissSendLen, ConfigFlags: openflow.ConfigFragNormal,
		// Keepalive xids in the upper half, away from the app's.
		NextXid: func() uint32 { e.xid++; return e.xid | 1<<31 },
		OnEstablished: func(est openflow.Established) {
			e.features = *est.Features
			e.log = e.log.With("dpid", dpidString(e.features.DatapathID))
			e.session = e.core.Connect(e)
			e.sess.Store(e.session)
		},
		OnFailed: func(err error) {
			if errors.Is(err, openflow.ErrPeerDead) {
				cfg.Logger.Warn("switch silent: no answer to echo request; disconnecting")
			}
			if cfg.OnFailed != nil {
				cfg.OnFailed(err)
			}
		},
	})
	return e
}

// endpointOut is the channel's Sender: the transport, counting what the
// channel originates (the session counts what the app sends).
type endpointOut struct{ e *Endpoint }

func (o endpointOut) Send(m openflow.Message) error { return o.e.sendCounted(m) }

// DPID is the datapath id (0 before the FEATURES_REPLY).
func (e *Endpoint) DPID() uint64 { return e.features.DatapathID }

// Features is the switch's FEATURES_REPLY.
func (e *Endpoint) Features() *openflow.FeaturesReply { return &e.features }

// Send sends m to the switch through the transport.
func (e *Endpoint) Send(m openflow.Message) error { return e.transport.Send(m) }

// Connected reports whether the handshake is done and the core has the
// switch.
func (e *Endpoint) Connected() bool { return e.session != nil && !e.closed }

// Session is the core's session for this switch (nil before Connected).
func (e *Endpoint) Session() *Session { return e.session }

// Err is why the endpoint's channel failed (nil while it has not, and
// after a plain Close).
func (e *Endpoint) Err() error {
	if err := e.ch.Err(); !errors.Is(err, openflow.ErrChannelStopped) {
		return err
	}
	return nil
}

// Activity tells the keepalive that bytes arrived from the switch.
func (e *Endpoint) Activity() { e.ch.Activity() }

// Read tells the endpoint that the owner read bytes from the switch at
// now (the keepalive's sign of life), and that the frames it hands over
// next came with that read. An owner that reports its reads must report
// its writes (Written): a PACKET_IN's handling time then runs from the
// read that brought it to the write that carried the FLOW_MOD, with no
// clock reading per message. An owner that reports neither (the
// simulator) gets the time from HandleFrame to the Transport's Send.
func (e *Endpoint) Read(now time.Time) {
	e.ch.ActivityAt(now)
	e.readAt = now.UnixNano()
}

// Written tells the endpoint that everything sent so far has been
// written at now (see Read).
func (e *Endpoint) Written(now time.Time) {
	if s := e.sess.Load(); s != nil {
		s.flushed(now.UnixNano())
	}
}

// Clock is the clock the endpoint times with (the core's).
func (e *Endpoint) Clock() clock.Clock { return e.core.clock }

// Start sends our HELLO.
func (e *Endpoint) Start() error {
	if e.started {
		return errors.New("controller: endpoint already started")
	}
	e.started = true
	return e.ch.Start()
}

// Close ends the connection: the channel's timers stop, the core and the
// app forget the switch.
func (e *Endpoint) Close() {
	e.ch.Stop()
	if e.session != nil && !e.closed {
		e.session.Disconnect()
	}
	e.closed = true
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
	switch {
	case !e.started:
		return errors.New("controller: HandleFrame before Start")
	case e.closed:
		return errors.New("controller: endpoint closed")
	}
	deliver, err := e.ch.Receive(frame)
	if !deliver {
		// The channel's: handshake, echo traffic, a repeated HELLO.
		e.metrics.MessageIn(openflow.Type(frame[1]))
		if err != nil {
			return fmt.Errorf("handshake: %w", err)
		}
		return nil
	}
	return e.handleMessage(frame)
}

// handleMessage decodes a message of a connected switch and hands it to
// the session.
func (e *Endpoint) handleMessage(frame []byte) error {
	t := openflow.Type(frame[1])
	if frame[0] != openflow.Version {
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
	if e.readAt != 0 {
		e.session.handleAt(m, e.readAt)
	} else {
		e.session.Handle(m)
	}
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
