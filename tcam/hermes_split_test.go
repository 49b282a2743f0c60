package tcam

import "testing"

// srcRule matches IPv4 sources in 10.0.0.0+base/plen.
func srcRule(base uint32, plen int) Ternary {
	m := fieldMask(Fields{DlType: 0xffff, NwSrc: ^uint32(0) << (32 - plen)})
	v := Fields{DlType: 0x0800, NwSrc: 0x0a000000 | base}.Key()
	return Ternary{Value: v.Masked(&m), Mask: m}
}

func srcKey(last uint32) Key { return Fields{DlType: 0x0800, NwSrc: 0x0a000000 | last}.Key() }

// TestSubtractPiecesAreExact: the pieces of r less h are disjoint, inside
// r, outside h, and together they are r less h, checked on every key the
// rules tell apart (the last 6 bits of the source).
func TestSubtractPiecesAreExact(t *testing.T) {
	for _, c := range []struct {
		r, h   Ternary
		pieces int
	}{
		{srcRule(0, 26), srcRule(5, 32), 6},  // one bit per bit h adds
		{srcRule(0, 30), srcRule(0, 31), 1},  // the other half
		{srcRule(0, 30), srcRule(0, 28), 0},  // h covers r: nothing left
		{srcRule(0, 30), srcRule(8, 30), 1},  // disjoint: r itself
		{srcRule(16, 28), srcRule(0, 26), 0}, // h covers r again
	} {
		got := subtract(c.r, &c.h, nil)
		if len(got) != c.pieces {
			t.Errorf("%v less %v: %d pieces, want %d", c.r, c.h, len(got), c.pieces)
		}
		for last := uint32(0); last < 64; last++ {
			k := srcKey(last)
			in := 0
			for i := range got {
				if got[i].Matches(&k) {
					in++
				}
			}
			want := c.r.Matches(&k) && !c.h.Matches(&k)
			if in > 1 || (in == 1) != want {
				t.Fatalf("key .%d: in %d pieces, want in r less h = %v", last, in, want)
			}
		}
	}
	if _, ok := splitRule(srcRule(0, 26), []*Ternary{ptr(srcRule(5, 32))}, 5); ok {
		t.Error("a 6-piece split was allowed under a limit of 5")
	}
}

func ptr(t Ternary) *Ternary { return &t }

// hermesWithMain builds a 20-slot hermes TCAM (shadow of 6, splits of at
// most 3 pieces) whose main slice holds, packed from slot 6 down, rule 1
// (10.0.0.0/32, priority 10) and two unrelated rules of priorities 3 and
// 2, migrated there by the background job. A rule of priority 5 belongs
// between them: into main it costs 2 moves and a write.
func hermesWithMain(t *testing.T) *TCAM {
	t.Helper()
	tc := mustNew(t, 20, Hermes(0.3))
	for i, e := range []Entry{
		{Rule: srcRule(0, 32), Priority: 10, ID: 1},
		{Rule: srcRule(32, 32), Priority: 2, ID: 2},
		{Rule: srcRule(33, 32), Priority: 3, ID: 3},
	} {
		if _, err := tc.Insert(e); err != nil {
			t.Fatalf("insert %d: %v", i, err)
		}
	}
	if _, err := tc.Background(); err != nil {
		t.Fatal(err)
	}
	if s, _ := tc.SlotOf(1); s < 6 {
		t.Fatalf("rule 1 still in the shadow (slot %d)", s)
	}
	return tc
}

func TestHermesSplitsAroundOutrankingMainRule(t *testing.T) {
	tc := hermesWithMain(t)
	// e overlaps rule 1 in main, which outranks it: whole in the shadow
	// it would take 10.0.0.0 from rule 1.
	e := Entry{Rule: srcRule(0, 30), Priority: 5, ID: 10}
	pred, err := tc.InsertCost(e)
	if err != nil {
		t.Fatal(err)
	}
	c, err := tc.Insert(e)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, tc)
	sp, ok := tc.split[e.ID]
	if !ok || len(sp.pieces) != 2 || len(sp.cutters) != 1 || sp.cutters[0] != 1 {
		t.Fatalf("split record %+v, want 2 pieces cut around rule 1", sp)
	}
	for _, l := range sp.pieces {
		if l.slot >= 6 {
			t.Errorf("piece in main slot %d", l.slot)
		}
	}
	if c != pred || c.Writes != 2+c.Moves || c.Moves > 6 {
		t.Errorf("cost %+v (predicted %+v): want 2 writes plus at most a shadow's worth of moves", c, pred)
	}
	want := map[uint32]uint64{0: 1, 1: 10, 2: 10, 3: 10, 4: 0}
	for last, id := range want {
		_, got, ok := tc.Lookup(srcKey(last))
		if (id == 0) == ok || (ok && got.ID != id) {
			t.Errorf("10.0.0.%d: got %d (%v), want %d", last, got.ID, ok, id)
		}
		if ok && got.ID == 10 && got.Rule != e.Rule {
			t.Errorf("a piece answered with its own rule, not the entry's")
		}
	}
	if n := len(tc.Entries()); n != tc.Len() || tc.Len() != 4 {
		t.Errorf("Entries lists %d, Len %d, want 4 each", n, tc.Len())
	}

	// Deleting the cutter first migrates e whole into main: 10.0.0.0 is
	// then e's, not a miss.
	dc, err := tc.Delete(1)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, tc)
	if _, ok := tc.split[e.ID]; ok || dc.Writes < 1 || dc.Invalidates != 3 {
		t.Errorf("after deleting the cutter: split %v, cost %+v (want e written whole, 2 pieces and rule 1 invalidated)", ok, dc)
	}
	if _, got, ok := tc.Lookup(srcKey(0)); !ok || got.ID != 10 {
		t.Errorf("10.0.0.0 after the delete: %d (%v), want 10", got.ID, ok)
	}
}

func TestHermesMigratesSplitRuleWhole(t *testing.T) {
	tc := hermesWithMain(t)
	e := Entry{Rule: srcRule(0, 30), Priority: 5, ID: 10}
	if _, err := tc.Insert(e); err != nil {
		t.Fatal(err)
	}
	if _, ok := tc.split[e.ID]; !ok {
		t.Fatal("e was not split")
	}
	// Two more shadow rules make the shadow half full (pending).
	for i, id := range []uint64{11, 12} {
		if _, err := tc.Insert(Entry{Rule: srcRule(uint32(40+i), 32), Priority: 1, ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	for tc.Pending() {
		if _, err := tc.Background(); err != nil {
			t.Fatal(err)
		}
		checkInvariants(t, tc)
	}
	if _, ok := tc.split[e.ID]; ok {
		t.Fatal("split rule still in pieces after the migrations")
	}
	if s, _ := tc.SlotOf(e.ID); s < 6 || tc.slots[s].e.Rule != e.Rule {
		t.Fatalf("e in slot %d with rule %v, want its whole rule in main", s, tc.slots[s].e.Rule)
	}
	for last, id := range map[uint32]uint64{0: 1, 3: 10} {
		if _, got, ok := tc.Lookup(srcKey(last)); !ok || got.ID != id {
			t.Errorf("10.0.0.%d: %d (%v), want %d", last, got.ID, ok, id)
		}
	}
	if _, err := tc.Delete(e.ID); err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, tc)
}

// TestHermesSplitDeleteFreesEveryPiece: deleting a split rule invalidates
// all its pieces.
func TestHermesSplitDeleteFreesEveryPiece(t *testing.T) {
	tc := hermesWithMain(t)
	e := Entry{Rule: srcRule(0, 30), Priority: 5, ID: 10}
	if _, err := tc.Insert(e); err != nil {
		t.Fatal(err)
	}
	if _, ok := tc.split[e.ID]; !ok {
		t.Fatal("e was not split")
	}
	c, err := tc.Delete(e.ID)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, tc)
	if c.Invalidates != 2 || tc.Len() != 3 || len(tc.valid) != 3 || tc.split[e.ID] != nil {
		t.Errorf("cost %+v, %d entries in %d slots; want 2 invalidates, 3 in 3", c, tc.Len(), len(tc.valid))
	}
}

// TestHermesPrefersCheaperMainInsert: with a hole at e's rank in main, the
// main insert (one write) is cheaper than the two pieces, so e goes there.
func TestHermesPrefersCheaperMainInsert(t *testing.T) {
	tc := mustNew(t, 20, Hermes(0.3))
	for _, e := range []Entry{
		{Rule: srcRule(0, 32), Priority: 10, ID: 1},
		{Rule: srcRule(32, 32), Priority: 20, ID: 2},
		{Rule: srcRule(33, 32), Priority: 30, ID: 3},
	} {
		if _, err := tc.Insert(e); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tc.Background(); err != nil {
		t.Fatal(err)
	}
	e := Entry{Rule: srcRule(0, 30), Priority: 5, ID: 10}
	c, err := tc.Insert(e)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, tc)
	if s, _ := tc.SlotOf(e.ID); tc.split[e.ID] != nil || s < 6 || c.Writes != 1 || c.Moves != 0 {
		t.Errorf("e in slot %d (split %v) at cost %+v, want one write into main", s, tc.split[e.ID] != nil, c)
	}
}
