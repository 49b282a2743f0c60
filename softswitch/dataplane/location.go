package dataplane

// Location is where a rule lives.
type Location uint8

const (
	// Absent: the table does not hold the rule.
	Absent Location = iota
	// InTCAM: the rule is in the TCAM; packets hit it at the hit delay.
	InTCAM
	// InBacking: the rule is only in the backing table; a packet that
	// needs it waits for a swap-in.
	InBacking
)

// String names the location for logs, metrics and reports.
func (l Location) String() string {
	switch l {
	case Absent:
		return "absent"
	case InTCAM:
		return "tcam"
	case InBacking:
		return "backing"
	default:
		return "unknown-location"
	}
}
