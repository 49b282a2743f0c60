package tcam

import (
	"math/rand/v2"
	"testing"
)

func TestMirrorAnswersLikeTCAMAndCharges(t *testing.T) {
	for _, l := range []Layout{HighestFirst(), LowestFirst()} {
		t.Run(l.Name(), func(t *testing.T) {
			u := universe{rand.New(rand.NewPCG(9, 9))}
			m, err := NewMirror(mustNew(t, 20, l), 32)
			if err != nil {
				t.Fatal(err)
			}
			shadow := mustNew(t, 20, l) // same operations, answered by scanning
			for i := range 25 {
				e := Entry{Rule: u.randomRule(), Priority: uint32(u.rng.IntN(4)), ID: uint64(100 - i)}
				c1, err1 := m.Insert(e)
				c2, err2 := shadow.Insert(e)
				if (err1 == nil) != (err2 == nil) || c1 != c2 {
					t.Fatalf("insert %d: mirror %+v %v, plain %+v %v", i, c1, err1, c2, err2)
				}
				if i%5 == 4 {
					id := uint64(100 - i + 2)
					if _, err := m.Delete(id); err != nil {
						t.Fatal(err)
					}
					if _, err := shadow.Delete(id); err != nil {
						t.Fatal(err)
					}
				}
			}
			if m.Classifier().Len() != m.TCAM().Len() {
				t.Fatalf("classifier %d entries, tcam %d", m.Classifier().Len(), m.TCAM().Len())
			}
			const n = 200
			before := m.TCAM().Total().Lookups
			for range n {
				k := u.fields().Key()
				got, ok := m.Lookup(k)
				_, want, wantOK := shadow.Lookup(k)
				if ok != wantOK || got.ID != want.ID {
					t.Fatalf("key %x: mirror %d (%v), tcam %d (%v)", k, got.ID, ok, want.ID, wantOK)
				}
			}
			if got := m.TCAM().Total().Lookups - before; got != n {
				t.Errorf("%d lookups charged, want %d", got, n)
			}
		})
	}
}

func TestNewMirrorRejectsNonEmptyTCAM(t *testing.T) {
	tc := mustNew(t, 2, HighestFirst())
	if _, err := tc.Insert(Entry{ID: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := NewMirror(tc, 0); err == nil {
		t.Error("non-empty TCAM accepted")
	}
}
