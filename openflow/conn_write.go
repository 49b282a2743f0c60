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
	return c.sendMsg(ctx, m, true, true)
}

// SendNonBlocking is Send that returns ErrQueueFull instead of waiting.
func (c *Conn) SendNonBlocking(m Message) error {
	return c.sendMsg(context.Background(), m, false, true)
}

// SendRaw queues one pre-encoded OpenFlow 1.0 message (header included)
// and blocks like Send when the queue is full. b is copied; a zero xid is
// replaced by a fresh one in the copy.
func (c *Conn) SendRaw(b []byte) error {
	return c.sendRaw(context.Background(), b, true)
}

// SendRawNonBlocking is SendRaw that returns ErrQueueFull instead of
// waiting.
func (c *Conn) SendRawNonBlocking(b []byte) error {
	return c.sendRaw(context.Background(), b, false)
}

// sendMsg queues m; assignXid replaces a zero xid (requests), while
// replies keep the xid of what they answer, even 0 (ovs-ofctl sends its
// echo request with xid 0 and rejects a reply with any other).
func (c *Conn) sendMsg(ctx context.Context, m Message, wait, assignXid bool) error {
	if assignXid && m.GetXid() == 0 {
		m.SetXid(c.NextXid())
	}
	if err := c.lockForAppend(ctx, m.Len(), wait); err != nil {
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
	c.commitAppend(start)
	return nil
}

func (c *Conn) sendRaw(ctx context.Context, b []byte, wait bool) error {
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
	if err := c.lockForAppend(ctx, len(b), wait); err != nil {
		return fmt.Errorf("openflow: send raw %v xid %d: %w", h.Type, h.Xid, err)
	}
	start := len(c.wbuf)
	c.wbuf = append(c.wbuf, b...)
	if h.Xid == 0 {
		binary.BigEndian.PutUint32(c.wbuf[start+4:], c.NextXid())
	}
	c.commitAppend(start)
	return nil
}

// sendControl queues an automatic reply from the reader goroutine, which
// must never block on the write queue (it would stop reading, and with it
// the replies that could drain the queue). A full queue drops the reply
// and counts it.
func (c *Conn) sendControl(m Message) {
	if err := c.sendMsg(context.Background(), m, false, false); err != nil {
		c.stats.controlDropped.Add(1)
	}
}

// lockForAppend takes wmu once the queue has room for need more bytes and
// one more message, waiting if wait is set. On success wmu is held and
// the caller must append to wbuf and call commitAppend.
func (c *Conn) lockForAppend(ctx context.Context, need int, wait bool) error {
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
		if c.wcount == 0 || (c.wcount < c.cfg.WriteQueue && len(c.wbuf)+need <= c.cfg.WriteQueueBytes) {
			if stop != nil {
				stop()
			}
			return nil
		}
		if !counted {
			c.stats.queueFull.Add(1)
			counted = true
		}
		if !wait {
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
// releases wmu.
func (c *Conn) commitAppend(start int) {
	c.wcount++
	c.stats.msgsOut.Add(1)
	if start == 0 {
		c.notEmpty.Signal()
	}
	c.wmu.Unlock()
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
		c.notFull.Broadcast()
		c.wmu.Unlock()

		c.setWriteDeadline()
		n, err := c.nc.Write(batch)
		c.stats.bytesOut.Add(uint64(n))
		c.stats.batches.Add(1)
		if err != nil {
			c.shutdown(fmt.Errorf("openflow: write: %w", err))
			c.wmu.Lock()
			c.wbuf, c.wcount = nil, 0
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
