// Package probes holds the probe hosts' logic, sans-I/O: a prober that sends
// SYNs or one-packet data flows at a set rate and measures the RTT of each
// (SYN→SYN-ACK, DATA→ACK), a responder that answers at once, TCP
// retransmission-timer profiles (Berkeley, Linux, user-defined YAML) and the
// classification of RTTs into "how many retransmissions would this have
// cost" bins (paper 000, experiments 3.1 and 3.2).
//
// Nothing here touches a socket. Time comes from a clock.Clock (wall clock
// in the live backend, the discrete-event clock.Sim in the sim backend),
// packets leave through a Sender and come back through Deliver. The live
// shells (raw frames on a netns host) and the sim links are thin adapters
// around these types. See docs/probes.md.
package probes
