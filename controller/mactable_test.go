package controller

import (
	"math/rand/v2"
	"testing"
)

// TestMACTableAgreesWithMap: random learning and moves, checked against a
// Go map, across several growths.
func TestMACTableAgreesWithMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	tab := newMACTable()
	ref := map[uint64]uint16{}
	for i := range 20000 {
		k := rng.Uint64() & (1<<48 - 1)
		if i%3 == 0 && len(ref) > 0 {
			k = uint64(i) % 5000 // revisit small keys: updates
		}
		p := uint16(rng.Uint32())
		tab.Set(k, p)
		ref[k] = p
		q := rng.Uint64() & (1<<48 - 1)
		if i%2 == 0 {
			q = uint64(i) % 5000
		}
		got, ok := tab.Get(q)
		want, wok := ref[q]
		if ok != wok || got != want {
			t.Fatalf("Get(%x) = %d, %v; map says %d, %v", q, got, ok, want, wok)
		}
	}
	if tab.Len() != len(ref) {
		t.Fatalf("Len %d, map %d", tab.Len(), len(ref))
	}
	for k, want := range ref {
		if got, ok := tab.Get(k); !ok || got != want {
			t.Fatalf("Get(%x) = %d, %v; want %d", k, got, ok, want)
		}
	}
	// The all-ones MAC key (broadcast) is storable too.
	tab.Set(1<<48-1, 7)
	if p, ok := tab.Get(1<<48 - 1); !ok || p != 7 {
		t.Fatal("broadcast key lost")
	}
}
