package openflow

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// PeerError is returned by Request when the peer answered with an
// OFPT_ERROR carrying the request's xid.
type PeerError struct {
	Request Type // type of the request that failed
	Msg     *ErrorMsg
}

func (e *PeerError) Error() string {
	return fmt.Sprintf("openflow: peer rejected %v xid %d: %v %s", e.Request, e.Msg.Xid, e.Msg.Type, CodeString(e.Msg.Type, e.Msg.Code))
}

// Unwrap exposes the ERROR message (it implements error itself).
func (e *PeerError) Unwrap() error { return e.Msg }

// pendingRequest is a Request waiting for its reply.
type pendingRequest struct {
	multi bool
	parts []Message // STATS_REPLY parts flagged REPLY_MORE so far
	size  int       // bytes in parts
	ch    chan requestResult
}

type requestResult struct {
	msgs []Message
	err  error
}

// Request sends m and waits for the reply with the same xid (a zero xid
// is replaced by a fresh one). Replies are messages of the reply types
// (ECHO_REPLY, FEATURES_REPLY, GET_CONFIG_REPLY, STATS_REPLY, BARRIER_REPLY,
// QUEUE_GET_CONFIG_REPLY, VENDOR) or an ERROR, which is returned as a
// *PeerError. A reply is consumed here and not seen by ReadMessage; a reply
// that arrives after ctx expired goes to ReadMessage.
//
// Request must not be called from the goroutine that runs Serve/ReadMessage
// while it expects that goroutine to drain a full read queue: the reply
// would wait behind the unread messages. Run such requests on their own
// goroutine.
func (c *Conn) Request(ctx context.Context, m Message) (Message, error) {
	msgs, err := c.request(ctx, m, false)
	if err != nil {
		return nil, err
	}
	return msgs[0], nil
}

// RequestMulti is Request for STATS_REQUEST: it collects every STATS_REPLY
// part (all but the last flagged REPLY_MORE) and returns them in order.
// The total is bounded by MaxMultipartBytes.
func (c *Conn) RequestMulti(ctx context.Context, m Message) ([]Message, error) {
	return c.request(ctx, m, true)
}

// Barrier sends a BARRIER_REQUEST and waits for its reply: every message
// sent before it has then been processed by the peer.
func (c *Conn) Barrier(ctx context.Context) error {
	r, err := c.Request(ctx, &BarrierRequest{})
	if err != nil {
		return err
	}
	if r.MsgType() != TypeBarrierReply {
		return fmt.Errorf("openflow: barrier xid %d: answered with %v", r.GetXid(), r.MsgType())
	}
	return nil
}

// Echo sends an ECHO_REQUEST and returns the round-trip time.
func (c *Conn) Echo(ctx context.Context) (time.Duration, error) {
	start := time.Now()
	r, err := c.Request(ctx, &EchoRequest{})
	if err != nil {
		return 0, err
	}
	if r.MsgType() != TypeEchoReply {
		return 0, fmt.Errorf("openflow: echo xid %d: answered with %v", r.GetXid(), r.MsgType())
	}
	return time.Since(start), nil
}

func (c *Conn) request(ctx context.Context, m Message, multi bool) ([]Message, error) {
	xid := m.GetXid()
	if xid == 0 {
		xid = c.NextXid()
		m.SetXid(xid)
	}
	p := &pendingRequest{multi: multi, ch: make(chan requestResult, 1)}
	c.pmu.Lock()
	if _, dup := c.pending[xid]; dup {
		c.pmu.Unlock()
		return nil, fmt.Errorf("openflow: request %v: xid %d already has a request waiting", m.MsgType(), xid)
	}
	c.pending[xid] = p
	c.npending.Add(1)
	c.pmu.Unlock()

	if err := c.SendContext(ctx, m); err != nil {
		c.forget(xid)
		return nil, err
	}
	select {
	case r := <-p.ch:
		if r.err != nil {
			return nil, fmt.Errorf("openflow: request %v xid %d: %w", m.MsgType(), xid, r.err)
		}
		if e, ok := r.msgs[len(r.msgs)-1].(*ErrorMsg); ok {
			return nil, &PeerError{Request: m.MsgType(), Msg: e}
		}
		return r.msgs, nil
	case <-ctx.Done():
		c.forget(xid)
		return nil, fmt.Errorf("openflow: request %v xid %d: %w", m.MsgType(), xid, ctx.Err())
	case <-c.closing:
		c.forget(xid)
		return nil, fmt.Errorf("openflow: request %v xid %d: %w", m.MsgType(), xid, c.sendErr())
	}
}

func (c *Conn) forget(xid uint32) {
	c.pmu.Lock()
	if _, ok := c.pending[xid]; ok {
		delete(c.pending, xid)
		c.npending.Add(-1)
	}
	c.pmu.Unlock()
}

// errMultipartTooBig ends a RequestMulti whose parts exceed the bound.
var errMultipartTooBig = errors.New("multipart reply exceeds MaxMultipartBytes")

// completeRequest hands a reply to its waiting Request; it reports false
// if nobody waits for this xid.
func (c *Conn) completeRequest(m Message, frame []byte) bool {
	xid := m.GetXid()
	c.pmu.Lock()
	p := c.pending[xid]
	if p == nil {
		c.pmu.Unlock()
		return false
	}
	more := p.multi && m.MsgType() == TypeStatsReply && len(frame) >= 12 &&
		binary.BigEndian.Uint16(frame[10:12])&StatsReplyMore != 0
	if more {
		p.parts = append(p.parts, m)
		p.size += len(frame)
		if p.size <= c.cfg.MaxMultipartBytes {
			c.pmu.Unlock()
			return true
		}
	}
	delete(c.pending, xid)
	c.npending.Add(-1)
	c.pmu.Unlock()
	if more { // over the bound
		p.ch <- requestResult{err: errMultipartTooBig}
		return true
	}
	p.ch <- requestResult{msgs: append(p.parts, m)}
	return true
}

// failPending wakes the Request callers left when the connection is gone.
// (They also watch c.closing; this just releases the parts early.)
func (c *Conn) failPending() {
	c.pmu.Lock()
	defer c.pmu.Unlock()
	for xid := range c.pending {
		delete(c.pending, xid)
	}
	c.npending.Store(0)
}
