// Package dataplane is the placement logic of the switch's flow table as
// hardware holds it: a small TCAM used as a cache in front of a larger
// backing table (the switch chip's on-chip memory / the agent's software
// table, paper 000 §1.2), with a pluggable eviction policy (LRU by
// default) and the TCAM cost of every change.
//
// It knows nothing of OpenFlow, clocks or the agent: it takes tcam.Entry
// values keyed by the flow table's entry IDs, decides where each lives,
// drives the tcam model and returns what each change cost (chip operations
// and the local-CPU driver time of tcam.Timing). The software switch's
// modelled pipeline (package softswitch/pipeline) charges that time to the
// agent's CPU and holds packets meanwhile.
//
// # Placement
//
//   - Add (a new rule from a FLOW_MOD): into the TCAM if a slot is free;
//     otherwise the eviction policy picks a TCAM entry, it is invalidated
//     and moved to the backing table, and the new rule is inserted in the
//     freed TCAM (full cost: one invalidate plus the insert with its
//     shifts). If the backing table is full too, Add fails with ErrFull
//     (the switch answers ALL_TABLES_FULL).
//   - SwapIn (a packet's rule lives only in the backing table): the same
//     eviction-plus-insert into the TCAM, the swapped rule leaving the
//     backing table. Paper 000 §3.2's experiment depends on this cost.
//   - Remove: an invalidate if the rule is in the TCAM, free in the backing
//     table. Nothing is promoted into the hole; rules come back on demand.
//   - Preload: places a rule in the TCAM or the backing table at no
//     modelled cost and without the eviction policy, for experiment set-up
//     (a base load of L rules). It fails rather than evict.
//
// # Which rule a packet uses
//
// The backing table plus the TCAM hold every rule, and the software
// switch's classifier over all rules is authoritative: a packet's rule is
// the best match over the whole rule set, wherever that rule lives. If it
// lives in the backing table the packet waits for a swap-in. A real
// TCAM-as-cache must also guarantee this (a lower-priority overlapping rule
// in the TCAM must not answer for a higher one still in the backing table;
// CAB, paper 000 ref. [4], does it by caching dependent rules); the model
// assumes the switch gets it right and only prices the one swap-in.
//
// # Eviction
//
// An Eviction sees every entry enter and leave the TCAM and every TCAM hit,
// and names the victim when a slot is needed. EvictionByName knows "lru"
// (default: least recently inserted or hit) and "fifo" (oldest insert).
//
// A Table is not safe for concurrent use; its owner serialises calls.
package dataplane
