package tcam

import (
	"math/rand/v2"
	"testing"
)

// bruteMin is the fewest moves of any single-chain insert of e into tc
// (each entry moving at most once; with dir +1 only chains whose every
// move goes down, -1 up, 0 any mix) such that
// every intermediate state answers lookups as the old table and the final
// state as the new one, under the same dependency model as the layouts
// (overlapping pairs in rank order). It searches exhaustively up to limit
// moves and returns limit+1 when no chain of at most limit moves exists.
func bruteMin(tc *TCAM, e Entry, limit, dir int) int {
	n := len(tc.slots)
	var ents []Entry
	pos := []int{}
	for s := range n {
		if tc.slots[s].valid {
			ents = append(ents, tc.slots[s].e)
			pos = append(pos, s)
		}
	}
	ents = append(ents, e) // index m is e
	m := len(ents) - 1
	ov := make([][]bool, m+1)
	wins := make([][]bool, m+1)
	for i := range ents {
		ov[i] = make([]bool, m+1)
		wins[i] = make([]bool, m+1)
		for j := range ents {
			ov[i][j] = i != j && overlaps(&ents[i].Rule, &ents[j].Rule)
			wins[i][j] = tc.tie.Outranks(&ents[i], &ents[j])
		}
	}
	occupant := make([]int, n) // entry index with its live copy in the slot, or -1
	for s := range occupant {
		occupant[s] = -1
	}
	for i, s := range pos {
		occupant[s] = i
	}
	// valid checks the entries 0..count-1 (count = m, or m+1 with e
	// placed) by effective slot: the live copy, or the stale one if lower.
	valid := func(count, staleEnt, staleSlot int) bool {
		eff := func(i int) int {
			if i == staleEnt && staleSlot < pos[i] {
				return staleSlot
			}
			return pos[i]
		}
		for i := range count {
			for j := i + 1; j < count; j++ {
				if !ov[i][j] {
					continue
				}
				a, b := i, j
				if !wins[a][b] {
					a, b = b, a
				}
				if eff(a) >= eff(b) {
					return false
				}
			}
		}
		return true
	}
	pos = append(pos, -1)
	moved := make([]bool, m)
	final := func(slot int) bool {
		pos[m] = slot
		ok := valid(m+1, -1, -1)
		pos[m] = -1
		return ok
	}
	// search: target is the slot the next write goes to (free, or the
	// stale slot the previous move left); depth moves made so far.
	var search func(target, depth, budget int) bool
	search = func(target, depth, budget int) bool {
		if final(target) {
			return true
		}
		if depth == budget {
			return false
		}
		for r := range m {
			if moved[r] || (dir != 0 && (target-pos[r])*dir <= 0) {
				continue
			}
			from := pos[r]
			moved[r] = true
			pos[r] = target
			occupant[target], occupant[from] = r, -1
			if valid(m, r, from) && search(from, depth+1, budget) {
				pos[r], occupant[from], occupant[target], moved[r] = from, r, -1, false
				return true
			}
			pos[r], occupant[from], occupant[target], moved[r] = from, r, -1, false
		}
		return false
	}
	for budget := 0; budget <= limit; budget++ {
		for s := range n {
			if occupant[s] == -1 && search(s, 0, budget) {
				return budget
			}
		}
	}
	return limit + 1
}

// TestRuleTrisMinimalAgainstBruteForce: on random tables of at most 12
// slots with overlapping rules, RuleTris never makes more moves than the
// exhaustive search over one-direction chains (the class of plans it
// searches) finds, and FastRule never fewer. Chains that change direction
// are outside that class and sometimes shorter (a displaced rule with no
// dependencies could jump back to a free slot on the other side); the
// test counts those cases rather than hiding them.
func TestRuleTrisMinimalAgainstBruteForce(t *testing.T) {
	cases := 2000
	if testing.Short() {
		cases = 300
	}
	compared, refused, greedyWorse, withMoves, beyond, mixedShorter := 0, 0, 0, 0, 0, 0
	for c := range cases {
		rng := rand.New(rand.NewPCG(uint64(c), 99))
		u := universe{rng}
		n := 3 + rng.IntN(10)
		// A quarter of the tables are filled by highest-first and have
		// holes on both sides of an insert point (rank-ordered tables are
		// valid dependency-graph tables too); the rest by RuleTris.
		fill := RuleTris()
		if c%4 >= 2 {
			fill = HighestFirst()
		}
		tc := mustNew(t, n, fill)
		id := uint64(1)
		for range 3 * n {
			if tc.Len() > 0 && rng.IntN(4) == 0 {
				v := tc.valid[rng.IntN(len(tc.valid))]
				if _, err := tc.Delete(tc.slots[v].e.ID); err != nil {
					t.Fatal(err)
				}
				continue
			}
			if tc.Full() {
				break
			}
			e := Entry{Rule: u.randomRule(), Priority: uint32(rng.IntN(6)), ID: id}
			if c%8 == 3 { // every rule matches everything: a total order
				e.Rule = Ternary{}
			}
			if c%2 == 1 { // ascending priorities: long chains
				e.Priority = uint32(id)
			}
			id++
			if _, err := tc.Insert(e); err != nil && !isErr(err, ErrNoPlacement) {
				t.Fatal(err)
			}
		}
		if tc.Full() {
			v := tc.valid[rng.IntN(len(tc.valid))]
			if _, err := tc.Delete(tc.slots[v].e.ID); err != nil {
				t.Fatal(err)
			}
		}
		tc.layout = RuleTris()
		e := Entry{Rule: u.randomRule(), Priority: uint32(rng.IntN(6)), ID: id}
		if c%8 == 3 {
			e.Rule = Ternary{}
		}
		if c%2 == 1 { // somewhere among the ascending priorities
			e.Priority = uint32(rng.IntN(int(id)))
		}
		got, err := tc.InsertCost(e)
		if isErr(err, ErrNoPlacement) {
			refused++
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		lim := int(got.Moves)
		best := min(bruteMin(tc, e, lim, +1), bruteMin(tc, e, lim, -1))
		if int(got.Moves) > best {
			t.Fatalf("case %d (%d slots, %d entries): ruletris %d moves, brute force over one-direction chains %d", c, n, tc.Len(), got.Moves, best)
		}
		if bruteMin(tc, e, lim, 0) < int(got.Moves) {
			mixedShorter++
		}
		compared++
		if got.Moves > 0 {
			withMoves++
		}
		if best > int(got.Moves) {
			beyond++ // a general plan (relocation) no single chain matches
		}
		// FastRule planning on the same table (same slots, its own chain).
		fr := *tc
		fr.layout = FastRule()
		if g, err := fr.InsertCost(e); err == nil {
			if g.Moves < got.Moves {
				t.Fatalf("case %d: fastrule %d moves beats ruletris %d", c, g.Moves, got.Moves)
			}
			if g.Moves > got.Moves {
				greedyWorse++
			}
		}
	}
	t.Logf("%d cases compared (%d needing moves, %d only by a relocation no one-direction chain matches), %d refused (ErrNoPlacement); fastrule worse than ruletris in %d; a mixed-direction chain shorter than ruletris in %d",
		compared, withMoves, beyond, refused, greedyWorse, mixedShorter)
	if compared < cases/2 {
		t.Fatalf("only %d of %d cases compared", compared, cases)
	}
}
