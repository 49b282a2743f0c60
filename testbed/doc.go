// Package testbed builds the live topology of one Linux host: a network
// namespace per probe host, each joined to the root namespace by a veth
// pair whose root end becomes a port of the software switch (or of Open
// vSwitch). It uses netlink and netns directly; nothing is shelled out.
//
// Names carry the testbed's name as prefix, so several testbeds (or
// concurrently running tests) never collide:
//
//	namespace   <name>-h<N>      (ip netns list shows it)
//	switch port <name>-s<N>      root namespace, up, no address, IPv6 off
//	host iface  eth0             inside <name>-h<N>: 10.0.0.N/24,
//	                             MAC 02:70:63:00:00:NN, IPv6 off,
//	                             TX checksum offload off
//	chain link  <name>-l<i>a     switch i's port 2, and its peer
//	            <name>-l<i>b     switch i+1's port 1 (Config.Chain)
//
// TX checksum offload must be off at the namespace end: a veth hands
// frames with a partial checksum (CHECKSUM_PARTIAL) to whatever reads it,
// and a userspace switch that forwards them through AF_PACKET delivers a
// frame whose TCP checksum was never filled in, so every TCP connection
// times out while ping works. Up turns it off with the SIOCETHTOOL ioctl
// (ETHTOOL_STXCSUM), which is what `ethtool -K eth0 tx off` does.
//
// IPv6 is disabled on both ends so router solicitations and duplicate
// address detection add no unsolicited frames (and Packet-Ins) to a
// measurement.
//
// Up is idempotent (it converges to the wanted topology, adding what is
// missing and removing surplus hosts) and removes everything it built when
// it fails. Down and Status find a testbed by its prefix, so they work
// even without the state file Up writes (a summary for other tools).
package testbed
