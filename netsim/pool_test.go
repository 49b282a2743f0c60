package netsim

import "testing"

type poolPkt struct {
	p   Packet
	tag int
}

// The pool reuses last-in first-out, makes descriptors only when empty,
// runs Init once on each one it makes, grows by slabs that double, and a
// warm Get/Put cycle allocates nothing.
func TestPool(t *testing.T) {
	inits := 0
	pool := Pool[poolPkt]{Init: func(w *poolPkt) {
		inits++
		w.tag = inits
		w.p.Meta = w
	}}
	a, b := pool.Get(), pool.Get()
	if a == b || a.tag != 1 || b.tag != 2 || a.p.Meta != a {
		t.Fatalf("two fresh descriptors: %+v %+v", a, b)
	}
	if pool.Made() != minSlab || inits != minSlab || pool.Free() != minSlab-2 {
		t.Fatalf("first slab: made %d, inits %d, free %d; want %d, %d, %d", pool.Made(), inits, pool.Free(), minSlab, minSlab, minSlab-2)
	}
	pool.Put(a)
	pool.Put(b)
	if got := pool.Get(); got != b {
		t.Fatalf("Get after Put(a), Put(b) = tag %d, want b (LIFO)", got.tag)
	}
	if got := pool.Get(); got != a {
		t.Fatalf("second Get = tag %d, want a", got.tag)
	}
	held := map[*poolPkt]bool{a: true, b: true}
	for range minSlab - 2 {
		held[pool.Get()] = true
	}
	if len(held) != minSlab || pool.Free() != 0 || inits != minSlab {
		t.Fatalf("the first slab handed out %d distinct descriptors (free %d, inits %d), want %d", len(held), pool.Free(), inits, minSlab)
	}
	c := pool.Get() // the second slab, as large as the first
	if held[c] || c.tag != minSlab+1 || c.p.Meta != c || pool.Made() != 2*minSlab || inits != 2*minSlab {
		t.Fatalf("second slab: tag %d, made %d, inits %d; want %d, %d, %d", c.tag, pool.Made(), inits, minSlab+1, 2*minSlab, 2*minSlab)
	}
	if allocs := testing.AllocsPerRun(100, func() { pool.Put(pool.Get()) }); allocs != 0 {
		t.Errorf("a warm Get/Put allocates %.1f times", allocs)
	}
	var plain Pool[Packet] // no Init: zero descriptors
	if p := plain.Get(); p == nil || plain.Made() != minSlab || p.Meta != nil {
		t.Fatal("a Pool without Init made nothing, or not zero")
	}
}

// A slab never passes maxSlabBytes, however large the pool grows.
func TestPoolSlabBound(t *testing.T) {
	var pool Pool[[64 << 10]byte]
	for range 200 {
		pool.Get()
	}
	if max := maxSlabBytes / (64 << 10); pool.Made() > 200+max {
		t.Fatalf("made %d for 200 Gets, want at most %d more (slabs of at most %d)", pool.Made(), max, max)
	}
}
