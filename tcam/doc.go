// Package tcam models the TCAM of an OpenFlow switch chip and provides a
// software classifier that gives the same answers fast.
//
// # The model
//
// A TCAM has a fixed number of slots. Each slot holds a ternary word over
// the OpenFlow 1.0 match key (Key: value and care-mask, see key.go), a
// valid bit and an action pointer (Entry.ID). A lookup compares the key
// with every slot in parallel and the priority encoder returns the first,
// i.e. lowest-index, matching valid slot: one lookup operation, one cycle.
// The TCAM has no notion of priority; the driver gets priorities right by
// where it puts entries, and that placement policy is a Layout.
//
// Every chip operation is counted in a Cost: lookups, writes, reads,
// invalidates and moves, where a move (relocating an entry to another slot)
// is one read plus one write. A Timing turns a Cost into time in two parts:
// chip time (cycles at the chip clock) and the driver's time on the
// switch's local CPU, which on real switches dominates (paper 000's Pica8:
// about 0.3 ms per install plus some 15 µs per moved entry; the calibrated
// figures are the tcam.timing of profile/builtin/pica8-p3297.yaml). The
// agent charges the CPU part to the local CPU's time line. InsertCost prices an insert without doing it, in O(log n).
//
// # Layouts
//
// highest-first (the default; Broadcom, as in paper 000): entries sorted by
// descending priority from slot 0, free space after them. A new entry goes
// right after the last entry that outranks it — after existing entries of
// equal priority, so equal-priority inserts cost nothing and the earlier
// rule wins ties (TieBreak LowerIDWins). If that slot is taken, every entry
// from there to the nearest free slot below moves down one slot. N inserts
// in ascending priority therefore cost N(N−1)/2 moves; constant or
// descending priorities cost none.
//
// lowest-first: the mirror. The driver places the lowest priority first at
// the far end of the table (the last slot) and grows the table toward slot
// 0. Because the priority encoder still favours low slots, higher
// priorities still sit at lower indices; the free space is before the
// entries instead of after them. A new entry goes right before the first
// entry it outranks, i.e. before existing equal priorities, so the later
// rule wins ties (TieBreak HigherIDWins); otherwise entries shift up toward
// the nearest free slot above. Descending inserts cost N(N−1)/2 moves,
// constant or ascending ones none. The tie rule differs between the two
// layouts because in both the new entry goes on the free-space side of its
// equals — the only way equal-priority inserts can be free.
//
// Deletes only clear the valid bit (one invalidate, no moves). The hole is
// reused by a later insert that belongs there, and stops a shift early:
// a shift only runs to the nearest free slot. If no slot is free on a
// layout's growth side, the shift runs the other way instead.
//
// The layouts paper 000's §4 points to as mitigations (docs/tcam-layouts.md
// measures them all from empty to full):
//
//   - gap-K (gapk.go): rank order with free slots among the entries, at
//     least one every K in a row; an insert shifts at most K entries or
//     rebalances the smallest window around it that has room, spreading
//     it evenly (each moved entry's old slot invalidated).
//   - ruletris and fastrule (dag.go): only overlapping rules constrain the
//     order (the rule dependency graph); a new rule takes a free slot
//     between the rules it must follow and precede, else the fewest-move
//     chain in one direction to a free slot (RuleTris, verified against an
//     exhaustive search of one-direction chains on small tables) or a
//     greedy one (FastRule). When a rule it must follow sits below one it
//     must precede, it first relocates one of them; if that fails too the
//     insert is refused with ErrNoPlacement (under 1 % of inserts on the
//     property test's random overlapping rules, none on the report's).
//   - hermes (hermes.go): a shadow slice of 5 % of the slots, above the
//     main one, takes new rules at once; TCAM.Background migrates them
//     into the main slice in batches. Its slots are reserved
//     (TCAM.Usable).
//
// A further layout implements Layout in this package and is added to
// LayoutByName; the executor, the cost accounting and the tests (the
// property test runs every layout LayoutNames lists) stay. The seam stays
// unexported on purpose: a plan is checked against the chip's slots, which
// only this package sees.
//
// Plans are of two shapes. The ordered layouts and the dependency-graph
// layouts' usual case make one chain (below). Rebalancing, relocating and
// migrating need several chains and invalidates: a general plan, which the
// executor checks by simulating it slot by slot (every move reads a live
// entry and writes a free slot or a stale copy; invalidates clear stale
// copies; no stale copy is left) before the first write. Hermes's rule
// splitting adds two steps to general plans: a write of a given entry
// (a piece of the new rule, or a split rule's whole rule as it migrates)
// into a free slot, and the retire of a live piece once its whole rule
// has been written (hermes_split.go). A split rule is the one case where
// one entry holds several slots; its pieces answer as the whole entry,
// and while they are written one by one each packet sees the old table
// or the new one, not all packets switch at one write. The property
// test checks lookups after every single chip write of every plan.
//
// # Move order: lookups never see a wrong answer
//
// A real chip keeps forwarding while the driver rewrites slots, so every
// intermediate state must answer every lookup correctly. A layout's plan is
// a chain of moves executed one chip write at a time: the first move copies
// an entry into a free slot, each later move copies into the slot the
// previous one copied from, and the new entry is written last into the slot
// the last move copied from. For a shift down that means bottom up: the
// last entry of the run is written into the free slot below it, then the
// one above it into its old slot, and so on up to the insert position.
// After each write exactly one entry is present twice, in adjacent slots,
// and nothing is missing, so the
// sequence of distinct entries seen in lookup order — and with it the
// first match for every key — is exactly that of the old table. The final
// write replaces a duplicate with the new entry, switching atomically to
// the new table. Shifts up are the mirror (top down). Doing a shift in the
// other order overwrites an entry before it has been copied and loses it;
// interleave_test.go checks the right order after every single chip write
// and checks that the wrong order is caught.
//
// # Software lookups
//
// The model's Lookup scans the slots; that is the reference, not something
// to run per packet. Classifier is a tuple-space search (as in Open
// vSwitch): one hash table per distinct mask, probed in order of the best
// entry each holds, stopping when no remaining table can win, with a
// bounded exact-match cache in front that is invalidated by a generation
// counter on every change. Given the same TieBreak and entries it answers
// exactly as the TCAM does; the property test checks TCAM, classifier and
// a naive reference against each other. Mirror keeps a TCAM and a
// classifier in step, answering lookups from the classifier while
// charging the TCAM for them.
//
// Priorities are uint32 so callers can map OpenFlow 1.0's rule that
// exact-match entries outrank all wildcard entries into the number itself
// (see Entry).
//
// Nothing here is safe for concurrent use; the switch pipeline owns it.
package tcam
