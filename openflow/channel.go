package openflow

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pseudocong/pseudocong/internal/clock"
)

// Role is the side of the control channel a Channel plays.
type Role uint8

const (
	// RoleSwitch exchanges HELLOs and is established once the peer's HELLO
	// negotiated OpenFlow 1.0. FEATURES_REQUEST, SET_CONFIG and everything
	// else are the application's: a switch answers them from its own state.
	// A tool that talks to a switch and asks for what it needs itself uses
	// this role too (it is openflow.Conn's default).
	RoleSwitch Role = iota
	// RoleController exchanges HELLOs, asks for the switch's features
	// (FEATURES_REQUEST → FEATURES_REPLY), sends SET_CONFIG, and is then
	// established with the features, as the live controller always did.
	RoleController
)

func (r Role) String() string {
	switch r {
	case RoleSwitch:
		return "switch"
	case RoleController:
		return "controller"
	}
	return fmt.Sprintf("Role(%d)", uint8(r))
}

// Sender carries a Channel's own messages (HELLO, FEATURES_REQUEST,
// SET_CONFIG, ECHO_REQUEST/REPLY, ERROR) to the peer. Send must encode m
// before it returns (m and the frame it may alias are reused); it must not
// call back into the Channel. An error means the message was not sent; the
// Channel counts a failed handshake message as a failure, a lost keepalive
// message is left to the keepalive timeout.
type Sender interface {
	Send(m Message) error
}

// Errors of a Channel besides *HelloFailedError.
var (
	// ErrHandshakeTimeout is the failure when the handshake did not complete
	// within ChannelConfig.HandshakeTimeout.
	ErrHandshakeTimeout = errors.New("openflow: handshake not completed in time")
	// ErrChannelStopped is returned by a Channel after Stop.
	ErrChannelStopped = errors.New("openflow: channel stopped")
)

// ChannelConfig configures a Channel. Zero fields take the defaults noted.
type ChannelConfig struct {
	Role Role
	// Clock runs the handshake and keepalive timers. Default clock.Wall{}.
	Clock clock.Clock
	// Out carries the channel's messages. Required.
	Out Sender
	// HandshakeTimeout fails the channel (ErrHandshakeTimeout) when it is
	// not established this long after Start. Default 10 s; negative: no
	// timer (the owner bounds the handshake, e.g. with socket deadlines).
	HandshakeTimeout time.Duration
	// EchoInterval is the silence after which an ECHO_REQUEST is sent once
	// established (Open vSwitch's inactivity probe). Default 5 s; negative
	// disables the keepalive.
	EchoInterval time.Duration
	// EchoTimeout is how long the peer may stay silent after that probe
	// before the channel fails with ErrPeerDead. Default EchoInterval.
	EchoTimeout time.Duration
	// MissSendLen and ConfigFlags go into the SET_CONFIG of RoleController
	// (defaults DefaultMissSendLen and ConfigFragNormal).
	MissSendLen uint16
	ConfigFlags uint16
	// NextXid gives the xids of the channel's requests, so that an owner
	// that also sends requests keeps them unique. Default: a counter of
	// the channel's own.
	NextXid func() uint32
	// OnEstablished is called once, when the handshake completes, after
	// the handshake's last message (SET_CONFIG for RoleController) was
	// handed to Out. May be nil.
	OnEstablished func(Established)
	// OnFailed is called once with the reason when the channel fails
	// (failed handshake, handshake timeout, dead peer), after any ERROR
	// telling the peer why was handed to Out; the owner then closes the
	// connection. It is called for failures that Receive also returns.
	// May be nil.
	OnFailed func(error)
}

// Established describes a completed handshake.
type Established struct {
	// Version is the negotiated wire version (always Version, 0x01).
	Version uint8
	// Features is the switch's FEATURES_REPLY (RoleController only; nil
	// for RoleSwitch). Nothing in it aliases a received frame.
	Features *FeaturesReply
}

// ChannelState is where a Channel is in its life.
type ChannelState int32

const (
	ChannelNew          ChannelState = iota // Start not called yet
	ChannelWaitHello                        // our HELLO sent, waiting for the peer's
	ChannelWaitFeatures                     // RoleController: FEATURES_REQUEST sent
	ChannelEstablished                      // handshake done, keepalive running
	ChannelFailed                           // failed or stopped; nothing more happens
)

func (s ChannelState) String() string {
	switch s {
	case ChannelNew:
		return "new"
	case ChannelWaitHello:
		return "wait-hello"
	case ChannelWaitFeatures:
		return "wait-features"
	case ChannelEstablished:
		return "established"
	case ChannelFailed:
		return "failed"
	}
	return fmt.Sprintf("ChannelState(%d)", int32(s))
}

// Channel is the sans-I/O OpenFlow 1.0 control channel of one connection,
// for either role: version negotiation (HELLO and its version bitmap),
// for RoleController the FEATURES_REQUEST/REPLY and SET_CONFIG, and the
// ECHO keepalive, on a clock.Clock. It is the only handshake and keepalive
// code: openflow.Conn (the switch's sessions, tools), the controller's TCP
// shell and the simulator's in-memory channel all drive one.
//
// The owner frames the byte stream (FrameReader) and feeds every frame to
// Receive, which either consumes it (handshake messages, ECHO traffic, a
// repeated HELLO) or tells the owner to deliver it to the application. The
// owner calls Activity whenever bytes arrive (Receive does not read the
// clock, so the per-message path stays cheap) and Hold while it stops
// reading on its own account. Outputs go to ChannelConfig.Out; events to
// OnEstablished and OnFailed.
//
// A simulator wires it onto an in-memory link like this (both roles, one
// virtual clock, no sockets; see TestChannelRolesOnSimClock):
//
//	sim := clock.NewSim(start)
//	var sw, ctl *openflow.Channel
//	// Out of each side delivers, after the link's delay, to the other.
//	link := func(to **openflow.Channel) openflow.Sender {
//		return senderFunc(func(m openflow.Message) error {
//			b, err := openflow.Marshal(m) // encode now: m is reused
//			if err != nil {
//				return err
//			}
//			sim.AfterFunc(delay, func() {
//				(*to).Activity()
//				if deliver, err := (*to).Receive(b); deliver && err == nil {
//					app.Handle(b) // the application's message
//				}
//			})
//			return nil
//		})
//	}
//	ctl = openflow.NewChannel(openflow.ChannelConfig{Role: openflow.RoleController, Clock: sim, Out: link(&sw),
//		OnEstablished: func(e openflow.Established) { /* connect e.Features.DatapathID */ }})
//	sw = openflow.NewChannel(openflow.ChannelConfig{Role: openflow.RoleSwitch, Clock: sim, Out: link(&ctl)})
//	ctl.Start()
//	sw.Start()
//	sim.Run() // or advance the simulation; the keepalive runs on sim
//
// Malformed or incompatible HELLOs are handled one way in both roles, as
// the OpenFlow spec asks: the channel answers ERROR HELLO_FAILED/
// INCOMPATIBLE with an ASCII explanation and fails (*HelloFailedError);
// the owner closes the connection. Malformed means a first message that
// is not a HELLO, a HELLO of version 0, or a HELLO whose element list does
// not parse (see NegotiateHello). A peer's ERROR instead of a HELLO fails
// the channel without an answer (an ERROR is never answered).
//
// All methods are safe for concurrent use (a wall clock fires timers on
// their own goroutines); Out and the callbacks are called without the
// channel's lock held.
type Channel struct {
	cfg   ChannelConfig
	clk   clock.Clock
	epoch time.Time

	state    atomic.Int32 // ChannelState; read lock-free by Receive's fast path
	lastRecv atomic.Int64 // ns since epoch of the peer's last sign of life
	held     atomic.Bool
	echoRTT  atomic.Int64

	mu        sync.Mutex
	xid       uint32
	timer     clock.Timer
	timerGen  uint64
	features  FeaturesReply
	probeXid  uint32 // outstanding keepalive probe, 0 if none
	probedFor int64  // lastRecv the outstanding probe is about
	probedAt  time.Duration
	err       error
}

// channelOut collects what a step sends and reports, so that Out and the
// callbacks run after the lock is released.
type channelOut struct {
	msgs        [3]Message
	n           int
	established bool
	failed      error
}

func (o *channelOut) send(m Message) { o.msgs[o.n] = m; o.n++ }

// NewChannel returns a channel in state ChannelNew; call Start.
func NewChannel(cfg ChannelConfig) *Channel {
	if cfg.Out == nil {
		panic("openflow: ChannelConfig.Out is nil")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Wall{}
	}
	if cfg.HandshakeTimeout == 0 {
		cfg.HandshakeTimeout = 10 * time.Second
	}
	if cfg.EchoInterval == 0 {
		cfg.EchoInterval = 5 * time.Second
	}
	if cfg.EchoTimeout <= 0 {
		cfg.EchoTimeout = cfg.EchoInterval
		if cfg.EchoTimeout < 0 {
			cfg.EchoTimeout = 5 * time.Second
		}
	}
	if cfg.MissSendLen == 0 {
		cfg.MissSendLen = DefaultMissSendLen
	}
	return &Channel{cfg: cfg, clk: cfg.Clock, epoch: cfg.Clock.Now(), probedFor: -1}
}

// State is the channel's state.
func (c *Channel) State() ChannelState { return ChannelState(c.state.Load()) }

// Established reports whether the handshake is complete (and the channel
// has not failed since).
func (c *Channel) Established() bool { return c.State() == ChannelEstablished }

// Features is the switch's FEATURES_REPLY (RoleController, once
// established; zero before).
func (c *Channel) Features() *FeaturesReply {
	c.mu.Lock()
	defer c.mu.Unlock()
	f := c.features
	return &f
}

// Err is why the channel failed (nil while it has not).
func (c *Channel) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// EchoRTT is the round-trip time of the last answered keepalive probe.
func (c *Channel) EchoRTT() time.Duration { return time.Duration(c.echoRTT.Load()) }

// Start sends our HELLO and arms the handshake timer.
func (c *Channel) Start() error {
	var out channelOut
	c.mu.Lock()
	if c.State() != ChannelNew {
		c.mu.Unlock()
		return errors.New("openflow: channel already started")
	}
	c.state.Store(int32(ChannelWaitHello))
	c.Activity()
	out.send(&Hello{Header: Header{Xid: c.nextXid()}})
	if c.cfg.HandshakeTimeout > 0 {
		c.armLocked(c.cfg.HandshakeTimeout)
	}
	c.mu.Unlock()
	return c.flush(&out)
}

// Stop ends the channel without an event: timers are stopped, Receive
// returns ErrChannelStopped. Stop is idempotent.
func (c *Channel) Stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.State() != ChannelFailed {
		c.state.Store(int32(ChannelFailed))
		if c.err == nil {
			c.err = ErrChannelStopped
		}
	}
	c.stopTimerLocked()
}

// Activity records that the peer showed a sign of life now (bytes arrived,
// whether or not they complete a message).
func (c *Channel) Activity() { c.ActivityAt(c.clk.Now()) }

// ActivityAt is Activity for an owner that has just read the clock.
func (c *Channel) ActivityAt(now time.Time) {
	c.lastRecv.Store(int64(now.Sub(c.epoch)))
}

// Hold tells the keepalive that the owner has stopped reading on its own
// account (its application is behind, or the peer does not read its
// replies), so the peer's silence says nothing about the peer. Hold(false)
// counts as activity.
func (c *Channel) Hold(held bool) {
	c.held.Store(held)
	if !held {
		c.Activity()
	}
}

// Receive handles one whole frame from the peer (frame holds exactly the
// bytes its length field states; it is only borrowed). It reports whether
// the owner should deliver the frame to the application. A non-nil error
// means the channel failed (OnFailed has been called); the owner closes
// the connection.
//
// Once established, only HELLO (ignored, whatever its version), and
// version-0x01 ECHO_REQUEST (answered) and ECHO_REPLY to our probe are
// consumed; everything else is delivered, lock-free.
func (c *Channel) Receive(frame []byte) (deliver bool, err error) {
	if len(frame) < HeaderLen || int(binary.BigEndian.Uint16(frame[2:4])) != len(frame) {
		return false, c.failNow(fmt.Errorf("openflow: channel: a frame of %d bytes does not match its header", len(frame)))
	}
	t := Type(frame[1])
	if ChannelState(c.state.Load()) == ChannelEstablished {
		switch {
		case t == TypeHello:
			return false, nil // a repeated HELLO is harmless; Open vSwitch ignores it too
		case frame[0] != Version || (t != TypeEchoRequest && t != TypeEchoReply):
			return true, nil
		}
	}
	var out channelOut
	c.mu.Lock()
	deliver, err = c.receiveLocked(frame, t, &out)
	c.mu.Unlock()
	if ferr := c.flush(&out); err == nil && ferr != nil {
		err = ferr
	}
	return deliver, err
}

func (c *Channel) receiveLocked(frame []byte, t Type, out *channelOut) (bool, error) {
	xid := binary.BigEndian.Uint32(frame[4:8])
	switch c.State() {
	case ChannelNew:
		return false, errors.New("openflow: channel: Receive before Start")
	case ChannelFailed:
		if c.err != nil {
			return false, c.err
		}
		return false, ErrChannelStopped
	case ChannelWaitHello:
		return false, c.receiveHello(frame, t, xid, out)
	case ChannelWaitFeatures:
		return false, c.receiveBeforeFeatures(frame, t, xid, out)
	}
	// Established: a version-0x01 ECHO_REQUEST or ECHO_REPLY.
	if t == TypeEchoRequest {
		out.send(&EchoReply{Header: Header{Xid: xid}, Data: frame[HeaderLen:]})
		return false, nil
	}
	if xid != 0 && xid == c.probeXid {
		c.probeXid = 0
		now := c.clk.Now().Sub(c.epoch)
		c.lastRecv.Store(int64(now))
		c.echoRTT.Store(int64(now - c.probedAt))
		// The next probe follows EchoInterval after this reply.
		c.armLocked(c.cfg.EchoInterval)
		return false, nil
	}
	return true, nil // someone else's echo (the owner's Request)
}

// receiveHello negotiates on the peer's first message.
func (c *Channel) receiveHello(frame []byte, t Type, xid uint32, out *channelOut) error {
	if t == TypeError && frame[0] == Version {
		// The peer refused us first (typically HELLO_FAILED): no answer.
		var e ErrorMsg
		reason := "peer sent an undecodable ERROR"
		if err := e.DecodeFromBytes(frame); err == nil {
			reason = fmt.Sprintf("peer sent ERROR %v %s: %q", e.Type, CodeString(e.Type, e.Code), printable(e.Data))
		}
		return c.failLocked(&HelloFailedError{PeerVersion: frame[0], Reason: reason}, out)
	}
	var err error
	if t != TypeHello {
		err = &HelloFailedError{PeerVersion: frame[0], Reason: fmt.Sprintf("expected HELLO, got message type %d", uint8(t))}
	} else {
		_, err = NegotiateHello(frame)
	}
	if err != nil {
		var hf *HelloFailedError
		errors.As(err, &hf)
		out.send(&ErrorMsg{
			Header: Header{Xid: xid},
			Type:   ErrorTypeHelloFailed,
			Code:   uint16(HelloFailedIncompatible),
			Data:   []byte("We support version 0x01 (OpenFlow 1.0) only; " + hf.Reason),
		})
		return c.failLocked(err, out)
	}
	if c.cfg.Role == RoleSwitch {
		c.establishLocked(out)
		return nil
	}
	c.state.Store(int32(ChannelWaitFeatures))
	out.send(&FeaturesRequest{Header: Header{Xid: c.nextXid()}})
	return nil
}

// receiveBeforeFeatures waits for the FEATURES_REPLY, answering echoes;
// other messages are dropped (no application is attached yet).
func (c *Channel) receiveBeforeFeatures(frame []byte, t Type, xid uint32, out *channelOut) error {
	if frame[0] != Version {
		out.send(NewErrorFor(frame, ErrorTypeBadRequest, uint16(BadRequestBadVersion)))
		return nil
	}
	switch t {
	case TypeFeaturesReply:
		if err := c.features.DecodeFromBytes(frame); err != nil {
			et, code := ErrorCodeFor(err)
			out.send(NewErrorFor(frame, et, code))
			return c.failLocked(fmt.Errorf("openflow: handshake: bad FEATURES_REPLY: %w", err), out)
		}
		out.send(&SetConfig{Header: Header{Xid: c.nextXid()}, Flags: c.cfg.ConfigFlags, MissSendLen: c.cfg.MissSendLen})
		c.establishLocked(out)
	case TypeEchoRequest:
		out.send(&EchoReply{Header: Header{Xid: xid}, Data: frame[HeaderLen:]})
	case TypeError:
		var em ErrorMsg
		if err := em.DecodeFromBytes(frame); err != nil {
			return c.failLocked(fmt.Errorf("openflow: handshake: undecodable ERROR from the switch: %w", err), out)
		}
		return c.failLocked(fmt.Errorf("openflow: handshake: switch refused it: %w", &em), out)
	}
	return nil
}

func (c *Channel) establishLocked(out *channelOut) {
	c.state.Store(int32(ChannelEstablished))
	out.established = true
	c.stopTimerLocked()
	c.lastRecv.Store(int64(c.clk.Now().Sub(c.epoch)))
	if c.cfg.EchoInterval > 0 {
		c.armLocked(c.cfg.EchoInterval)
	}
}

// failLocked moves to ChannelFailed with err (the first failure wins).
func (c *Channel) failLocked(err error, out *channelOut) error {
	if c.State() == ChannelFailed {
		return c.err
	}
	c.state.Store(int32(ChannelFailed))
	c.err = err
	c.stopTimerLocked()
	out.failed = err
	return err
}

func (c *Channel) failNow(err error) error {
	var out channelOut
	c.mu.Lock()
	err = c.failLocked(err, &out)
	c.mu.Unlock()
	_ = c.flush(&out)
	return err
}

// flush hands the step's messages to Out, then reports its events. A
// handshake message that cannot be sent fails the channel.
func (c *Channel) flush(out *channelOut) error {
	var sendErr error
	for i := range out.n {
		m := out.msgs[i]
		if err := c.cfg.Out.Send(m); err != nil && sendErr == nil {
			switch m.MsgType() {
			case TypeHello, TypeFeaturesRequest, TypeSetConfig:
				sendErr = fmt.Errorf("openflow: handshake: send %v: %w", m.MsgType(), err)
			}
		}
	}
	if sendErr != nil && out.failed == nil {
		c.mu.Lock()
		sendErr = c.failLocked(sendErr, out)
		c.mu.Unlock()
	}
	if out.established && out.failed == nil && c.cfg.OnEstablished != nil {
		e := Established{Version: Version}
		if c.cfg.Role == RoleController {
			e.Features = c.Features()
		}
		c.cfg.OnEstablished(e)
	}
	if out.failed != nil && c.cfg.OnFailed != nil {
		c.cfg.OnFailed(out.failed)
	}
	return sendErr
}

func (c *Channel) nextXid() uint32 {
	if c.cfg.NextXid != nil {
		return c.cfg.NextXid()
	}
	c.xid++
	if c.xid == 0 {
		c.xid = 1
	}
	return c.xid
}

// armLocked (re)starts the one timer of the channel; a generation number
// makes a callback that raced with Stop a no-op.
func (c *Channel) armLocked(d time.Duration) {
	c.stopTimerLocked()
	gen := c.timerGen
	c.timer = c.clk.AfterFunc(d, func() { c.onTimer(gen) })
}

func (c *Channel) stopTimerLocked() {
	c.timerGen++
	if c.timer != nil {
		c.timer.Stop()
		c.timer = nil
	}
}

// onTimer is the handshake timeout before establishment and Open
// vSwitch's inactivity probe after: after EchoInterval without anything
// from the peer, send an ECHO_REQUEST; if the peer then stays silent for
// EchoTimeout, fail with ErrPeerDead. Any sign of life counts, not just
// the echo reply.
func (c *Channel) onTimer(gen uint64) {
	var out channelOut
	c.mu.Lock()
	if gen != c.timerGen {
		c.mu.Unlock()
		return
	}
	c.timer = nil
	switch c.State() {
	case ChannelWaitHello, ChannelWaitFeatures:
		c.failLocked(ErrHandshakeTimeout, &out)
	case ChannelEstablished:
		c.keepaliveLocked(&out)
	}
	c.mu.Unlock()
	_ = c.flush(&out)
}

func (c *Channel) keepaliveLocked(out *channelOut) {
	interval, timeout := c.cfg.EchoInterval, c.cfg.EchoTimeout
	now := c.clk.Now().Sub(c.epoch)
	last := c.lastRecv.Load()
	idle := now - time.Duration(last)
	switch {
	case c.held.Load():
		c.armLocked(interval)
	case idle < interval:
		c.armLocked(interval - idle)
	case c.probedFor != last || c.probeXid == 0:
		c.probedFor, c.probedAt = last, now
		c.probeXid = c.nextXid()
		// A full queue means the peer is not reading; the timeout decides.
		out.send(&EchoRequest{Header: Header{Xid: c.probeXid}})
		c.armLocked(timeout)
	case now-c.probedAt >= timeout:
		c.failLocked(ErrPeerDead, out)
	default:
		c.armLocked(timeout - (now - c.probedAt))
	}
}

// helloElemVersionBitmap is OFPHET_VERSIONBITMAP (OpenFlow 1.3.1+).
const helloElemVersionBitmap = 1

// NegotiateHello decides the version to speak with the peer whose HELLO is
// frame (a whole message of type HELLO). OpenFlow negotiation takes the
// smaller of the two header versions, so any peer version ≥ 1 agrees on
// 1.0, unless the peer sent a version bitmap (OpenFlow 1.3.1+), which then
// rules: bit 1 must be set. The error is a *HelloFailedError when the
// peer offers no 1.0 or the HELLO is malformed: version 0, or an element
// list that does not parse (an element shorter than its 4-byte header or
// longer than the message, a bitmap whose length is not 4 + 4k, stray
// bytes shorter than an element header). Elements are padded to 8 bytes;
// the last one's padding may be missing. Unknown elements are skipped.
func NegotiateHello(frame []byte) (uint8, error) {
	v := frame[0]
	fail := func(format string, args ...any) (uint8, error) {
		return 0, &HelloFailedError{PeerVersion: v, Reason: fmt.Sprintf(format, args...)}
	}
	if v == 0 {
		return fail("peer offers only version 0x00")
	}
	var bitmap []byte // the bitmap's words, big-endian
	found := false
	for body := frame[HeaderLen:]; len(body) > 0; {
		if len(body) < 4 {
			return fail("malformed hello: %d stray bytes after the elements", len(body))
		}
		typ := binary.BigEndian.Uint16(body[0:2])
		n := int(binary.BigEndian.Uint16(body[2:4]))
		if n < 4 || n > len(body) {
			return fail("malformed hello: element type %d of length %d in %d bytes", typ, n, len(body))
		}
		if typ == helloElemVersionBitmap && !found {
			if (n-4)%4 != 0 {
				return fail("malformed hello: version bitmap of length %d", n)
			}
			bitmap, found = body[4:n], true
		}
		body = body[min((n+7)&^7, len(body)):]
	}
	if !found {
		return Version, nil
	}
	if len(bitmap) >= 4 && binary.BigEndian.Uint32(bitmap[0:4])&(1<<Version) != 0 {
		return Version, nil
	}
	return fail("peer's version bitmap %s excludes 0x01", formatBitmap(bitmap))
}

func formatBitmap(bm []byte) string {
	s := "{"
	for i := 0; i+4 <= len(bm); i += 4 {
		w := binary.BigEndian.Uint32(bm[i:])
		for bit := 0; bit < 32; bit++ {
			if w&(1<<bit) != 0 {
				if len(s) > 1 {
					s += ","
				}
				s += fmt.Sprintf("0x%02x", 8*i+bit)
			}
		}
	}
	return s + "}"
}
