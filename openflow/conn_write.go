package openflow

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"
)

// Send queues m for writing and returns once it is queued (not written).
// A zero xid is replaced by a fresh one, in m itself. When the write queue
// is full, Send blocks until there is room or the connection closes: this
// is the back-pressure that keeps a slow peer from growing our memory.
//
// m is encoded on the caller's goroutine, straight into the write buffer,
// so m may be reused as soon as Send returns.
func (c *Conn) Send(m Message) error {
	return c.SendContext(context.Background(), m)
}

// SendContext is Send with a bound on the wait for queue room.
func (c *Conn) SendContext(ctx context.Context, m Message) error {
	return c.sendMsg(ctx, m, admitWait, true, false)
}

// SendNonBlocking is Send that returns ErrQueueFull instead of waiting.
func (c *Conn) SendNonBlocking(m Message) error {
	return c.sendMsg(context.Background(), m, admitIfRoom, true, false)
}

// SendReply queues a reply to the peer's request without waiting. Unlike
// Send it keeps m's xid, even 0 (ovs-ofctl sends its echo request with xid
// 0 and rejects a reply with any other). With ConnConfig.ReplyBacklog it
// is never refused for lack of room, only once the connection is closing
// (ErrClosed), so a multipart reply goes out whole; the backlog it builds
// pauses the reader instead, and the caller should WaitReplyRoom before
// handling the next request. Without ReplyBacklog it is refused with
// ErrQueueFull like SendNonBlocking.
func (c *Conn) SendReply(m Message) error {
	if c.cfg.ReplyBacklog > 0 {
		return c.sendMsg(context.Background(), m, admitAlways, false, true)
	}
	return c.sendMsg(context.Background(), m, admitIfRoom, false, false)
}

// WaitReplyRoom blocks while the replies queued or being written reach
// ConnConfig.ReplyBacklog, that is while the peer is not reading them. A
// server calls it before it handles the peer's next request, so a peer
// that does not read gets nothing more queued for it. It returns nil at
// once when there is room or ReplyBacklog is off, ctx's error when ctx
// ends first, and ErrClosed (wrapped) once the connection is closing.
func (c *Conn) WaitReplyRoom(ctx context.Context) error {
	if !c.replyBacklogFull() {
		return nil
	}
	return c.waitReplyRoom(ctx)
}

// SendRaw queues one pre-encoded OpenFlow 1.0 message (header included)
// and blocks like Send when the queue is full. b is copied; a zero xid is
// replaced by a fresh one in the copy.
func (c *Conn) SendRaw(b []byte) error {
	return c.sendRaw(context.Background(), b, admitWait)
}

// SendRawNonBlocking is SendRaw that returns ErrQueueFull instead of
// waiting.
func (c *Conn) SendRawNonBlocking(b []byte) error {
	return c.sendRaw(context.Background(), b, admitIfRoom)
}

// admit says what a send does when the write queue is full.
type admit uint8

const (
	admitWait   admit = iota // wait for room (Send)
	admitIfRoom              // refuse with ErrQueueFull (SendNonBlocking)
	admitAlways              // queue past the limits (replies under ReplyBacklog)
)

// sendMsg queues m; assignXid replaces a zero xid (requests), while
// replies keep the xid of what they answer, even 0. reply counts m in the
// reply backlog.
func (c *Conn) sendMsg(ctx context.Context, m Message, mode admit, assignXid, reply bool) error {
	if assignXid && m.GetXid() == 0 {
		m.SetXid(c.NextXid())
	}
	if err := c.lockForAppend(ctx, m.Len(), mode); err != nil {
		return fmt.Errorf("openflow: send %v xid %d: %w", m.MsgType(), m.GetXid(), err)
	}
	start := len(c.wbuf)
	b, err := m.AppendBinary(c.wbuf)
	if err != nil {
		c.wbuf = b[:start]
		c.wmu.Unlock()
		return fmt.Errorf("openflow: send %v xid %d: encode: %w", m.MsgType(), m.GetXid(), err)
	}
	c.wbuf = b
	c.commitAppend(start, reply)
	return nil
}

func (c *Conn) sendRaw(ctx context.Context, b []byte, mode admit) error {
	h, err := DecodeHeader(b)
	if err != nil {
		return fmt.Errorf("openflow: send raw: %w", err)
	}
	if h.Version != Version {
		return fmt.Errorf("openflow: send raw %v: %w", h.Type, &VersionError{Got: h.Version})
	}
	if int(h.Length) != len(b) {
		return fmt.Errorf("openflow: send raw %v: %w", h.Type, &LengthError{What: "raw message vs header length", Want: int(h.Length), Got: len(b)})
	}
	if err := c.lockForAppend(ctx, len(b), mode); err != nil {
		return fmt.Errorf("openflow: send raw %v xid %d: %w", h.Type, h.Xid, err)
	}
	start := len(c.wbuf)
	c.wbuf = append(c.wbuf, b...)
	if h.Xid == 0 {
		binary.BigEndian.PutUint32(c.wbuf[start+4:], c.NextXid())
	}
	c.commitAppend(start, false)
	return nil
}

// sendAnswer queues an automatic answer (ECHO_REPLY, ERROR) from the
// reader goroutine, which must never block on the write queue (it would
// stop reading, and with it the replies that could drain the queue). With
// ReplyBacklog the answer is a reply like any other: always queued, and
// the reader pauses before its next message while the peer does not read.
// Without, a full queue drops the answer and counts it.
func (c *Conn) sendAnswer(m Message) {
	if c.cfg.ReplyBacklog > 0 {
		c.controlSent(m, c.sendMsg(context.Background(), m, admitAlways, false, true))
		return
	}
	c.controlSent(m, c.sendMsg(context.Background(), m, admitIfRoom, false, false))
}

// sendControl queues a message of the connection's own (the keepalive
// probe); a full queue drops it and counts it.
func (c *Conn) sendControl(m Message) {
	c.controlSent(m, c.sendMsg(context.Background(), m, admitIfRoom, false, false))
}

// controlSent counts and reports a control message that could not be
// queued.
func (c *Conn) controlSent(m Message, err error) {
	if err == nil {
		return
	}
	c.stats.controlDropped.Add(1)
	if c.cfg.OnControlDrop != nil {
		c.cfg.OnControlDrop(m.MsgType(), err)
	}
}

// lockForAppend takes wmu once the queue has room for need more bytes and
// one more message (waiting for it or not, by mode). On success wmu is
// held and the caller must append to wbuf and call commitAppend.
func (c *Conn) lockForAppend(ctx context.Context, need int, mode admit) error {
	c.wmu.Lock()
	var stop func() bool
	counted := false
	for {
		if c.wclosed {
			c.wmu.Unlock()
			if stop != nil {
				stop()
			}
			return c.sendErr()
		}
		if mode == admitAlways || c.wcount == 0 || (c.wcount < c.cfg.WriteQueue && len(c.wbuf)+need <= c.cfg.WriteQueueBytes) {
			if stop != nil {
				stop()
			}
			return nil
		}
		if !counted {
			c.stats.queueFull.Add(1)
			counted = true
		}
		if mode == admitIfRoom {
			c.wmu.Unlock()
			return ErrQueueFull
		}
		if err := ctx.Err(); err != nil {
			c.wmu.Unlock()
			if stop != nil {
				stop()
			}
			return err
		}
		if stop == nil && ctx.Done() != nil {
			// sync.Cond cannot select on a context; wake the waiters
			// when it is cancelled instead.
			stop = context.AfterFunc(ctx, func() {
				c.wmu.Lock()
				c.notFull.Broadcast()
				c.wmu.Unlock()
			})
		}
		c.notFull.Wait()
	}
}

// commitAppend accounts for the message just appended at offset start and
// releases wmu. reply counts it in the reply backlog.
func (c *Conn) commitAppend(start int, reply bool) {
	c.wcount++
	c.stats.msgsOut.Add(1)
	if reply && c.cfg.ReplyBacklog > 0 {
		n := len(c.wbuf) - start
		c.replyQueued += n
		c.replyPending.Add(int64(n))
	}
	if start == 0 {
		c.notEmpty.Signal()
	}
	c.wmu.Unlock()
}

// replyBacklogFull reports whether the reader must pause (ReplyBacklog).
func (c *Conn) replyBacklogFull() bool {
	return c.cfg.ReplyBacklog > 0 && c.replyPending.Load() >= int64(c.cfg.ReplyBacklog)
}

// waitReplyRoom waits until the reply backlog is below ReplyBacklog; it
// fails once the connection is closing or ctx ends.
func (c *Conn) waitReplyRoom(ctx context.Context) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	var stop func() bool
	defer func() {
		if stop != nil {
			stop()
		}
	}()
	for {
		if c.wclosed {
			return c.sendErr()
		}
		if !c.replyBacklogFull() {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if stop == nil && ctx.Done() != nil {
			stop = context.AfterFunc(ctx, func() {
				c.wmu.Lock()
				c.replyRoom.Broadcast()
				c.wmu.Unlock()
			})
		}
		c.replyRoom.Wait()
	}
}

// sendErr is what a send on a closed queue reports.
func (c *Conn) sendErr() error {
	if err := c.Err(); err != nil && err != ErrClosed {
		return fmt.Errorf("%w: %w", ErrClosed, err)
	}
	return ErrClosed
}

// writeLoop drains the queue: it takes everything queued so far and writes
// it with one call, so that messages queued while a write is in flight go
// out together in the next one. It closes the socket when the queue is
// closed and empty, or on a write error.
func (c *Conn) writeLoop() {
	defer c.wg.Done()
	defer c.nc.Close()
	var spare []byte
	for {
		c.wmu.Lock()
		for len(c.wbuf) == 0 && !c.wclosed {
			c.notEmpty.Wait()
		}
		if len(c.wbuf) == 0 {
			c.wmu.Unlock()
			return
		}
		batch := c.wbuf
		c.wbuf, c.wcount = spare[:0], 0
		replies := c.replyQueued // now in flight
		c.replyQueued = 0
		c.notFull.Broadcast()
		c.wmu.Unlock()

		c.setWriteDeadline()
		n, err := c.nc.Write(batch)
		c.stats.bytesOut.Add(uint64(n))
		c.stats.batches.Add(1)
		if replies > 0 {
			c.wmu.Lock()
			c.replyPending.Add(-int64(replies))
			c.replyRoom.Broadcast()
			c.wmu.Unlock()
		}
		if err != nil {
			c.shutdown(fmt.Errorf("openflow: write: %w", err))
			c.wmu.Lock()
			c.wbuf, c.wcount = nil, 0
			c.replyPending.Add(-int64(c.replyQueued))
			c.replyQueued = 0
			c.wmu.Unlock()
			return
		}
		// Keep the batch buffer for reuse unless a burst made it huge.
		if cap(batch) <= 2*c.cfg.WriteQueueBytes {
			spare = batch
		} else {
			spare = nil
		}
	}
}

// setWriteDeadline bounds the next write: by CloseTimeout once closing,
// by WriteTimeout otherwise.
func (c *Conn) setWriteDeadline() {
	if dl := c.closeDL.Load(); dl != 0 {
		_ = c.nc.SetWriteDeadline(time.Unix(0, dl))
		return
	}
	if c.cfg.WriteTimeout > 0 {
		_ = c.nc.SetWriteDeadline(time.Now().Add(c.cfg.WriteTimeout))
	}
}
