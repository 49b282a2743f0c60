// Package tcp is a sans-I/O TCP endpoint on clock.Clock: the sender and
// receiver halves of one connection, driven by Input (a segment arrives),
// timers on the clock and the application's Write, emitting segments
// through an output function. On clock.Sim it is deterministic.
//
// What it does, and after whom (Linux net/ipv4/tcp_input.c, tcp_output.c,
// tcp_timer.c, tcp_rate.c; ns-3 tcp-socket-base.cc; the RFCs):
//
//   - Three-way handshake with SYN and SYN-ACK retransmission by timer
//     profile (SYNTimers: Berkeley 5.8/24/75 s, Linux exponential from 1 s,
//     Linux linear as kernel 6.18's tcp_syn_linear_timeouts, ns-3's 3 s
//     doubling); MSS, window scaling (RFC 7323), SACK-permitted,
//     timestamps and ECN negotiated on the SYN.
//   - Byte sequence numbers (32-bit, wrapping), a send buffer and a
//     receive buffer of configurable size, the receive window scaled.
//   - RFC 6298 RTO (RTOConfig: initial, minimum, maximum, exponential
//     backoff, Karn's rule), optionally with Linux's variant that puts the
//     200 ms floor on the variance term; a 3 s RTO when the handshake
//     was retransmitted and gave no RTT sample (RFC 6298 §5.7) and an
//     initial window of 1 after a SYN retransmission, as Linux does.
//   - Fast retransmit and NewReno recovery (RFC 6582: recovery point,
//     one hole per partial ACK) or, with SACK negotiated, SACK-based loss
//     marking and recovery (RFC 2018, RFC 6675's IsLost rule). In-flight
//     accounting is Linux's (packets out − SACKed − lost + retransmitted;
//     without SACK each duplicate ACK counts as one SACKed segment), which
//     replaces RFC 6582's inflate/deflate of cwnd; the window during
//     Recovery and CWR follows PRR (RFC 6937) as Linux and ns-3 3.37 do.
//     Config.Recovery (recovery.go) offers ns-2's rules without SACK
//     instead: classic Reno (RFC 5681 §3.2, ns-2's bugFix_ guard) and
//     NewReno with RFC 6582's inflated window in place of PRR.
//     Without SACK, the duplicate ACKs that copies of data the receiver
//     already held will draw (a timeout's go-back-N) are expected and
//     not counted, so they start no spurious fast retransmit; in Loss a
//     duplicate ACK counts only for data sent after the timeout, as
//     Linux's tcp_process_loss.
//   - The window grows only when cwnd limited sending (Linux's
//     tcp_cwnd_validate and tcp_is_cwnd_limited, tracked per window; in
//     slow start up to twice the segments out), so a flow held back by
//     the receive window, pacing or the application does not inflate
//     cwnd past what it puts in flight.
//   - Delayed ACKs (every DelAckCount segments or after DelAckTimeout,
//     immediately on out-of-order data, on filling a hole and on a change
//     of the CE state; an optional Linux-like quick-ACK start).
//   - ECN (RFC 3168): ECT(0) on new data, CE echoed as ECE until a CWR,
//     the window reduced at most once per window on ECE and CWR sent; an
//     algorithm that owns the receiver's echo (cc.ECNOwner: DCTCP) drives
//     it per packet through cc.AckControl instead.
//   - F-RTO (RFC 5682) and Eifel detection with timestamps (RFC 3522) of
//     spurious timeouts, each undoing the reduction as Linux's
//     tcp_try_undo_loss does.
//   - The delivery-rate sample of tcp_rate.c, handed to a cc.Controller
//     (BBR), and pacing at the algorithm's PacingRate.
//
// The congestion window itself is decided by a tcp/cc algorithm.
//
// Segments travel as Segment values (wire.go converts to and from
// packet.Packet for a live shim or a capture); an endpoint needs only an
// output func and Input, so a host's demux attaches it in one line.
//
// Not done: FIN/RST and connection teardown (applications end by having
// all their bytes acknowledged), a persist timer for a zero window,
// urgent data, RACK-TLP (a lost retransmission waits for the RTO),
// DSACK and fast-recovery undo, RTT samples from timestamps,
// receive-buffer autotuning, Nagle, limited transmit, Berkeley's 500 ms
// timer granularity.
package tcp
