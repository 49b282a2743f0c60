package controller

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/pseudocong/pseudocong/internal/clock"
	"github.com/pseudocong/pseudocong/openflow"
)

const (
	// readBufferSize holds the largest possible message (the length field
	// is 16 bits): after the handshake the reader reads in batches of up
	// to this (a larger buffer was tried: no fewer system calls per
	// message under cbench load, four times the memory per switch).
	readBufferSize = 1 << 16
	// handshakeBufferSize is the read buffer until the handshake completes
	// (it grows if a frame needs more), so that a flood of half-open
	// connections takes little memory.
	handshakeBufferSize = 512
	// flushThreshold forces a write in the middle of a long batch, which
	// bounds the output buffer.
	flushThreshold = 256 << 10
	// maxRetainedOut: a buffer that grew beyond this is dropped after the
	// flush instead of being kept for the connection's life.
	maxRetainedOut = 1 << 20
	// initialOutSize is the output buffer of a connected switch.
	initialOutSize = 16 << 10
)

// switchConn is the TCP shell's side of one switch: it frames the byte
// stream (openflow.FrameReader) for the Endpoint, which does the protocol
// (its openflow.Channel the handshake and keepalive), and is its
// Transport, encoding replies into out and writing them in batches: one
// write for everything a read's worth of messages caused.
//
// The full-size read and output buffers are allocated when the handshake
// completes: until then a connection costs its goroutine and a few small
// objects, so that a flood of half-open connections (up to MaxConns) takes
// little memory.
type switchConn struct {
	srv     *Server
	nc      net.Conn
	fr      *openflow.FrameReader
	log     *slog.Logger
	metrics *Metrics
	ep      *Endpoint
	clk     clock.Clock // the core's
	wall    bool        // clk is the wall clock: one reading serves both

	wmu      sync.Mutex
	out      []byte
	batching bool      // the reader will flush out when its batch ends
	writeDL  time.Time // the socket's write deadline
	werr     error     // first write error; the connection is dead after it
}

func newSwitchConn(s *Server, nc net.Conn) *switchConn {
	c := &switchConn{
		srv:     s,
		nc:      nc,
		log:     s.log.With("remote", nc.RemoteAddr().String()),
		metrics: s.cfg.Core.Metrics(),
	}
	c.clk = s.cfg.Core.clock
	_, c.wall = c.clk.(clock.Wall)
	c.fr = openflow.NewFrameReader(activityReader{c}, s.cfg.MaxMessageLen, handshakeBufferSize)
	c.ep = NewEndpoint(EndpointConfig{Core: s.cfg.Core, Transport: c, MissSendLen: s.cfg.MissSendLen, Logger: c.log,
		// The handshake is bounded by the socket's read deadline (and
		// counted as a handshake timeout); the channel runs the keepalive.
		HandshakeTimeout: -1, EchoInterval: s.cfg.EchoInterval,
		OnFailed: c.channelFailed,
	})
	return c
}

// clockNow is the core clock's reading, given the wall clock's.
func (c *switchConn) clockNow(wall time.Time) time.Time {
	if c.wall {
		return wall
	}
	return c.clk.Now()
}

// channelFailed closes the connection when the Endpoint's channel fails,
// after writing what is queued (the ERROR that says why): the reader then
// returns the channel's error.
func (c *switchConn) channelFailed(error) {
	c.wmu.Lock()
	_ = c.flushLocked()
	c.wmu.Unlock()
	_ = c.nc.Close()
}

// activityReader tells the keepalive about every read that returned data.
type activityReader struct{ c *switchConn }

func (a activityReader) Read(p []byte) (int, error) {
	n, err := a.c.nc.Read(p)
	if n > 0 {
		a.c.ep.Read(a.c.clockNow(time.Now()))
	}
	return n, err
}

// Send (Transport) encodes m into the output buffer. Inside the reader's
// batch the bytes wait for the batch's end; otherwise (another goroutine)
// they are written at once.
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
	now := time.Now()
	// Moving the deadline costs a runtime timer update: do it only when
	// less than 90 % of WriteTimeout is left, so a write blocked by a peer
	// that does not read is abandoned after 0.9 to 1 WriteTimeout.
	if wt := c.srv.cfg.WriteTimeout; c.writeDL.Sub(now) < wt-wt/10 {
		c.writeDL = now.Add(wt)
		_ = c.nc.SetWriteDeadline(c.writeDL)
	}
	_, err := c.nc.Write(c.out)
	c.ep.Written(c.clockNow(now))
	if cap(c.out) > maxRetainedOut {
		c.out = make([]byte, 0, initialOutSize)
	} else {
		c.out = c.out[:0]
	}
	if err != nil {
		c.werr = fmt.Errorf("write to switch: %w", err)
		_ = c.nc.Close() // stops the reader too
	}
	return c.werr
}

func (c *switchConn) writeErr() error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
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

// handshake feeds the Endpoint until the switch is connected, within
// HandshakeTimeout. Each step runs as a batch, so that a proactive app's
// rule push on connect leaves in as few writes as possible. A peer that
// cannot frame its first messages is not worth resynchronising with: any
// framing error ends the handshake.
func (c *switchConn) handshake() error {
	_ = c.nc.SetReadDeadline(time.Now().Add(c.srv.cfg.HandshakeTimeout))
	defer c.nc.SetReadDeadline(time.Time{})
	if err := c.ep.Start(); err != nil {
		return err
	}
	for !c.ep.Connected() {
		frame, err := c.fr.Next()
		if err != nil {
			var tl *openflow.FrameTooLongError
			if errors.As(err, &tl) {
				c.metrics.ProtocolError()
				c.ep.SendError(tl.Prefix, openflow.ErrorTypeBadRequest, uint16(openflow.BadRequestBadLen))
				return fmt.Errorf("framing: message length %d", tl.Length)
			}
			return c.readFailed(err)
		}
		c.beginBatch()
		err = c.ep.HandleFrame(frame)
		c.endBatch()
		if err != nil {
			return err
		}
	}
	c.fr.Grow(readBufferSize)
	c.wmu.Lock()
	if cap(c.out) < initialOutSize {
		c.out = append(make([]byte, 0, initialOutSize), c.out...)
	}
	c.wmu.Unlock()
	return nil
}

// readFailed turns a frame reader error into the connection's end: a
// broken header is answered (BAD_LEN) before hanging up; a read that
// failed because our side closed the socket reports why it was closed.
func (c *switchConn) readFailed(err error) error {
	var fe *openflow.FramingError
	switch {
	case errors.As(err, &fe):
		// The stream cannot be re-synchronised after this.
		c.metrics.ProtocolError()
		c.ep.SendError(fe.Header[:], openflow.ErrorTypeBadRequest, uint16(openflow.BadRequestBadLen))
		return fmt.Errorf("framing: message length %d < %d", binary.BigEndian.Uint16(fe.Header[2:4]), openflow.HeaderLen)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("switch closed the connection inside a message: %w", io.ErrUnexpectedEOF)
	case errors.Is(err, io.EOF):
		return io.EOF
	}
	if werr := c.writeErr(); werr != nil {
		return werr // the failed write closed the socket under the reader
	}
	if cerr := c.ep.Err(); cerr != nil {
		return cerr // the channel failed (dead peer) and closed the socket
	}
	return fmt.Errorf("read from switch: %w", err)
}

// serve reads and handles messages until the connection ends. The replies
// to everything one read brought are written together, before the next
// read that may block.
func (c *switchConn) serve() error {
	batching := false
	defer func() {
		if batching {
			c.endBatch()
		}
	}()
	for {
		if batching && !c.fr.Buffered() {
			c.endBatch() // flush before a read that may block
			batching = false
		}
		frame, err := c.fr.Next()
		if !batching {
			c.beginBatch()
			batching = true
		}
		if err != nil {
			var tl *openflow.FrameTooLongError
			if errors.As(err, &tl) {
				if err := c.ep.BadFrame(tl.Prefix, tl.Length); err != nil {
					return err
				}
				continue
			}
			return c.readFailed(err)
		}
		// The frame aliases the read buffer, valid until the next Next:
		// this is why App messages are borrowed.
		if err := c.ep.HandleFrame(frame); err != nil {
			return err
		}
	}
}
