package openflow

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// ReadMessage returns the next received message that is not consumed by
// the connection itself (ECHO traffic, HELLO, replies to Request). It
// blocks until one arrives; after the connection ends it returns the
// messages still buffered, then (nil, Err()).
func (c *Conn) ReadMessage() (Message, error) {
	if m, ok := <-c.inbox; ok {
		return m, nil
	}
	return nil, c.Err()
}

// readLoop frames, decodes and routes incoming messages until the socket
// fails. A frame that does not decode is answered with an OpenFlow ERROR
// and skipped; only a broken frame (header length < 8) or a read error
// ends the connection.
func (c *Conn) readLoop() {
	defer c.wg.Done()
	defer close(c.inbox)
	for {
		if c.replyBacklogFull() && !c.pauseForReplies() {
			return
		}
		frame, err := c.fr.next()
		if err != nil {
			if c.readFailed(err) {
				continue
			}
			return
		}
		c.stats.msgsIn.Add(1)
		c.stats.bytesIn.Add(uint64(len(frame)))
		// The channel consumes ECHO traffic and repeated HELLOs.
		deliver, err := c.ch.Receive(frame)
		if err != nil {
			return // OnFailed shut the connection down
		}
		if !deliver {
			c.fr.releaseLast()
			continue
		}
		m, err := Unmarshal(frame)
		if err != nil {
			c.rejectFrame(frame, err) // copies what it keeps
			c.fr.releaseLast()
			continue
		}
		if !c.route(m, frame) {
			return
		}
	}
}

// pauseForReplies stops reading while the peer does not read its replies
// (ReplyBacklog): TCP then pushes back on it, and what it already sent
// stays unread. It reports false once the connection is closing.
func (c *Conn) pauseForReplies() bool {
	c.stats.replyPauses.Add(1)
	c.hold(true)
	defer c.hold(false)
	return c.waitReplyRoom(context.Background()) == nil
}

// readFailed handles a frame reader error; it reports whether reading can
// go on.
func (c *Conn) readFailed(err error) bool {
	var tooLong *FrameTooLongError
	var framing *FramingError
	switch {
	case errors.As(err, &tooLong):
		c.stats.msgsIn.Add(1)
		c.rejectFrame(tooLong.Prefix, err)
		return true
	case errors.As(err, &framing):
		// The stream cannot be resynchronised: say why, then hang up.
		c.stats.msgsIn.Add(1)
		c.rejectFrame(framing.Header[:], err)
		c.shutdown(err)
	case errors.Is(err, io.EOF):
		c.shutdown(fmt.Errorf("openflow: peer closed the connection: %w", err))
	case errors.Is(err, io.ErrUnexpectedEOF):
		c.shutdown(fmt.Errorf("openflow: peer closed the connection inside a message: %w", err))
	default:
		// Includes net.ErrClosed when our writer closed the socket after a
		// shutdown; shutdown then keeps the original cause.
		c.shutdown(fmt.Errorf("openflow: read: %w", err))
	}
	return false
}

// rejectFrame answers a frame that could not be used with the matching
// OpenFlow ERROR. An ERROR is never answered with an ERROR, so two
// confused peers cannot loop.
func (c *Conn) rejectFrame(frame []byte, err error) {
	c.stats.decodeErrors.Add(1)
	if ok, suppressed := c.logRate.Allow(); ok {
		c.log.Warn("openflow: bad message from peer", "err", err, "suppressed", suppressed)
	}
	if len(frame) >= 2 && Type(frame[1]) == TypeError {
		return
	}
	var t ErrorType
	var code uint16
	var framing *FramingError
	var tooLong *FrameTooLongError
	if errors.As(err, &framing) || errors.As(err, &tooLong) {
		t, code = ErrorTypeBadRequest, uint16(BadRequestBadLen)
	} else {
		t, code = ErrorCodeFor(err)
	}
	c.sendAnswer(NewErrorFor(frame, t, code))
}

// route consumes what the connection handles itself and queues the rest
// for the application. It reports false once the connection is closing.
func (c *Conn) route(m Message, frame []byte) bool {
	if c.npending.Load() > 0 && isReplyType(m.MsgType()) && c.completeRequest(m, frame) {
		return true
	}
	if m.MsgType() == TypeEchoReply {
		// Neither the keepalive's nor a Request's: nobody wants it.
		c.fr.releaseLast()
		return true
	}
	select {
	case c.inbox <- m:
		return true
	default:
	}
	// The application is behind: wait for it (TCP then pushes back on the
	// peer) without letting the keepalive mistake that for a dead peer.
	c.hold(true)
	defer c.hold(false)
	select {
	case c.inbox <- m:
		return true
	case <-c.closing:
		return false
	}
}

// isReplyType reports whether messages of type t answer a request by xid.
func isReplyType(t Type) bool {
	switch t {
	case TypeError, TypeEchoReply, TypeFeaturesReply, TypeGetConfigReply,
		TypeStatsReply, TypeBarrierReply, TypeQueueGetConfigReply, TypeVendor:
		return true
	}
	return false
}
