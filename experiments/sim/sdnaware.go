package sim

import (
	"strings"
	"time"

	"github.com/pseudocong/pseudocong/tcp"
)

// SDN-aware TCP (paper 000 §4's "an RTO and a window policy suited to
// SDN"; issue 11 item 3): options of the bulk flows' endpoints, each a
// change of the tcp.Config the endpoints are built with, so the tcp
// package itself is unchanged.

// SDNOptions are the SDN-aware TCP options of a bulk run; the zero value
// is the plain profile.
type SDNOptions struct {
	// FirstPacketAllowance, if positive, is the least time the first
	// transmission of a flow's SYN and of its first data (the RTO before
	// an RTT sample, and after a retransmitted handshake) waits before it
	// is retransmitted: the time a switch may take to install or swap in
	// the flow's rule. The timers after the first keep the profile's.
	FirstPacketAllowance time.Duration
	// FRTO turns on F-RTO (RFC 5682) and Eifel (RFC 3522, with
	// timestamps): a spurious timeout's window reduction is undone.
	FRTO bool
	// LinearSYN, if positive, keeps the SYN timeout at its first value for
	// that many retransmissions before it doubles (Linux 6.18's
	// tcp_syn_linear_timeouts; the Berkeley profile's fixed 5.8/24/75 s
	// schedule becomes 5.8 s steps with the same number of retries).
	LinearSYN int
	// KeepIW keeps the initial window after a SYN or SYN-ACK
	// retransmission (Linux cuts it to one segment): under pseudo-congestion
	// the retransmission is spurious by construction, the path is idle.
	KeepIW bool
	// CoverRules replaces the per-flow rules by two wildcard rules per
	// switch (one per direction, matching the ingress port), placed in the
	// TCAM before the run: a controller-side mitigation (no per-flow swap
	// or install at all, at the cost of per-flow state in the switch).
	CoverRules bool
}

// Name is a short name of the set options, "+"-joined ("" for none).
func (o SDNOptions) Name() string {
	var parts []string
	if o.FirstPacketAllowance > 0 {
		parts = append(parts, "allowance"+o.FirstPacketAllowance.String())
	}
	if o.FRTO {
		parts = append(parts, "frto")
	}
	if o.LinearSYN > 0 {
		parts = append(parts, "linear_syn")
	}
	if o.KeepIW {
		parts = append(parts, "keep_iw")
	}
	if o.CoverRules {
		parts = append(parts, "cover_rules")
	}
	return strings.Join(parts, "+")
}

// apply changes an endpoint's configuration by the options.
func (o SDNOptions) apply(cfg *tcp.Config) {
	p := &cfg.Profile
	if o.LinearSYN > 0 {
		p.SYN = linearSYN(p.SYN, o.LinearSYN)
		p.SYNACK = linearSYN(p.SYNACK, o.LinearSYN)
	}
	if a := o.FirstPacketAllowance; a > 0 {
		p.SYN = allowFirst(p.SYN, a)
		p.SYNACK = allowFirst(p.SYNACK, a)
		p.RTO.Initial = max(p.RTO.Initial, a)
		if p.RTO.AfterSYNLoss > 0 {
			p.RTO.AfterSYNLoss = max(p.RTO.AfterSYNLoss, a)
		}
	}
	if o.KeepIW {
		p.IW1AfterSYNLoss = false
	}
	if o.FRTO {
		cfg.FRTO = true
		cfg.Eifel = cfg.Timestamps
	}
}

// linearSYN is t with its first timeout kept for k retransmissions.
func linearSYN(t tcp.SYNTimers, k int) tcp.SYNTimers {
	if len(t.Explicit) > 0 {
		return tcp.SYNTimers{Initial: t.Explicit[0], Linear: k, Retries: len(t.Explicit) - 1}
	}
	t.Linear = k
	return t
}

// allowFirst makes the first SYN timeout at least a, keeping the rest.
func allowFirst(t tcp.SYNTimers, a time.Duration) tcp.SYNTimers {
	if len(t.Explicit) == 0 {
		first, _ := t.Interval(0)
		if first >= a {
			return t
		}
		// An explicit schedule: a first, then the computed ones.
		var ex []time.Duration
		for i := 0; ; i++ {
			d, more := t.Interval(i)
			if i == 0 {
				d = a
			}
			ex = append(ex, d)
			if !more || i > 64 {
				break
			}
		}
		return tcp.SYNTimers{Explicit: ex}
	}
	ex := append([]time.Duration(nil), t.Explicit...)
	ex[0] = max(ex[0], a)
	return tcp.SYNTimers{Explicit: ex}
}
