package openflow

import (
	"sync/atomic"
	"time"
)

// keepalive state shared between keepaliveLoop and the reader.
type keepaliveProbe struct {
	xid    atomic.Uint32 // xid of the outstanding probe, 0 if none
	sentNs atomic.Int64  // when it was sent, ns since epoch
	// answered wakes the loop when the probe is answered, so that the
	// next probe follows EchoInterval after the reply, not after the
	// timeout.
	answered chan struct{}
}

// keepaliveLoop implements Open vSwitch's inactivity probe: after
// EchoInterval without receiving anything, send an ECHO_REQUEST; if the
// peer then stays silent for EchoTimeout, declare it dead and close. Any
// received byte counts as a sign of life, not just the echo reply.
func (c *Conn) keepaliveLoop() {
	defer c.wg.Done()
	interval, timeout := c.cfg.EchoInterval, c.cfg.EchoTimeout
	t := time.NewTimer(interval)
	defer t.Stop()
	var probedFor int64 = -1 // lastRecv value our outstanding probe is about
	var probedAt time.Duration
	for {
		select {
		case <-c.closing:
			return
		case <-t.C:
		case <-c.probe.answered:
		}
		now := time.Since(c.epoch)
		last := c.lastRecv.Load()
		idle := now - time.Duration(last)
		switch {
		case c.readerBlocked.Load():
			// We are not reading; silence says nothing about the peer.
			t.Reset(interval)
		case idle < interval:
			t.Reset(interval - idle)
		case probedFor != last:
			probedFor, probedAt = last, now
			xid := c.NextXid()
			c.probe.xid.Store(xid)
			c.probe.sentNs.Store(int64(now))
			// A full queue means the peer is not reading our messages; the
			// timeout below then decides.
			c.sendControl(&EchoRequest{Header: Header{Xid: xid}})
			t.Reset(timeout)
		case now-probedAt >= timeout:
			c.log.Warn("openflow: peer dead", "idle", idle, "echo_timeout", timeout)
			c.shutdown(ErrPeerDead)
			return
		default:
			t.Reset(timeout - (now - probedAt))
		}
	}
}

// keepaliveReply records the round-trip time of an answered probe.
func (c *Conn) keepaliveReply(xid uint32) {
	if xid != 0 && c.probe.xid.CompareAndSwap(xid, 0) {
		rtt := time.Since(c.epoch) - time.Duration(c.probe.sentNs.Load())
		c.stats.echoRTT.Store(int64(rtt))
		select {
		case c.probe.answered <- struct{}{}:
		default:
		}
	}
}

// idleLoop closes the connection with ErrIdle once no whole message has
// arrived for IdleTimeout. It watches the received-message counter rather
// than the byte clock the keepalive uses, so a peer trickling the bytes of
// a message that never completes is idle, and it costs the reader nothing.
// Time the reader spends held back by us counts as activity. The check
// runs every IdleTimeout/4, so the close comes up to a quarter late.
func (c *Conn) idleLoop() {
	defer c.wg.Done()
	idle := c.cfg.IdleTimeout
	t := time.NewTicker(max(idle/4, time.Millisecond))
	defer t.Stop()
	seen := c.stats.msgsIn.Load()
	quietSince := time.Now()
	for {
		select {
		case <-c.closing:
			return
		case <-t.C:
		}
		if n := c.stats.msgsIn.Load(); n != seen || c.readerBlocked.Load() {
			seen, quietSince = n, time.Now()
			continue
		}
		if time.Since(quietSince) >= idle {
			c.shutdown(ErrIdle) // logged there
			return
		}
	}
}
