package probes

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// TimerProfile is a TCP stack's retransmission-timer behaviour, reduced to
// what classifying an RTT needs.
type TimerProfile struct {
	Name string
	// SYN holds the times, cumulative from the first SYN, at which the
	// stack retransmits an unanswered SYN (Berkeley: 5.8 s, 24 s).
	SYN []time.Duration
	// SYNGiveUp is when, counted from the first SYN, connect() fails
	// (Berkeley: 75 s).
	SYNGiveUp time.Duration
	// DataRTO is the retransmission timer of a data segment that has no RTT
	// sample yet (a one-packet flow): the case of experiment 3.2.
	DataRTO DataRTO
}

// DataRTO describes the data retransmission timeout: the first timeout is
// Initial clamped to [Min, Max]; each further timeout doubles the previous
// one, clamped to Max (exponential backoff, RFC 6298 §5.5). After Retries
// retransmissions, the next expiry drops the connection.
type DataRTO struct {
	Initial time.Duration
	Min     time.Duration
	Max     time.Duration
	Retries int
}

// Names of the built-in profiles.
const (
	ProfileBerkeley = "berkeley"
	ProfileLinux    = "linux"
)

// maxRetries bounds user-defined retry counts: far beyond any real stack,
// small enough that the bin tables stay readable.
const maxRetries = 64

// Berkeley is the 4.4BSD timer set the paper uses (TCP/IP Illustrated,
// vol. 1): SYN retransmitted 5.8 s and 24 s after the first send, connect()
// abandoned at 75 s; data RTO 1.5 s doubling, capped at 64 s
// (1.5, 3, 6, 12, 24, 48, 64, 64, …), 12 retransmissions (TCP_MAXRXTSHIFT),
// so a segment is given up 542.5 s after its first send.
func Berkeley() TimerProfile {
	return TimerProfile{
		Name:      ProfileBerkeley,
		SYN:       []time.Duration{5800 * time.Millisecond, 24 * time.Second},
		SYNGiveUp: 75 * time.Second,
		DataRTO: DataRTO{
			Initial: 1500 * time.Millisecond,
			Min:     time.Second, // TCPTV_MIN: two 500 ms slow-timer ticks
			Max:     64 * time.Second,
			Retries: 12,
		},
	}
}

// Linux is a current Linux stack with default sysctls: SYN RTO 1 s
// doubling, tcp_syn_retries = 6 (retransmits at 1, 3, 7, 15, 31, 63 s,
// connect() fails at 127 s); data RTO per RFC 6298 with Linux's clamps
// (initial 1 s, TCP_RTO_MIN 200 ms, TCP_RTO_MAX 120 s), tcp_retries2 = 15.
//
// Approximation: Linux turns tcp_retries2 into a time budget computed as if
// the RTO had started at 200 ms (924.6 s); this profile counts 15
// retransmissions from the 1 s initial RTO instead.
func Linux() TimerProfile {
	return TimerProfile{
		Name: ProfileLinux,
		SYN: []time.Duration{
			1 * time.Second, 3 * time.Second, 7 * time.Second,
			15 * time.Second, 31 * time.Second, 63 * time.Second,
		},
		SYNGiveUp: 127 * time.Second,
		DataRTO: DataRTO{
			Initial: time.Second,
			Min:     200 * time.Millisecond,
			Max:     120 * time.Second,
			Retries: 15,
		},
	}
}

// ProfileLinuxLinear names the SYN timers of Linux kernels with
// net.ipv4.tcp_syn_linear_timeouts (6.x; default 4), such as the 6.18
// kernel of our test machines.
const ProfileLinuxLinear = "linux-linear"

// LinuxLinear is Linux with tcp_syn_linear_timeouts = 4 and tcp_syn_retries
// = 6: the RTO stays at 1 s for the first retransmissions, then doubles.
// Measured on kernel 6.18 with `probe tcp` (TCP_INFO and a pcap): SYNs leave
// at 0, 1, 2, 3, 4, 5 and 7 s and connect() fails at 11 s. Data timers are
// Linux's.
func LinuxLinear() TimerProfile {
	p := Linux()
	p.Name = ProfileLinuxLinear
	p.SYN = []time.Duration{
		1 * time.Second, 2 * time.Second, 3 * time.Second,
		4 * time.Second, 5 * time.Second, 7 * time.Second,
	}
	p.SYNGiveUp = 11 * time.Second
	return p
}

// BuiltinProfiles returns fresh copies of every built-in profile.
func BuiltinProfiles() []TimerProfile { return []TimerProfile{Berkeley(), Linux(), LinuxLinear()} }

// ProfileByName finds a profile by name (case-insensitive), first among
// extra (e.g. profiles loaded with LoadProfiles), then among the built-ins.
func ProfileByName(name string, extra ...TimerProfile) (TimerProfile, error) {
	for _, p := range extra {
		if strings.EqualFold(p.Name, name) {
			return p.clone(), nil
		}
	}
	for _, p := range BuiltinProfiles() {
		if strings.EqualFold(p.Name, name) {
			return p, nil
		}
	}
	known := make([]string, 0, len(extra)+2)
	for _, p := range extra {
		known = append(known, p.Name)
	}
	known = append(known, ProfileBerkeley, ProfileLinux)
	return TimerProfile{}, fmt.Errorf("unknown timer profile %q (known: %s)", name, strings.Join(known, ", "))
}

func (p TimerProfile) clone() TimerProfile {
	p.SYN = append([]time.Duration(nil), p.SYN...)
	return p
}

// Validate checks the profile is usable: SYN times positive and strictly
// increasing, give-up after the last retransmission, RTO bounds ordered.
func (p TimerProfile) Validate() error {
	var errs []error
	if strings.TrimSpace(p.Name) == "" {
		errs = append(errs, errors.New("name is empty"))
	}
	prev := time.Duration(0)
	for i, d := range p.SYN {
		switch {
		case d <= 0:
			errs = append(errs, fmt.Errorf("syn[%d] = %v must be positive", i, d))
		case d <= prev:
			errs = append(errs, fmt.Errorf("syn[%d] = %v must be after syn[%d] = %v (times are cumulative from the first SYN)", i, d, i-1, prev))
		}
		prev = max(prev, d)
	}
	if p.SYNGiveUp <= 0 {
		errs = append(errs, fmt.Errorf("syn_give_up = %v must be positive", p.SYNGiveUp))
	} else if p.SYNGiveUp <= prev {
		errs = append(errs, fmt.Errorf("syn_give_up = %v must be after the last SYN retransmission (%v)", p.SYNGiveUp, prev))
	}
	r := p.DataRTO
	if r.Initial <= 0 {
		errs = append(errs, fmt.Errorf("data_rto.initial = %v must be positive", r.Initial))
	}
	if r.Min <= 0 {
		errs = append(errs, fmt.Errorf("data_rto.min = %v must be positive", r.Min))
	}
	if r.Max < r.Min {
		errs = append(errs, fmt.Errorf("data_rto.max = %v must not be below data_rto.min = %v", r.Max, r.Min))
	}
	if r.Retries < 0 || r.Retries > maxRetries {
		errs = append(errs, fmt.Errorf("data_rto.retries = %d must be in [0, %d]", r.Retries, maxRetries))
	}
	if len(errs) > 0 {
		return fmt.Errorf("timer profile %q: %w", p.Name, errors.Join(errs...))
	}
	return nil
}

// Timeouts returns the successive data timeouts: Retries+1 values, the
// first for the original transmission, the last for the final
// retransmission (whose expiry drops the connection).
func (r DataRTO) Timeouts() []time.Duration {
	if r.Retries < 0 {
		return nil
	}
	out := make([]time.Duration, r.Retries+1)
	t := min(max(r.Initial, r.Min), r.Max)
	for i := range out {
		out[i] = t
		t = min(2*t, r.Max)
	}
	return out
}

// DataRetransmits returns the cumulative times, from the first send, at
// which an unacknowledged one-packet flow is retransmitted (Berkeley: 1.5,
// 4.5, 10.5, 22.5, 46.5, 94.5, 158.5, … s).
func (p TimerProfile) DataRetransmits() []time.Duration {
	to := p.DataRTO.Timeouts()
	if len(to) == 0 {
		return nil
	}
	out := make([]time.Duration, len(to)-1)
	sum := time.Duration(0)
	for i := range out {
		sum += to[i]
		out[i] = sum
	}
	return out
}

// DataGiveUp is when, from the first send, the stack drops the connection
// (Berkeley: 542.5 s).
func (p TimerProfile) DataGiveUp() time.Duration {
	sum := time.Duration(0)
	for _, t := range p.DataRTO.Timeouts() {
		sum += t
	}
	return sum
}

// Retransmits returns the cumulative retransmission times for kind k.
func (p TimerProfile) Retransmits(k Kind) []time.Duration {
	switch k {
	case KindSYN:
		return append([]time.Duration(nil), p.SYN...)
	case KindData:
		return p.DataRetransmits()
	}
	panic(fmt.Sprintf("probes: unknown kind %d", k))
}

// GiveUp returns when, from the first send, the stack gives up for kind k.
func (p TimerProfile) GiveUp(k Kind) time.Duration {
	switch k {
	case KindSYN:
		return p.SYNGiveUp
	case KindData:
		return p.DataGiveUp()
	}
	panic(fmt.Sprintf("probes: unknown kind %d", k))
}
