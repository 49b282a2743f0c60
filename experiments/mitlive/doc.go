// Package mitlive is the live confirmation of the mitigations (issue 11
// item 5): the comparison that docs/mitigations.md makes in the
// simulator, made again with real Linux TCP on the live backend's
// testbed. Every variant is one kernel connect() run of package
// experiments/live (live-check's: 100 connects at 100/s from host 1 to
// host 2 through a `pseudocong switch` on 1 000 base rules, ascending
// priorities, the reactive controller), with a switch profile derived
// from the base one (the variant's TCAM layout and Packet-In policy,
// written to a temporary profile file), cover rules pushed with the base
// load, or Linux TCP knobs set in the client's namespace only
// (net.ipv4.tcp_*, a per-route rto_min); the host's own settings are
// never touched. Each run reads the client's and the server's kernel
// counters (nstat: TcpExtTCPSynRetrans, TcpExtTCPTimeouts) around the
// connects, and every connection echoes a few kilobytes after its
// handshake so data RTOs have data to time out on.
//
// Rounds repeat the whole comparison on fresh testbeds; the output is a
// markdown table and a JSON document (Result.Write) with the median and
// range over rounds, the cut against the first variant (the baseline),
// and the must-show judged on these numbers (Result.Verdicts).
package mitlive
