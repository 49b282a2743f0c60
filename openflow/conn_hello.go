package openflow

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"
)

// HelloFailedError is returned by Handshake when the peer shares no
// version with us (we then sent it HELLO_FAILED/INCOMPATIBLE and closed)
// or when the peer itself refused the handshake.
type HelloFailedError struct {
	PeerVersion uint8
	Reason      string
}

func (e *HelloFailedError) Error() string {
	return fmt.Sprintf("openflow: hello failed (peer version 0x%02x): %s", e.PeerVersion, e.Reason)
}

// Handshake runs the connection's Channel (see ConnConfig.Role): it sends
// our HELLO, reads the peer's and negotiates OpenFlow 1.0 (for
// RoleController also FEATURES_REQUEST/REPLY and SET_CONFIG; Features then
// holds the reply), then starts the connection's goroutines. It is bounded
// by ctx and by HandshakeTimeout. A peer that offers no 1.0 (by its header
// version or, for OpenFlow 1.3+ peers, its version bitmap) or sends a
// malformed HELLO gets ERROR HELLO_FAILED/INCOMPATIBLE with an
// explanation, and the connection is closed. On any failure the
// connection is closed and Err says why.
func (c *Conn) Handshake(ctx context.Context) error {
	if !c.handshaking.CompareAndSwap(false, true) {
		return errors.New("openflow: Handshake called twice")
	}
	err := c.handshake(ctx)
	if err != nil {
		c.shutdown(err)
		return err
	}
	if !c.start() {
		return c.sendErr()
	}
	return nil
}

func (c *Conn) handshake(ctx context.Context) error {
	deadline := time.Now().Add(c.cfg.HandshakeTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = c.nc.SetDeadline(deadline)
	// Cancelling ctx interrupts the blocking I/O below.
	stop := context.AfterFunc(ctx, func() { _ = c.nc.SetDeadline(time.Unix(1, 0)) })
	defer stop()

	if err := c.ch.Start(); err != nil {
		return err
	}
	// Write our HELLO concurrently with reading theirs: on a synchronous
	// transport (net.Pipe) both sides writing first would deadlock.
	hello := c.takeHandshakeOut()
	wrote := make(chan error, 1)
	go func() {
		_, err := c.nc.Write(hello)
		wrote <- err
	}()
	helloWritten := false
	waitHello := func() error {
		if helloWritten {
			return nil
		}
		helloWritten = true
		if werr := <-wrote; werr != nil {
			return fmt.Errorf("openflow: handshake: send hello: %w", ctxErr(ctx, werr))
		}
		return nil
	}
	for !c.ch.Established() {
		frame, rerr := c.fr.next()
		if rerr != nil {
			rerr = fmt.Errorf("openflow: handshake: read from peer: %w", ctxErr(ctx, rerr))
			_ = c.nc.SetDeadline(time.Unix(1, 0)) // release the writer
			_ = waitHello()
			return rerr
		}
		c.stats.msgsIn.Add(1)
		c.stats.bytesIn.Add(uint64(len(frame)))
		_, herr := c.ch.Receive(frame) // nothing is delivered before it is established
		c.fr.releaseLast()
		if werr := waitHello(); werr != nil {
			return werr
		}
		// The channel's answers (FEATURES_REQUEST, SET_CONFIG, ECHO_REPLY,
		// or the ERROR that explains a failure, best effort).
		if out := c.takeHandshakeOut(); len(out) > 0 {
			if herr != nil {
				_ = c.nc.SetWriteDeadline(time.Now().Add(c.cfg.CloseTimeout))
			}
			if _, werr := c.nc.Write(out); werr != nil && herr == nil {
				herr = fmt.Errorf("openflow: handshake: write: %w", ctxErr(ctx, werr))
			}
		}
		if herr != nil {
			return herr
		}
	}
	if werr := waitHello(); werr != nil {
		return werr
	}
	if !stop() && ctx.Err() != nil {
		return fmt.Errorf("openflow: handshake: %w", ctx.Err())
	}
	_ = c.nc.SetDeadline(time.Time{})
	return nil
}

// takeHandshakeOut returns and clears what the channel sent while the
// writer was not running yet.
func (c *Conn) takeHandshakeOut() []byte {
	c.hsMu.Lock()
	defer c.hsMu.Unlock()
	b := c.hsOut
	c.hsOut = nil
	return b
}

// connSender is the Conn's Sender for its Channel: during the handshake
// the messages are collected for the handshake's own writes; after it they
// go through the write queue, answers (ECHO_REPLY, ERROR) as answers and
// the keepalive probe as a control message (dropped and counted when the
// queue is full).
type connSender struct{ c *Conn }

func (s connSender) Send(m Message) error {
	c := s.c
	c.hsMu.Lock()
	if !c.running {
		defer c.hsMu.Unlock()
		b, err := m.AppendBinary(c.hsOut)
		if err != nil {
			return err
		}
		c.hsOut = b
		return nil
	}
	c.hsMu.Unlock()
	switch m.MsgType() {
	case TypeEchoReply, TypeError:
		c.sendAnswer(m)
	default:
		c.sendControl(m)
	}
	return nil
}

// Features is the switch's FEATURES_REPLY, for a Conn of RoleController
// after Handshake (zero otherwise).
func (c *Conn) Features() *FeaturesReply { return c.ch.Features() }

// printable keeps an error's ASCII explanation short and safe for logs.
func printable(b []byte) string {
	if len(b) > 128 {
		b = b[:128]
	}
	out := make([]byte, 0, len(b))
	for _, ch := range b {
		if ch >= 0x20 && ch < 0x7f {
			out = append(out, ch)
		} else {
			out = append(out, '.')
		}
	}
	return string(out)
}

// ctxErr adds the context's error to the I/O error it caused, so callers
// can test errors.Is(err, context.DeadlineExceeded). The socket deadline
// may fire a moment before the context's own timer, hence the clock check.
func ctxErr(ctx context.Context, err error) error {
	if ce := ctx.Err(); ce != nil {
		return errors.Join(ce, err)
	}
	if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) && errors.Is(err, os.ErrDeadlineExceeded) {
		return errors.Join(context.DeadlineExceeded, err)
	}
	return err
}
