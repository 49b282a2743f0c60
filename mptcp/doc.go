// Package mptcp is Multipath TCP (RFC 8684) in the simulator, built on
// package tcp's sans-I/O endpoint: every subflow is a tcp.Conn, and this
// package wraps each subflow's output and input to add and read the MPTCP
// options (tcp.MPOption in tcp.Segment), keeps the data-level sequence
// space, and decides which subflow carries which data-level bytes.
//
// What it does:
//
//   - MP_CAPABLE on the first subflow's SYN, SYN-ACK and third ACK (keys;
//     the token is a hash of the key), then one MP_JOIN subflow per further
//     path carrying the token. The MP_JOIN HMACs and fallback to plain TCP
//     are not modelled: a SYN-ACK without the option leaves the subflow
//     unused.
//   - A 64-bit data sequence space: the sender maps every segment's bytes
//     with a DSS mapping (data sequence, subflow sequence, length); the
//     receiver learns the mappings from the segments, turns each
//     subflow's in-order bytes into data-level ranges and reassembles them
//     in a connection-level receive buffer. Every segment from the
//     receiver carries a DATA_ACK and the connection-level window.
//   - The sender never sends data beyond DATA_ACK + window: when a slow or
//     lossy subflow holds the oldest byte, the faster one fills the buffer
//     and the sender stalls with congestion window to spare. That is
//     receive-buffer blocking; it emerges from the window, and Result
//     reports the share of time it lasted.
//   - A packet scheduler seam (Scheduler) with Linux's default: the
//     subflow with the lowest smoothed RTT that has congestion-window
//     space takes the next segment.
//   - Coupled congestion control, LIA (RFC 6356, tcp/cc.LIAGroup), or each
//     subflow its own algorithm (uncoupled).
//   - Fast retransmissions stay on their subflow (RFC 6182: package tcp
//     does them). On a retransmission timeout of a subflow a Policy picks
//     the subflow that retransmits its outstanding data at the data level
//     (the timed-out subflow still repairs its own sequence space, as a
//     real subflow must): RTX-SAME, RTX-ASAP, RTX-CWND, RTX-SSTHRESH,
//     RTX-LOSSRATE (Iyengar et al.'s CMT-SCTP policies) and RTX-DLCS
//     (paper 004), one file each.
//
// Run builds two (or more) paths of netsim links between a client and a
// server on clock.Sim and runs a bulk transfer; package
// experiments/mptcpgrid runs the paper's grid on it. docs/mptcp.md has the
// model and the results.
package mptcp
