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
	// initialOutSize is the output buffer of a connected switch.
	initialOutSize = 16 << 10
)

// switchConn is the TCP shell's side of one switch: it frames the byte
// stream for the Endpoint (which does the protocol) and is its Transport,
// encoding replies into out and writing them in batches.
//
// The read buffer and the full-size output buffer are allocated when the
// handshake completes: until then a connection costs its goroutine and a
// few small objects, so that a flood of half-open connections (up to
// MaxConns) takes little memory.
type switchConn struct {
	srv     *Server
	nc      net.Conn
	br      *bufio.Reader // nil until the handshake completes
	log     *slog.Logger
	metrics *Metrics
	ep      *Endpoint
	xid     atomic.Uint32 // keepalive echo xids
	reads   atomic.Uint64 // read calls that returned data, for the keepalive

	wmu      sync.Mutex
	out      []byte
	batching bool  // the reader will flush out when its batch ends
	werr     error // first write error; the connection is dead after it
}

func newSwitchConn(s *Server, nc net.Conn) *switchConn {
	c := &switchConn{
		srv:     s,
		nc:      nc,
		log:     s.log.With("remote", nc.RemoteAddr().String()),
		metrics: s.cfg.Core.Metrics(),
	}
	c.ep = NewEndpoint(EndpointConfig{Core: s.cfg.Core, Transport: c, MissSendLen: s.cfg.MissSendLen, Logger: c.log})
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

func (c *switchConn) nextXid() uint32 {
	for {
		if x := c.xid.Add(1); x != 0 {
			return x
		}
	}
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
	_ = c.nc.SetWriteDeadline(time.Now().Add(c.srv.cfg.WriteTimeout))
	_, err := c.nc.Write(c.out)
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
// rule push on connect leaves in as few writes as possible.
func (c *switchConn) handshake() error {
	_ = c.nc.SetReadDeadline(time.Now().Add(c.srv.cfg.HandshakeTimeout))
	defer c.nc.SetReadDeadline(time.Time{})
	if err := c.ep.Start(); err != nil {
		return err
	}
	for !c.ep.Connected() {
		frame, err := c.readFrame()
		if err != nil {
			return err
		}
		c.beginBatch()
		err = c.ep.HandleFrame(frame)
		c.endBatch()
		if err != nil {
			return err
		}
	}
	c.br = bufio.NewReaderSize(activityReader{c}, readBufferSize)
	c.wmu.Lock()
	if cap(c.out) < initialOutSize {
		c.out = append(make([]byte, 0, initialOutSize), c.out...)
	}
	c.wmu.Unlock()
	return nil
}

// readFrame reads one whole message into a fresh slice (handshake only),
// straight from the socket: it reads exactly the frame, so whatever the
// switch sends after the handshake is left for the read buffer that serve
// uses. Over-long and under-long frames are errors here: a peer that
// cannot frame its first messages is not worth resynchronising with.
func (c *switchConn) readFrame() ([]byte, error) {
	var hdr [openflow.HeaderLen]byte
	if err := readFull(c.nc, hdr[:]); err != nil {
		return nil, err
	}
	n := int(binary.BigEndian.Uint16(hdr[2:4]))
	if n < openflow.HeaderLen || n > c.srv.cfg.MaxMessageLen {
		c.metrics.ProtocolError()
		c.ep.SendError(hdr[:], openflow.ErrorTypeBadRequest, uint16(openflow.BadRequestBadLen))
		return nil, fmt.Errorf("framing: message length %d", n)
	}
	frame := make([]byte, n)
	copy(frame, hdr[:])
	if err := readFull(c.nc, frame[openflow.HeaderLen:]); err != nil {
		if errors.Is(err, io.EOF) {
			err = readErr(err, 1) // the header was read: the message is cut short
		}
		return nil, err
	}
	return frame, nil
}

// readFull is io.ReadFull with readErr's errors.
func readFull(r io.Reader, b []byte) error {
	n, err := io.ReadFull(r, b)
	if errors.Is(err, io.ErrUnexpectedEOF) {
		err = io.EOF
	}
	if err != nil {
		return readErr(err, n)
	}
	return nil
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
			if werr := c.writeErr(); werr != nil {
				return werr // the failed write closed the socket under the reader
			}
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
			c.ep.SendError(hdr, openflow.ErrorTypeBadRequest, uint16(openflow.BadRequestBadLen))
			return fmt.Errorf("framing: message length %d < %d", n, openflow.HeaderLen)
		}
		if n > c.srv.cfg.MaxMessageLen {
			prefix, _ := c.br.Peek(min(n, 64))
			prefix = append([]byte(nil), prefix...)
			if _, err := c.br.Discard(n); err != nil {
				return readErr(err, 1)
			}
			if err := c.ep.BadFrame(prefix, n); err != nil {
				return err
			}
			continue
		}
		frame, err := c.br.Peek(n)
		if err != nil {
			return readErr(err, len(frame))
		}
		// The frame aliases the read buffer, valid until Discard: this is
		// why App messages are borrowed.
		err = c.ep.HandleFrame(frame)
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
			if err := c.Send(&openflow.EchoRequest{Header: openflow.Header{Xid: c.nextXid() | 1<<31}}); err == nil {
				c.metrics.MessageOut(openflow.TypeEchoRequest)
			}
			continue
		}
		c.log.Warn("switch silent: no answer to echo request; disconnecting", "silence", time.Duration(idle)*interval)
		_ = c.nc.Close()
		return
	}
}
