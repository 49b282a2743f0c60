package afsock

import (
	"log/slog"
	"time"

	"github.com/pseudocong/pseudocong/internal/nsexec"
)

// The rebind back-off: the first retry after minBackoff, doubling up to
// maxBackoff. The cap is what bounds how long a port stays dark after its
// link comes back when nobody calls Wake (a quarter second, well inside
// the one second a switch port promises); at the cap a socket waiting for
// a missing or down interface costs four interface look-ups a second
// instead of a busy loop.
const (
	minBackoff = 10 * time.Millisecond
	maxBackoff = 250 * time.Millisecond
)

// rebind binds a new socket to the interface now called s.ifName, waiting
// with back-off while it is missing or down. It returns false when Close
// stops it. Run only.
func (s *Socket) rebind() bool {
	delay := minBackoff
	for {
		s.rebindAttempts.Add(1)
		b, err := s.bindInNamespace()
		if err == nil {
			s.mu.Lock()
			if s.closed {
				s.mu.Unlock()
				b.tp.Close()
				return false
			}
			s.install(b)
			s.mu.Unlock()
			s.rebinds.Add(1)
			s.outage.end(time.Now(), b.index)
			if s.opts.OnBound != nil {
				s.opts.OnBound(true)
			}
			return true
		}
		s.outage.failed(time.Now(), err)
		t := time.NewTimer(delay)
		select {
		case <-s.stop:
			t.Stop()
			return false
		case <-s.wake:
		case <-t.C:
		}
		t.Stop()
		delay = min(2*delay, maxBackoff)
	}
}

// bindInNamespace is bind(requireUp) in the namespace Open ran in.
func (s *Socket) bindInNamespace() (bound, error) {
	if !s.ns.IsOpen() {
		return bind(s.opts, true)
	}
	var b bound
	err := nsexec.Do(s.ns, func() (err error) {
		b, err = bind(s.opts, true)
		return err
	})
	return b, err
}

// logEvery is the rate limit of outage log lines: a flapping link logs
// one outage (start and end) per logEvery and counts the rest; a long
// outage logs a reminder every logEvery, not a line per attempt.
const logEvery = 10 * time.Second

// outageLog logs the socket's outages, rate-limited. Run only.
type outageLog struct {
	log   *slog.Logger
	iface string

	lastStart  time.Time // when an outage start was last logged
	suppressed int       // outages not logged since then

	since    time.Time // start of the current outage
	logged   bool      // the current outage has been logged
	lastLine time.Time // last line about the current outage (or its start)
	attempts int
}

func (o *outageLog) begin(now time.Time, cause error) {
	o.since, o.lastLine, o.attempts, o.logged = now, now, 0, false
	if !o.lastStart.IsZero() && now.Sub(o.lastStart) < logEvery {
		o.suppressed++
		return
	}
	o.log.Warn("afsock: receive interrupted, rebinding when the interface is back",
		"iface", o.iface, "err", cause, "outages_not_logged", o.suppressed)
	o.lastStart, o.suppressed, o.logged = now, 0, true
}

func (o *outageLog) failed(now time.Time, err error) {
	o.attempts++
	if now.Sub(o.lastLine) < logEvery {
		return
	}
	o.log.Warn("afsock: still waiting for the interface",
		"iface", o.iface, "down_for", now.Sub(o.since).Round(time.Millisecond), "attempts", o.attempts, "err", err)
	o.lastLine, o.logged = now, true
}

func (o *outageLog) end(now time.Time, index int) {
	if !o.logged {
		return
	}
	o.log.Info("afsock: receive resumed",
		"iface", o.iface, "ifindex", index, "down_for", now.Sub(o.since).Round(time.Millisecond), "attempts", o.attempts+1)
}
