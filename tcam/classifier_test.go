package tcam

import (
	"math/rand/v2"
	"testing"
)

func TestClassifierBasics(t *testing.T) {
	ipDst := func(addr uint32, prefix int) Ternary {
		m := fieldMask(Fields{DlType: 0xffff, NwDst: ^uint32(0) << (32 - prefix)})
		v := Fields{DlType: 0x0800, NwDst: addr}.Key()
		return Ternary{Value: v.Masked(&m), Mask: m}
	}
	pkt := Fields{DlType: 0x0800, NwDst: 0x0a000105}.Key()
	tests := []struct {
		name    string
		tie     TieBreak
		entries []Entry
		deletes []uint64
		wantID  uint64
		wantOK  bool
	}{
		{"empty", LowerIDWins, nil, nil, 0, false},
		{"higher priority wins", LowerIDWins, []Entry{
			{Rule: ipDst(0x0a000100, 24), Priority: 5, ID: 1},
			{Rule: ipDst(0x0a000105, 32), Priority: 9, ID: 2},
			{Rule: ipDst(0x0a000000, 16), Priority: 7, ID: 3},
		}, nil, 2, true},
		{"tie lower id", LowerIDWins, []Entry{
			{Rule: ipDst(0x0a000100, 24), Priority: 5, ID: 8},
			{Rule: ipDst(0x0a000000, 16), Priority: 5, ID: 3},
		}, nil, 3, true},
		{"tie higher id", HigherIDWins, []Entry{
			{Rule: ipDst(0x0a000100, 24), Priority: 5, ID: 8},
			{Rule: ipDst(0x0a000000, 16), Priority: 5, ID: 3},
		}, nil, 8, true},
		{"same bucket", LowerIDWins, []Entry{
			{Rule: ipDst(0x0a000100, 24), Priority: 1, ID: 1},
			{Rule: ipDst(0x0a000100, 24), Priority: 4, ID: 2},
			{Rule: ipDst(0x0a000100, 24), Priority: 2, ID: 3},
		}, nil, 2, true},
		{"delete best falls back", LowerIDWins, []Entry{
			{Rule: ipDst(0x0a000100, 24), Priority: 1, ID: 1},
			{Rule: ipDst(0x0a000100, 24), Priority: 4, ID: 2},
			{Rule: ipDst(0x0a000000, 8), Priority: 3, ID: 3},
		}, []uint64{2}, 3, true},
		{"delete all", LowerIDWins, []Entry{
			{Rule: ipDst(0x0a000100, 24), Priority: 1, ID: 1},
		}, []uint64{1}, 0, false},
		{"no match", LowerIDWins, []Entry{
			{Rule: ipDst(0x0b000000, 8), Priority: 1, ID: 1},
		}, nil, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewClassifier(tt.tie, 16)
			for _, e := range tt.entries {
				if err := c.Insert(e); err != nil {
					t.Fatal(err)
				}
			}
			// Look up once before the deletes so a stale cache would show.
			c.Lookup(pkt)
			for _, id := range tt.deletes {
				if _, err := c.Delete(id); err != nil {
					t.Fatal(err)
				}
			}
			for range 2 { // second time from the cache
				e, ok := c.Lookup(pkt)
				if ok != tt.wantOK || e.ID != tt.wantID {
					t.Fatalf("Lookup = id %d (%v), want id %d (%v)", e.ID, ok, tt.wantID, tt.wantOK)
				}
			}
			wantHits := uint64(2) // both final lookups, or only the second after a delete
			if len(tt.deletes) > 0 {
				wantHits = 1
			}
			if st := c.Stats(); st.CacheHits != wantHits || st.Lookups != 3 {
				t.Errorf("stats %+v, want 3 lookups with %d cache hits", st, wantHits)
			}
		})
	}
}

func TestClassifierErrors(t *testing.T) {
	c := NewClassifier(LowerIDWins, 0)
	if err := c.Insert(Entry{ID: 1}); err != nil {
		t.Fatal(err)
	}
	if err := c.Insert(Entry{ID: 1}); !isErr(err, ErrDuplicateID) {
		t.Errorf("duplicate insert: %v", err)
	}
	if _, err := c.Delete(2); !isErr(err, ErrNotFound) {
		t.Errorf("missing delete: %v", err)
	}
}

// TestClassifierAgreesOnLargeTable compares the classifier with the naive
// reference over the 4 000-rule benchmark table, cached and not.
func TestClassifierAgreesOnLargeTable(t *testing.T) {
	if testing.Short() {
		t.Skip("long single-goroutine simulation: the race phase (-short) leaves it to the integration phase")
	}
	rng := rand.New(rand.NewPCG(5, 5))
	entries := mixedRules(rng, 4000)
	ref := newReference(LowerIDWins)
	c := NewClassifier(LowerIDWins, 1024)
	for _, e := range entries {
		ref.entries[e.ID] = e
		if err := c.Insert(e); err != nil {
			t.Fatal(err)
		}
	}
	keys := mixedPackets(rng, entries, 2000)
	for pass := range 2 {
		for _, k := range keys {
			want, wantOK := ref.lookup(k)
			got, ok := c.Lookup(k)
			if ok != wantOK || got.ID != want.ID {
				t.Fatalf("pass %d key %x: classifier %d (%v), reference %d (%v)", pass, k, got.ID, ok, want.ID, wantOK)
			}
		}
	}
	if c.Stats().CacheHits == 0 {
		t.Error("second pass never hit the cache")
	}
}
