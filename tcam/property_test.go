package tcam

import (
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
)

// TestTCAMClassifierReferenceAgree runs random sequences of inserts and
// deletes of overlapping wildcard rules (few priority levels, so ties are
// common; IDs in random order, so tie-breaks do not follow insertion
// order) against a small TCAM, a classifier and the naive reference, and
// after every operation compares their answers for random packets. Inserts
// into a full TCAM must fail without changing anything; InsertCost must
// predict every insert's cost exactly.
func TestTCAMClassifierReferenceAgree(t *testing.T) {
	seeds := 40
	if testing.Short() { // the race phase: one goroutine, so a few seeds show as much
		seeds = 2
	}
	for _, l := range allLayouts(t) {
		kinds := []string{"overlapping", "disjoint"}
		if _, ok := l.(hermesLayout); ok {
			// Nested prefixes: rules that overlap main-slice rules that
			// outrank them, and that hermes can split in a few pieces.
			kinds = append(kinds, "nested")
		}
		for _, rules := range kinds {
			for _, cacheSlots := range []int{0, 64} {
				for seed := uint64(1); seed <= uint64(seeds); seed++ {
					name := fmt.Sprintf("%s%s/%s/cache=%d/seed=%d", l.Name(), hermesShare(l), rules, cacheSlots, seed)
					t.Run(name, func(t *testing.T) { runAgreement(t, l, rules, cacheSlots, seed) })
				}
			}
		}
	}
	t.Logf("hermes: %d inserts split, %d deletes repaired split rules first", splitsTotal.Load(), repairsTotal.Load())
	// Under -short (the race phase: two seeds) the paths may go unvisited;
	// the full run in the integration phase must visit both.
	if !testing.Short() && (splitsTotal.Load() == 0 || repairsTotal.Load() == 0) {
		t.Errorf("the nested rule sets never made hermes split (%d) or repair before a delete (%d): the splitting paths went untested", splitsTotal.Load(), repairsTotal.Load())
	}
}

// hermesShare is a hermes layout's shadow share ("" for other layouts),
// so the two hermes layouts get distinct subtest names.
func hermesShare(l Layout) string {
	if h, ok := l.(hermesLayout); ok {
		return fmt.Sprintf("-%g", h.frac)
	}
	return ""
}

var splitsTotal, repairsTotal atomic.Int64

func runAgreement(t *testing.T, l Layout, rules string, cacheSlots int, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 42))
	u := universe{rng}
	slots := 4 + rng.IntN(40)
	tc := mustNew(t, slots, l)
	cl := NewClassifier(l.TieBreak(), cacheSlots)
	ref := newReference(l.TieBreak())

	ids := rng.Perm(10000) // unique IDs in random order
	nextID := 0
	var live []uint64
	fullSeen := 0
	refused := 0

	for op := range 300 {
		if len(live) > 0 && rng.IntN(10) < 4 {
			i := rng.IntN(len(live))
			id := live[i]
			live[i] = live[len(live)-1]
			live = live[:len(live)-1]
			repair := false
			for _, sp := range tc.split {
				for _, c := range sp.cutters {
					repair = repair || c == id
				}
			}
			// Deleting a rule that split rules were cut around migrates
			// them first: every chip write of that must leave lookups as
			// the old table (the rule itself goes with the last one).
			dprobes := probesFor(u, ref, live, Entry{})
			tc.afterChipWrite = func() {
				if _, still := tc.where[id]; still && cacheSlots == 0 && partlyIn(tc, id) {
					if m := mismatchWith(tc, ref, nil, dprobes); m != "" {
						t.Fatalf("op %d, delete %d (repair %v): %s", op, id, repair, m)
					}
				}
			}
			if _, err := tc.Delete(id); err != nil {
				t.Fatalf("op %d: %v", op, err)
			}
			tc.afterChipWrite = nil
			if repair {
				repairsTotal.Add(1)
			}
			if _, err := cl.Delete(id); err != nil {
				t.Fatalf("op %d: %v", op, err)
			}
			delete(ref.entries, id)
		} else {
			e := Entry{Rule: u.randomRule(), Priority: uint32(rng.IntN(6)), ID: uint64(ids[nextID])}
			switch rules {
			case "disjoint":
				e.Rule = u.disjointRule(e.ID)
			case "nested":
				e.Rule = u.nestedRule()
			}
			if rng.IntN(8) == 0 {
				e.Priority = 0x10000 + uint32(rng.IntN(3)) // "exact-match" band
			}
			nextID++
			pred, perr := tc.InsertCost(e)
			// Every chip write of the insert must leave lookups right: the
			// old rule set until the last write, which installs e.
			// (The TCAM sees the same operations whatever the classifier's
			// cache, so the cache=0 run checks them.)
			probes := probesFor(u, ref, live, e)
			writes, total := int64(0), pred.Writes+pred.Invalidates
			tc.afterChipWrite = func() {
				if cacheSlots != 0 {
					writes++
					return
				}
				writes++
				var extra *Entry
				if writes == total {
					extra = &e
				} else if _, ok := tc.layout.(hermesLayout); ok && partlyIn(tc, e.ID) {
					// Hermes writing e's pieces one by one: each packet
					// sees the old table or the new one (per-packet
					// consistency), not all of them flip at one write.
					if m := mismatchEither(tc, ref, &e, probes); m != "" {
						t.Fatalf("op %d, chip write %d of %d (pieces): %s", op, writes, total, m)
					}
					return
				}
				if m := mismatchWith(tc, ref, extra, probes); m != "" {
					t.Fatalf("op %d, chip write %d of %d: %s", op, writes, total, m)
				}
			}
			c, err := tc.Insert(e)
			tc.afterChipWrite = nil
			if _, ok := tc.split[e.ID]; ok && err == nil {
				splitsTotal.Add(1)
			}
			if err == nil && writes != total {
				t.Fatalf("op %d: %d chip writes, cost says %d", op, writes, total)
			}
			if tc.Len() == tc.Usable() && err != nil {
				fullSeen++
			}
			switch {
			case isErr(err, ErrNoPlacement) && !rankOrdered(l):
				if !isErr(perr, ErrNoPlacement) {
					t.Fatalf("op %d: insert refused but InsertCost said %v", op, perr)
				}
				refused++
			case isErr(err, ErrFull):
				if !isErr(perr, ErrFull) {
					t.Fatalf("op %d: insert full but InsertCost said %v", op, perr)
				}
			case err != nil:
				t.Fatalf("op %d: %v", op, err)
			default:
				if perr != nil || pred != c {
					t.Fatalf("op %d: cost %+v, predicted %+v (%v)", op, c, pred, perr)
				}
				if err := cl.Insert(e); err != nil {
					t.Fatalf("op %d: %v", op, err)
				}
				ref.entries[e.ID] = e
				live = append(live, e.ID)
			}
			if rng.IntN(4) == 0 { // the layout's background work, if any
				probes := probesFor(u, ref, live, Entry{})
				tc.afterChipWrite = func() {
					if cacheSlots != 0 {
						return
					}
					if m := mismatchWith(tc, ref, nil, probes); m != "" {
						t.Fatalf("op %d, background: %s", op, m)
					}
				}
				if _, err := tc.Background(); err != nil {
					t.Fatalf("op %d: background: %v", op, err)
				}
				tc.afterChipWrite = nil
			}
		}
		checkInvariants(t, tc)
		if cl.Len() != tc.Len() || len(ref.entries) != tc.Len() {
			t.Fatalf("op %d: sizes tcam %d classifier %d reference %d", op, tc.Len(), cl.Len(), len(ref.entries))
		}
		agreeOn(t, op, u, tc, cl, ref, live)
	}
	if refused > 0 {
		t.Logf("%d inserts refused with ErrNoPlacement", refused)
		refusedTotal.Add(int64(refused))
	}
	if fullSeen == 0 && slots < 30 {
		t.Logf("seed %d never filled the TCAM", seed)
	}
}

var refusedTotal atomic.Int64

// partlyIn reports whether some slot already holds a copy of entry id.
func partlyIn(tc *TCAM, id uint64) bool {
	for _, s := range tc.valid {
		if tc.slots[s].e.ID == id {
			return true
		}
	}
	return false
}

// mismatchEither is mismatchWith for a state between the old table and
// the old table plus extra: each probe must get one of the two answers.
func mismatchEither(tc *TCAM, ref *reference, extra *Entry, probes []Key) string {
	for _, k := range probes {
		one := []Key{k}
		if mismatchWith(tc, ref, nil, one) != "" {
			if m := mismatchWith(tc, ref, extra, one); m != "" {
				return m
			}
		}
	}
	return ""
}

// probesFor returns packets near some live rules and near e.
func probesFor(u universe, ref *reference, live []uint64, e Entry) []Key {
	probes := []Key{u.packetNear(e.Rule), u.fields().Key()}
	for range 6 {
		if len(live) > 0 {
			probes = append(probes, u.packetNear(ref.entries[live[u.rng.IntN(len(live))]].Rule))
		}
	}
	return probes
}

// mismatchWith compares TCAM lookups (without charging them) with the
// reference plus extra (if not nil) on the probes.
func mismatchWith(tc *TCAM, ref *reference, extra *Entry, probes []Key) string {
	for _, k := range probes {
		want, wantOK := ref.lookup(k)
		if extra != nil && extra.Rule.Matches(&k) && (!wantOK || ref.tie.Outranks(extra, &want)) {
			want, wantOK = *extra, true
		}
		got, gotOK := Entry{}, false
		for _, s := range tc.valid {
			if tc.slots[s].e.Rule.Matches(&k) {
				got, gotOK = tc.slots[s].e, true
				break
			}
		}
		if gotOK != wantOK || (gotOK && got.ID != want.ID) {
			return fmt.Sprintf("key %x: tcam id %d (%v), reference id %d (%v)", k, got.ID, gotOK, want.ID, wantOK)
		}
	}
	return ""
}

func agreeOn(t *testing.T, op int, u universe, tc *TCAM, cl *Classifier, ref *reference, live []uint64) {
	t.Helper()
	for range 30 {
		var k Key
		if len(live) > 0 && u.rng.IntN(3) > 0 {
			k = u.packetNear(ref.entries[live[u.rng.IntN(len(live))]].Rule)
		} else {
			k = u.fields().Key()
		}
		want, wantOK := ref.lookup(k)
		_, got, gotOK := tc.Lookup(k)
		cg, cgOK := cl.Lookup(k)
		if gotOK != wantOK || cgOK != wantOK || (wantOK && (got.ID != want.ID || cg.ID != want.ID)) {
			t.Fatalf("op %d key %x: reference %d (%v), tcam %d (%v), classifier %d (%v)",
				op, k, want.ID, wantOK, got.ID, gotOK, cg.ID, cgOK)
		}
	}
}
