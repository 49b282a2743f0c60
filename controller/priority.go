package controller

import "fmt"

// PriorityStrategy chooses the priority of each flow the reactive app
// installs: the knob of paper 000's experiment 2.3, because a TCAM that
// keeps entries highest-priority-first must shift every lower entry when a
// higher one arrives.
type PriorityStrategy int

const (
	// PriorityConstant gives every flow the same priority (no TCAM moves).
	PriorityConstant PriorityStrategy = iota
	// PriorityAscending counts up per switch from 1 (each new flow outranks
	// all earlier ones: the worst case for a highest-first TCAM), capped at
	// 65535.
	PriorityAscending
	// PriorityDescending counts down per switch from 65535, floored at 1.
	PriorityDescending
)

// DefaultConstantPriority is the priority of PriorityConstant flows: above
// OpenFlow's 0 so that a low-priority catch-all rule stays below them.
const DefaultConstantPriority uint16 = 100

func (p PriorityStrategy) String() string {
	switch p {
	case PriorityConstant:
		return "constant"
	case PriorityAscending:
		return "ascending"
	case PriorityDescending:
		return "descending"
	}
	return fmt.Sprintf("PriorityStrategy(%d)", int(p))
}

// ParsePriorityStrategy parses "constant", "ascending" or "descending".
func ParsePriorityStrategy(s string) (PriorityStrategy, error) {
	for _, p := range []PriorityStrategy{PriorityConstant, PriorityAscending, PriorityDescending} {
		if s == p.String() {
			return p, nil
		}
	}
	return 0, fmt.Errorf("unknown priority strategy %q (want constant, ascending or descending)", s)
}

// priorityCounter hands out the priorities of one switch.
type priorityCounter struct {
	strategy PriorityStrategy
	constant uint16
	next     uint16
}

func newPriorityCounter(s PriorityStrategy, constant uint16) priorityCounter {
	c := priorityCounter{strategy: s, constant: constant}
	switch s {
	case PriorityAscending:
		c.next = 1
	case PriorityDescending:
		c.next = 0xffff
	}
	return c
}

// Next returns the priority for the next flow.
func (c *priorityCounter) Next() uint16 {
	p := c.next
	switch c.strategy {
	case PriorityAscending:
		if c.next < 0xffff {
			c.next++
		}
	case PriorityDescending:
		if c.next > 1 {
			c.next--
		}
	default:
		p = c.constant
	}
	return p
}

// Nth is the priority the k-th flow (0-based) of a fresh counter gets
// under this strategy, with the default constant; an error where the
// pattern runs out of the 1..65535 range (the counter itself saturates
// there instead). The simulator's and the live backend's preinstalled
// rules use it so that they are numbered as the reactive app numbers.
func (p PriorityStrategy) Nth(k int) (uint16, error) {
	var v int
	switch p {
	case PriorityAscending:
		v = 1 + k
	case PriorityDescending:
		v = 0xffff - k
	default:
		v = int(DefaultConstantPriority)
	}
	if v < 1 || v > 0xffff {
		return 0, fmt.Errorf("rule %d of the %s pattern falls outside 1..65535", k, p)
	}
	return uint16(v), nil
}
