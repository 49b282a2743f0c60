// Package flowtable holds the OpenFlow 1.0 flow-table semantics of the
// software switch, with no I/O and no clock of its own: entries (match,
// priority, cookie, timeouts, flags, actions, counters), the FLOW_MOD
// commands ADD / MODIFY / MODIFY_STRICT / DELETE / DELETE_STRICT, overlap
// checking, the out_port filter, idle and hard timeouts, and lookups.
//
// Lookups go through a tcam.Classifier. OpenFlow 1.0 says an exact-match
// entry (no wildcards) outranks every wildcard entry whatever its priority,
// so entries are placed in the classifier at an effective priority:
// 0x10000 + priority for exact-match entries, priority for the others
// (EffectivePriority).
//
// Time is passed in by the caller (the switch core, which owns the clock),
// so the same table runs on the wall clock and inside the simulator.
//
// Every change (entry added, modified, removed) is reported through a
// Listener so that a later layer (the TCAM cache in front of the backing
// table) can mirror the table without the table knowing about it.
//
// A Table is not safe for concurrent use; the switch core guards it.
package flowtable
