// Package live runs the sans-I/O probes (package probes) on real Linux
// hosts: the raw-frame SYN / data prober and its responder on AF_PACKET
// sockets inside network namespaces (the paper's libnet/libpcap method),
// and a TCP prober that makes real connect() calls and reads the kernel's
// own retransmission counters from TCP_INFO.
//
// Raw probes and host kernels. A raw SYN to an address the receiving
// kernel owns makes that kernel answer with a RST (no listener), and the
// raw SYN-ACK makes the sender's kernel answer with another. The probes
// therefore use addresses the hosts do not own (default 10.0.1.1 →
// 10.0.1.2): the kernels drop such frames silently (forwarding is off in
// a namespace), while the prober and responder answer ARP for their probe
// addresses themselves, so the frames cross any switch exactly like the
// paper's. The responder learns the prober's MAC from the requests.
//
// Every frame an Endpoint sends or receives can be written to a pcap file
// (Capture) for Wireshark; received frames carry the kernel's receive
// timestamp.
package live
