package openflow

import "time"

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
