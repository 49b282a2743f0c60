// Package packet parses and builds the frames the testbed puts on its
// links and in its OpenFlow messages: Ethernet II, one 802.1Q tag, ARP
// (Ethernet/IPv4), IPv4 (with DSCP and the ECN field), TCP (all nine flags
// including ECE and CWR; MSS, window scale, SACK-permitted, SACK and
// timestamp options; unknown options skipped), UDP and ICMP echo.
//
// Why it exists: packet parsing and building had grown in six places, with
// the IPv4 EtherType declared five times and the Internet checksum written
// three times. This package is the one place for the constants (EtherTypes,
// IP protocols, TCP flags, ECN codepoints), the one Internet checksum (RFC
// 1071, with the TCP/UDP pseudo-header, and the RFC 1624 incremental update
// that header rewrites need) and the one codec.
//
// Shape: like gopacket's DecodingLayerParser and like the openflow codec of
// this repository. A caller-owned Packet is filled in place by
// DecodeFromBytes, which allocates nothing (slices alias the frame) and
// never panics on any input: malformed or truncated headers give an *Error
// (errors.Is(err, ErrTruncated) for the latter). Packet.AppendBinary
// appends a frame to the caller's buffer, deriving EtherTypes, lengths and
// every checksum. The layer types have their own DecodeFromBytes for
// callers that start mid-frame.
//
// gopacket (already a dependency) stays the reference: the tests build
// random packets here and decode them with gopacket, and the other way
// round, and require equal fields and checksums. The software switch keeps
// its own zero-allocation 12-tuple extractor (softswitch/flowtable), which
// follows OpenFlow 1.0's leniency rules; a property test here keeps the two
// equal on every frame this package accepts.
//
// Not covered: IPv6, 802.3 LLC/SNAP framing (an EtherType below 0x0600 is
// left undecoded), stacked VLAN tags, IP option semantics (options are
// kept as raw bytes, only their framing is checked) and reassembly.
//
// This package imports nothing else of the project.
package packet
