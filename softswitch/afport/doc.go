// Package afport makes a Linux network interface a port of the software
// switch: frames arriving on the interface go to the switch core's
// Receive, frames the core transmits are written to it, and link changes
// (carrier up/down, seen through netlink) become PORT_STATUS messages via
// the core's SetLinkDown.
//
// The interface is read through an AF_PACKET socket with a TPACKET ring
// (internal/afsock): V2 by default, because V3's block retire timer adds
// up to its timeout (1 ms at least) per frame on a quiet link — ping
// through two ports measured 0.15 ms with V2 and 1.4–1.8 ms with V3 on an
// idle machine, 0.17 ms and 13.7 ms under heavy load; V3 on request. The socket ignores frames the host itself sends on
// the interface (PACKET_OUTGOING), so the switch never receives its own
// transmissions.
//
// Checksums: the switch forwards frames byte for byte and never computes
// checksums. A veth whose other end has TX checksum offload on delivers
// TCP segments with a partial (unfilled) checksum, which the receiving
// host then drops: ping works, TCP times out. Turn offload off on the far
// end of every veth (`ethtool -K IF tx off`); `pseudocong testbed up`
// does this for its namespace hosts.
//
// A port is its interface name: when the interface goes down, or is
// deleted and created again, the port reports link down, its socket
// rebinds to the interface of that name once it is up, and only then is
// link down cleared (see Port). The port number stays.
//
// Port numbers are the caller's choice; the switch command numbers
// --port flags 1, 2, … in the order given, so they are stable across
// restarts and match `ovs-ofctl show`.
package afport
