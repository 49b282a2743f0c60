// Package netsim models the links of a simulated network on a clock.Clock:
// a point-to-point link direction (rate, propagation delay, MTU, a loss
// model) fed by a sans-I/O qdisc — DropTail, RED with ECN marking, a token
// bucket filter, a policer, or a multi-queue port for OpenFlow's ENQUEUE.
//
// # Model
//
// A Link is one direction. A packet offered with Send goes through the MTU
// check into the Qdisc; the transmitter takes the qdisc's next packet the
// instant it is free, holds it for Len·8/Rate (serialisation), and the
// packet reaches the far end Delay later, where Deliver receives it. A
// loss model, if set, decides as the packet goes on the wire. Everything
// is sans-I/O: qdiscs are given the time and never arm timers; the link
// arms at most one timer of each kind (transmitter free, next delivery,
// shaper wake-up) on its clock.Clock, so the same code runs on the virtual
// clock (clock.Sim) and, serialised by its shell, on the wall clock.
//
// Packets are descriptors owned by the model: the substrate never copies
// or frees one, it hands each back through Deliver or Drop, so a model
// can recycle them and the hot path does not allocate.
//
// # Units
//
// Rates are bits per second, sizes (Len, limits, bursts, RED thresholds)
// bytes, times time.Duration. Token buckets count in nanobits, so a rate of
// r bit/s adds exactly r tokens per nanosecond: shaping and policing are
// exact integer arithmetic. Serialisation times are rounded down to the
// nanosecond with the remainder carried to the next packet, so a link's
// long-run rate is exact.
//
// # Qdiscs and what each follows
//
//   - DropTail: Linux pfifo/bfifo, a limit in packets and/or bytes; the
//     arriving packet is dropped when it would pass either.
//   - RED: Floyd & Jacobson 1993 as Linux tc-red implements it (red.h):
//     EWMA of the byte backlog with the weight tc_red_eval_ewma derives
//     from burst/min/avpkt (or a given one), decay (1−w)^m over idle time
//     at Bandwidth, p_b linear from 0 at Min to MaxP at Max, count-spread
//     marking (gap between marks uniform on 1..1/p_b, i.e. p_a =
//     p_b/(1−count·p_b)) drawn as red_action does, forced marks from Max
//     up, a hard byte Limit; ECN marks ECT packets CE and drops Not-ECT
//     ones, HardDrop drops above Max even with ECN. Seeded PCG. Not done:
//     gentle mode, adaptive RED.
//   - TBF: tc-tbf without peakrate: a bucket of Burst bytes filling at
//     Rate; packets wait in a byte-limited FIFO (Limit, or tc's
//     Rate·Latency + Burst) until the head is paid for; a packet longer
//     than Burst is dropped. Peakrate (the second, mtu-deep bucket) is not
//     modelled: a burst leaves at the link's rate.
//   - Policer: a token bucket with no buffer (tc police / an OpenFlow
//     meter's drop band); Policed puts one in front of a qdisc.
//   - MultiQueue: N child qdiscs chosen by Packet.Queue, served in strict
//     priority (queue 0 first); a shaped child waiting for tokens does not
//     block lower ones.
//
// Loss models are Bernoulli(p) and Gilbert–Elliott (two states, per-packet
// transitions p and r, a loss probability in each state), both seeded.
package netsim
