package controller

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pseudocong/pseudocong/openflow"
)

const (
	// readBufferSize holds the largest possible message (the length field
	// is 16 bits), so Peek can always return a whole frame.
	readBufferSize = 1 << 16
	// flushThreshold forces a write in the middle of a long batch, which
	// bounds the output buffer.
	flushThreshold = 256 << 10
	// maxRetainedOut: a buffer that grew beyond this is dropped after the
	// flush instead of being kept for the connection's life.
	maxRetainedOut = 1 << 20
	// maxConsecutiveBadFrames: a peer that sends this many undecodable
	// messages in a row is not a switch; close instead of answering on.
	maxConsecutiveBadFrames = 64
)

// switchConn is the TCP shell's Switch: one connection, read and handled on
// its own goroutine, replies encoded into out and written in batches.
type switchConn struct {
	srv      *Server
	nc       net.Conn
	br       *bufio.Reader
	log      *slog.Logger
	metrics  *Metrics
	features openflow.FeaturesReply
	session  *Session
	xid      atomic.Uint32
	reads    atomic.Uint64 // read calls that returned data, for the keepalive

	wmu      sync.Mutex
	out      []byte
	batching bool  // the reader will flush out when its batch ends
	werr     error // first write error; the connection is dead after it

	pin      openflow.PacketIn // reused for every PACKET_IN (hot path)
	badRun   int               // consecutive undecodable frames
	lastWarn time.Time
	quiet    int // warnings suppressed since lastWarn
}

func newSwitchConn(s *Server, nc net.Conn) *switchConn {
	c := &switchConn{
		srv:     s,
		nc:      nc,
		log:     s.log.With("remote", nc.RemoteAddr().String()),
		metrics: s.cfg.Core.Metrics(),
		out:     make([]byte, 0, 16<<10),
	}
	c.br = bufio.NewReaderSize(activityReader{c}, readBufferSize)
	return c
}

// activityReader counts reads for the keepalive without touching the clock.
type activityReader struct{ c *switchConn }

func (a activityReader) Read(p []byte) (int, error) {
	n, err := a.c.nc.Read(p)
	if n > 0 {
		a.c.reads.Add(1)
	}
	return n, err
}

func (c *switchConn) DPID() uint64                      { return c.features.DatapathID }
func (c *switchConn) Features() *openflow.FeaturesReply { return &c.features }

func (c *switchConn) nextXid() uint32 {
	for {
		if x := c.xid.Add(1); x != 0 {
			return x
		}
	}
}

// Send encodes m into the output buffer. Inside the reader's batch the
// bytes wait for the batch's end; otherwise (another goroutine, the
// handshake) they are written at once.
func (c *switchConn) Send(m openflow.Message) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.werr != nil {
		return c.werr
	}
	n := len(c.out)
	out, err := m.AppendBinary(c.out)
	if err != nil {
		c.out = out[:n]
		return fmt.Errorf("encode %v for switch: %w", m.MsgType(), err)
	}
	c.out = out
	if !c.batching || len(c.out) >= flushThreshold {
		return c.flushLocked()
	}
	return nil
}

func (c *switchConn) flushLocked() error {
	if len(c.out) == 0 || c.werr != nil {
		return c.werr
	}
	_ = c.nc.SetWriteDeadline(time.Now().Add(c.srv.cfg.WriteTimeout))
	_, err := c.nc.Write(c.out)
	if cap(c.out) > maxRetainedOut {
		c.out = make([]byte, 0, 16<<10)
	} else {
		c.out = c.out[:0]
	}
	if err != nil {
		c.werr = fmt.Errorf("write to switch: %w", err)
		_ = c.nc.Close() // stops the reader too
	}
	return c.werr
}

func (c *switchConn) beginBatch() {
	c.wmu.Lock()
	c.batching = true
	c.wmu.Unlock()
}

func (c *switchConn) endBatch() {
	c.wmu.Lock()
	c.batching = false
	_ = c.flushLocked()
	c.wmu.Unlock()
}

// sendError answers a bad message (or the start of one) with an OpenFlow
// ERROR carrying its first 64 bytes.
func (c *switchConn) sendError(req []byte, t openflow.ErrorType, code uint16) {
	if err := c.Send(openflow.NewErrorFor(req, t, code)); err == nil {
		c.metrics.MessageOut(openflow.TypeError)
	}
}

// warn logs a misbehaving peer at most once per second.
func (c *switchConn) warn(msg string, args ...any) {
	now := time.Now()
	if now.Sub(c.lastWarn) < time.Second {
		c.quiet++
		return
	}
	if c.quiet > 0 {
		args = append(args, "suppressed", c.quiet)
	}
	c.lastWarn, c.quiet = now, 0
	c.log.Warn(msg, args...)
}

// frameBuffered reports whether a whole message is already in the read
// buffer, i.e. whether handling it will not block.
func (c *switchConn) frameBuffered() bool {
	n := c.br.Buffered()
	if n < openflow.HeaderLen {
		return false
	}
	hdr, _ := c.br.Peek(openflow.HeaderLen)
	return n >= int(binary.BigEndian.Uint16(hdr[2:4]))
}

// serve reads and handles messages until the connection ends.
func (c *switchConn) serve() error {
	batching := false
	defer func() {
		if batching {
			c.endBatch()
		}
	}()
	for {
		if batching && !c.frameBuffered() {
			c.endBatch() // flush before a read that may block
			batching = false
		}
		hdr, err := c.br.Peek(openflow.HeaderLen)
		if err != nil {
			return readErr(err, len(hdr))
		}
		if !batching {
			c.beginBatch()
			batching = true
		}
		n := int(binary.BigEndian.Uint16(hdr[2:4]))
		if n < openflow.HeaderLen {
			// The stream cannot be re-synchronised after this.
			c.metrics.ProtocolError()
			c.sendError(hdr, openflow.ErrorTypeBadRequest, uint16(openflow.BadRequestBadLen))
			return fmt.Errorf("framing: message length %d < %d", n, openflow.HeaderLen)
		}
		if n > c.srv.cfg.MaxMessageLen {
			prefix, _ := c.br.Peek(min(n, 64))
			prefix = append([]byte(nil), prefix...)
			if _, err := c.br.Discard(n); err != nil {
				return readErr(err, 1)
			}
			if err := c.badFrame(prefix, openflow.ErrorTypeBadRequest, uint16(openflow.BadRequestBadLen),
				fmt.Errorf("message length %d above limit %d", n, c.srv.cfg.MaxMessageLen)); err != nil {
				return err
			}
			continue
		}
		frame, err := c.br.Peek(n)
		if err != nil {
			return readErr(err, len(frame))
		}
		err = c.handleFrame(frame)
		_, _ = c.br.Discard(n)
		if err != nil {
			return err
		}
	}
}

// readErr distinguishes a clean close from a message cut short.
func readErr(err error, got int) error {
	if errors.Is(err, io.EOF) && got > 0 {
		return fmt.Errorf("switch closed the connection inside a message: %w", io.ErrUnexpectedEOF)
	}
	if errors.Is(err, io.EOF) {
		return io.EOF
	}
	return fmt.Errorf("read from switch: %w", err)
}

// handleFrame decodes one whole message and hands it to the session. The
// frame aliases the read buffer: it is valid only until the next read, which
// is why App messages are borrowed.
func (c *switchConn) handleFrame(frame []byte) error {
	t := openflow.Type(frame[1])
	if frame[0] != openflow.Version {
		if t == openflow.TypeHello {
			return nil // a repeated HELLO is harmless
		}
		return c.badFrame(frame, openflow.ErrorTypeBadRequest, uint16(openflow.BadRequestBadVersion),
			&openflow.VersionError{Got: frame[0]})
	}
	var m openflow.Message
	if t == openflow.TypePacketIn {
		// Hot path: decode into the reused struct, no allocation.
		if err := c.pin.DecodeFromBytes(frame); err != nil {
			et, code := openflow.ErrorCodeFor(err)
			return c.badFrame(frame, et, code, err)
		}
		m = &c.pin
	} else {
		var err error
		if m, err = openflow.Unmarshal(frame); err != nil {
			if t == openflow.TypeError {
				// Never answer an ERROR with an ERROR: two broken peers
				// would ping-pong forever.
				c.metrics.ProtocolError()
				c.warn("undecodable ERROR from switch", "err", err)
				return nil
			}
			et, code := openflow.ErrorCodeFor(err)
			return c.badFrame(frame, et, code, err)
		}
	}
	c.badRun = 0
	c.session.Handle(m)
	return nil
}

// badFrame answers an undecodable message with an ERROR, and gives up on a
// peer that sends nothing else.
func (c *switchConn) badFrame(frame []byte, t openflow.ErrorType, code uint16, cause error) error {
	c.metrics.ProtocolError()
	c.sendError(frame, t, code)
	c.warn("bad message from switch", "type", openflow.Type(frame[1]).String(), "len", len(frame), "err", cause)
	c.badRun++
	if c.badRun >= maxConsecutiveBadFrames {
		return fmt.Errorf("%d undecodable messages in a row (last: %w)", c.badRun, cause)
	}
	return nil
}

// keepalive sends an ECHO_REQUEST after EchoInterval of silence and closes
// the connection after another EchoInterval without any message.
func (c *switchConn) keepalive(done <-chan struct{}) {
	interval := c.srv.cfg.EchoInterval
	tick := time.NewTicker(interval)
	defer tick.Stop()
	last, idle := c.reads.Load(), 0
	for {
		select {
		case <-done:
			return
		case <-tick.C:
		}
		if now := c.reads.Load(); now != last {
			last, idle = now, 0
			continue
		}
		idle++
		if idle == 1 {
			if err := c.Send(&openflow.EchoRequest{Header: openflow.Header{Xid: c.nextXid()}}); err == nil {
				c.metrics.MessageOut(openflow.TypeEchoRequest)
			}
			continue
		}
		c.log.Warn("switch silent: no answer to echo request; disconnecting", "silence", time.Duration(idle)*interval)
		_ = c.nc.Close()
		return
	}
}
