package agent

import "time"

// admitLocked passes a built Packet-In through the rate limiter into the
// batch.
func (a *Agent) admitLocked(p PacketIn, now time.Time) {
	if a.lim == nil {
		a.addToBatchLocked(p, now)
		return
	}
	pass, dropped, didDrop := a.lim.admit(p, now)
	if didDrop {
		a.dropPacketInLocked(dropped, DropRateLimited)
	}
	if pass {
		a.addToBatchLocked(p, now)
		return
	}
	a.stats.maxRate = max(a.stats.maxRate, a.lim.len())
	a.armHeldTimerLocked(now)
}

func (a *Agent) armHeldTimerLocked(now time.Time) {
	if a.heldTimer != nil {
		return
	}
	a.heldTimer = a.clk.AfterFunc(a.lim.nextToken(now).Sub(now), a.releaseHeld)
}

// releaseHeld moves Packet-Ins that now have a token into the batch.
func (a *Agent) releaseHeld() {
	a.mu.Lock()
	a.heldTimer = nil
	if a.stopped {
		a.mu.Unlock()
		return
	}
	now := a.clk.Now()
	for {
		p, ok := a.lim.release(now)
		if !ok {
			break
		}
		a.addToBatchLocked(p, now)
	}
	if a.lim.len() > 0 {
		a.armHeldTimerLocked(now)
	}
	a.updateGaugesLocked()
	a.mu.Unlock()
	a.drain()
}

func (a *Agent) addToBatchLocked(p PacketIn, now time.Time) {
	a.batch = append(a.batch, p)
	if len(a.batch) >= a.cfg.BatchSize {
		a.flushLocked(now, triggerCount)
		return
	}
	if a.flushTimer == nil {
		a.flushGen++
		gen := a.flushGen
		a.flushTimer = a.clk.AfterFunc(a.nextTick(now).Sub(now), func() { a.flushTick(gen) })
	}
}

// nextTick is the first point of the flush grid strictly after now (a
// periodic timer has already fired at a tick equal to now). The grid is
// anchored at the last count-triggered send: the timer restarts then.
func (a *Agent) nextTick(now time.Time) time.Time {
	period := a.cfg.FlushPeriod
	k := now.Sub(a.flushAnchor)/period + 1
	return a.flushAnchor.Add(k * period)
}

// flushTick is the timer firing. gen identifies the arming: on the wall
// clock a timer whose Stop came too late still runs, and must not act for
// (or forget) the timer armed after it.
func (a *Agent) flushTick(gen uint64) {
	a.mu.Lock()
	if a.stopped || gen != a.flushGen {
		a.mu.Unlock()
		return
	}
	a.flushTimer = nil
	if len(a.batch) > 0 {
		a.flushLocked(a.clk.Now(), triggerTimer)
	}
	a.updateGaugesLocked()
	a.mu.Unlock()
	a.drain()
}

// flushLocked hands the batch to Output (via the outbox).
func (a *Agent) flushLocked(now time.Time, trigger string) {
	batch := a.batch
	a.batch = make([]PacketIn, 0, a.cfg.BatchSize)
	a.stats.batches++
	a.stats.sent += uint64(len(batch))
	if trigger == triggerTimer {
		a.stats.timerFlushes++
	} else {
		// A send restarts the periodic timer; it is armed again (for the
		// new grid) when the next Packet-In joins the batch.
		a.flushAnchor = now
		if a.flushTimer != nil {
			a.flushTimer.Stop()
			a.flushTimer = nil
			a.flushGen++
		}
	}
	if a.m != nil {
		a.m.batches.WithLabelValues(trigger).Inc()
		a.m.batchSize.Observe(float64(len(batch)))
		a.m.packetIns.Add(float64(len(batch)))
		for _, p := range batch {
			a.m.packetInLatency.Observe(now.Sub(p.MissAt).Seconds())
		}
	}
	a.emitLocked(func() { a.out.SendPacketIns(batch) })
}
