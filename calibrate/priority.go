package calibrate

import (
	"fmt"
	"math/rand/v2"
)

// Priority patterns of paper 000 Fig. 5–8.
const (
	PatternAscending  = "ascending"
	PatternDescending = "descending"
	PatternConstant   = "constant"
	PatternRandom     = "random"
)

// Patterns lists the patterns in the order calibrate runs them:
// ascending first, because its fill also probes the table's capacity.
var Patterns = []string{PatternAscending, PatternDescending, PatternConstant, PatternRandom}

// PriorityGen yields the priorities of one pattern. Probe rules stay in
// [2, 65000]: priority 0/1 is below every probe rule (calibrate's guard)
// and the top is left to the switch's own rules.
type PriorityGen struct {
	pattern string
	next    int
	rng     *rand.Rand
}

// NewPriorityGen returns the generator for pattern (seeded for random).
func NewPriorityGen(pattern string, seed uint64) *PriorityGen {
	g := &PriorityGen{pattern: pattern, rng: rand.New(rand.NewPCG(seed, 0x9e3779b9))}
	switch pattern {
	case PatternAscending:
		g.next = 2
	case PatternDescending:
		g.next = 65000
	}
	return g
}

// ValidPattern reports an unknown pattern name.
func ValidPattern(p string) error {
	for _, q := range Patterns {
		if p == q {
			return nil
		}
	}
	return fmt.Errorf("unknown priority pattern %q (known: %v)", p, Patterns)
}

// Next returns the next priority.
func (g *PriorityGen) Next() uint16 {
	switch g.pattern {
	case PatternAscending:
		p := g.next
		g.next = min(g.next+1, 65000)
		return uint16(p)
	case PatternDescending:
		p := g.next
		g.next = max(g.next-1, 2)
		return uint16(p)
	case PatternRandom:
		return uint16(2 + g.rng.IntN(64999))
	}
	return 32768
}
