package tcp

import (
	"fmt"
	"strings"
	"time"
)

// SYNTimers is how an unanswered SYN (or SYN-ACK) is retransmitted.
//
// Either Explicit gives the interval after each transmission (the last
// interval's expiry gives up), or the intervals are computed: Initial for
// the first Linear retransmissions and the original, then doubling, capped
// at Max, with Retries retransmissions before giving up.
type SYNTimers struct {
	Explicit []time.Duration
	Initial  time.Duration
	Linear   int
	Retries  int
	Max      time.Duration
}

// Interval is the timeout after the n-th transmission (0: the original);
// ok is false when the expiry after transmission n gives up instead of
// retransmitting.
func (t SYNTimers) Interval(n int) (d time.Duration, retransmit bool) {
	if len(t.Explicit) > 0 {
		n = min(n, len(t.Explicit)-1)
		return t.Explicit[n], n < len(t.Explicit)-1
	}
	d = t.Initial
	if n > t.Linear {
		for i := t.Linear; i < n && (t.Max <= 0 || d < t.Max); i++ {
			d *= 2
		}
	}
	if t.Max > 0 {
		d = min(d, t.Max)
	}
	return d, n < t.Retries
}

// Schedule returns the times, from the first transmission, of every
// retransmission and of giving up.
func (t SYNTimers) Schedule() (retransmits []time.Duration, giveUp time.Duration) {
	var at time.Duration
	for n := 0; ; n++ {
		d, more := t.Interval(n)
		at += d
		if !more {
			return retransmits, at
		}
		retransmits = append(retransmits, at)
	}
}

// RTOConfig is the data retransmission timer (RFC 6298).
type RTOConfig struct {
	Initial time.Duration // before the first RTT sample (RFC 6298: 1 s)
	Min     time.Duration // floor (RFC 6298: 1 s; Linux 200 ms)
	Max     time.Duration // ceiling of the backed-off timer
	// Granularity is RFC 6298's G in RTO = SRTT + max(G, 4·RTTVAR).
	Granularity time.Duration
	// MinOnVariance applies Min to the variance term instead of the RTO,
	// as Linux's tcp_set_rto does: RTO = SRTT + max(4·RTTVAR, Min).
	MinOnVariance bool
	// AfterSYNLoss is the RTO used when the handshake was retransmitted
	// and gave no RTT sample (RFC 6298 §5.7: 3 s); 0 keeps Initial.
	AfterSYNLoss time.Duration
	// Retries is how many times a segment is retransmitted on timeout
	// before the connection gives up (Linux tcp_retries2, Berkeley 12).
	Retries int
	// RestartOnRetransmit restarts the timer whenever the first
	// unacknowledged segment is retransmitted (a fast retransmit, a
	// partial ACK's hole), as Linux's tcp_xmit_retransmit_queue does
	// (skb == rtx_head) and ns-2's dupack_action (reset_rtx_timer).
	// RFC 6298 restarts it only on an ACK of new data, as ns-3's
	// TcpSocketBase does and as every built-in profile still does: a loss
	// whose duplicate ACKs come late (more than RTO - RTT after the last
	// ACK that advanced) then times out although its fast retransmission
	// is on its way (docs/high-bdp.md, "ns-2 side by side").
	RestartOnRetransmit bool
}

// Profile is a stack's timer set: SYN and SYN-ACK retransmission, the
// data RTO, delayed ACKs.
type Profile struct {
	Name          string
	SYN, SYNACK   SYNTimers
	RTO           RTOConfig
	DelAckCount   int           // ACK every this many full segments
	DelAckTimeout time.Duration // or after this long
	QuickAcks     int           // ACK the first this many segments at once (Linux quick-ack)
	InitialCwnd   uint32        // segments
	// IW1AfterSYNLoss sets the initial window to one segment when the
	// SYN or SYN-ACK was retransmitted (Linux tcp_init_transfer).
	IW1AfterSYNLoss bool
}

// Names of the built-in profiles.
const (
	ProfileLinux       = "linux"
	ProfileLinuxLinear = "linux-linear"
	ProfileBerkeley    = "berkeley"
	ProfileNS3         = "ns3"
)

// Linux is a current kernel with default sysctls: SYN RTO 1 s doubling,
// tcp_syn_retries 6 (SYNs at 0, 1, 3, 7, 15, 31, 63 s, give up at 127 s),
// tcp_synack_retries 5; data RTO initial 1 s, TCP_RTO_MIN 200 ms on the
// variance term, TCP_RTO_MAX 120 s, tcp_retries2 15; delayed ACK
// TCP_DELACK_MIN 40 ms after two segments, 16 quick ACKs at the start;
// initial window 10, 1 after a SYN retransmission.
func Linux() Profile {
	return Profile{
		Name:   ProfileLinux,
		SYN:    SYNTimers{Initial: time.Second, Retries: 6, Max: 120 * time.Second},
		SYNACK: SYNTimers{Initial: time.Second, Retries: 5, Max: 120 * time.Second},
		RTO: RTOConfig{Initial: time.Second, Min: 200 * time.Millisecond, Max: 120 * time.Second,
			Granularity: time.Millisecond, MinOnVariance: true, AfterSYNLoss: 3 * time.Second, Retries: 15},
		DelAckCount: 2, DelAckTimeout: 40 * time.Millisecond, QuickAcks: 16,
		InitialCwnd: 10, IW1AfterSYNLoss: true,
	}
}

// LinuxLinear is Linux with net.ipv4.tcp_syn_linear_timeouts = 4 (kernel
// 6.18's default): the SYN RTO stays at 1 s while the retransmission
// count is at most 4, then doubles. SYNs leave at 0, 1, 2, 3, 4, 5, 7 s and
// connect() fails at 11 s, as measured on kernel 6.18 (probes.LinuxLinear).
// The sysctl does not apply to SYN-ACKs.
func LinuxLinear() Profile {
	p := Linux()
	p.Name = ProfileLinuxLinear
	p.SYN.Linear = 4
	return p
}

// Berkeley is 4.4BSD as TCP/IP Illustrated describes it: SYN retransmitted
// 5.8 s and 24 s after the first, connect() abandoned at 75 s (the same
// for SYN-ACKs); data RTO 1.5 s before a sample, 1 s floor, doubling to
// 64 s, 12 retransmissions; delayed ACK up to 200 ms. Initial window 1
// (pre-RFC 3390 BSD). The 500 ms timer tick is not modelled.
func Berkeley() Profile {
	syn := SYNTimers{Explicit: []time.Duration{5800 * time.Millisecond, 18200 * time.Millisecond, 51 * time.Second}}
	return Profile{
		Name: ProfileBerkeley,
		SYN:  syn, SYNACK: syn,
		RTO: RTOConfig{Initial: 1500 * time.Millisecond, Min: time.Second, Max: 64 * time.Second,
			Granularity: 500 * time.Millisecond, Retries: 12},
		DelAckCount: 2, DelAckTimeout: 200 * time.Millisecond,
		InitialCwnd: 1,
	}
}

// NS3 is ns-3's TcpSocketBase defaults (3.37): ConnTimeout 3 s doubling
// with SynRetries 6 (six SYNs: 0, 3, 9, 21, 45, 93 s, give up at 189 s);
// MinRto 1 s, initial RTO 1 s, ClockGranularity 1 ms, RFC 6298 estimator;
// DelAckCount 2, DelAckTimeout 200 ms; InitialCwnd 10 (ns-3's default is
// 1: set it on both sides when comparing).
func NS3() Profile {
	syn := SYNTimers{Initial: 3 * time.Second, Retries: 5}
	return Profile{
		Name: ProfileNS3,
		SYN:  syn, SYNACK: syn,
		RTO: RTOConfig{Initial: time.Second, Min: time.Second, Max: 60 * time.Second,
			Granularity: time.Millisecond, Retries: 6},
		DelAckCount: 2, DelAckTimeout: 200 * time.Millisecond,
		InitialCwnd: 10,
	}
}

// Profiles lists the built-in profiles.
func Profiles() []Profile { return []Profile{Linux(), LinuxLinear(), Berkeley(), NS3()} }

// ProfileByName finds a built-in profile (case-insensitive).
func ProfileByName(name string) (Profile, error) {
	var names []string
	for _, p := range Profiles() {
		if strings.EqualFold(p.Name, name) {
			return p, nil
		}
		names = append(names, p.Name)
	}
	return Profile{}, fmt.Errorf("tcp: unknown timer profile %q (want one of %s)", name, strings.Join(names, ", "))
}
