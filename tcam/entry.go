package tcam

// Entry is one rule as the TCAM and the classifier hold it.
//
// Priority is wider than OpenFlow's 16 bits on purpose: OpenFlow 1.0 says an
// exact-match rule (no wildcards) outranks every wildcard rule whatever its
// priority, so callers map the OpenFlow priority into this space (for
// example exact-match rules at 0x10000 + priority) before building an Entry.
// Within this package a larger Priority always wins.
type Entry struct {
	Rule     Ternary
	Priority uint32
	// ID names the rule and doubles as its action pointer: the switch keeps
	// actions and counters outside the TCAM, keyed by ID. IDs are unique
	// within one TCAM or classifier, and callers allocate them in increasing
	// order, so "lower ID" means "installed earlier".
	ID uint64
}

// TieBreak decides which of two matching entries of equal priority wins.
// OpenFlow 1.0 leaves that case undefined; a TCAM decides it by position,
// so the layout fixes it. The classifier and any reference must be given
// the same TieBreak as the TCAM whose answers they are to reproduce.
type TieBreak uint8

const (
	// LowerIDWins: the earlier-installed rule wins a tie. This is what a
	// highest-first layout gives when new rules go after existing rules of
	// equal priority (so that equal-priority inserts cost no moves).
	LowerIDWins TieBreak = iota
	// HigherIDWins: the later-installed rule wins a tie. This is what the
	// lowest-first layout gives, for the same reason mirrored.
	HigherIDWins
)

// String names the tie-break for logs and reports.
func (tb TieBreak) String() string {
	switch tb {
	case LowerIDWins:
		return "lower-id-wins"
	case HigherIDWins:
		return "higher-id-wins"
	default:
		return "unknown-tie-break"
	}
}

// Outranks reports whether a wins over b when both match a packet: higher
// Priority first, then the tie-break on ID. It is a strict total order on
// entries with distinct IDs.
func (tb TieBreak) Outranks(a, b *Entry) bool {
	if a.Priority != b.Priority {
		return a.Priority > b.Priority
	}
	if tb == HigherIDWins {
		return a.ID > b.ID
	}
	return a.ID < b.ID
}
